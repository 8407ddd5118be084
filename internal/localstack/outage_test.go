package localstack

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	stt "github.com/yandex-cloud/go-genproto/yandex/cloud/ai/stt/v3"

	"transcriber/internal/clock"
	"transcriber/internal/job"
	"transcriber/internal/speechkit/speechkittest"
)

// client is a caller of a running stack's API, as a user's script is.
type client struct {
	t  *testing.T
	st stack
}

type view struct {
	ID     string `json:"id"`
	State  string `json:"state"`
	Upload struct {
		URL     string            `json:"url"`
		Headers map[string]string `json:"headers"`
	} `json:"upload"`
	Error *struct{ Code, Message string } `json:"error"`
}

func (c client) call(method, path, body string, into any) int {
	req, err := http.NewRequest(method, c.st.api+path, strings.NewReader(body))
	require.NoError(c.t, err)
	req.Header.Set("Authorization", "Bearer "+c.st.token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(c.t, err)
	defer resp.Body.Close()
	if into != nil {
		require.NoError(c.t, json.NewDecoder(resp.Body).Decode(into))
	}
	return resp.StatusCode
}

// create makes a job for body, not uploaded yet.
func (c client) create(body []byte) view {
	var j view
	require.Equal(c.t, http.StatusCreated, c.call(http.MethodPost, "/v1/jobs",
		fmt.Sprintf(`{"filename":"note.ogg","size_bytes":%d}`, len(body)), &j))
	return j
}

// upload PUTs body to j's upload URL, as curl --upload-file does.
func (c client) upload(j view, body []byte) {
	req, err := http.NewRequest(http.MethodPut, j.Upload.URL, strings.NewReader(string(body)))
	if err != nil {
		c.t.Error(err)
		return
	}
	for k, v := range j.Upload.Headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Error(err)
		return
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		c.t.Errorf("PUT: %d", resp.StatusCode)
	}
}

func (c client) get(id string) view {
	var j view
	require.Equal(c.t, http.StatusOK, c.call(http.MethodGet, "/v1/jobs/"+id, "", &j))
	return j
}

// waitFor waits until job id is in one of states, for at most within of
// real time; it fails at once if the job ends another way.
func (c client) waitFor(id string, within time.Duration, states ...string) view {
	c.t.Helper()
	clk := clock.System()
	deadline := clk.Now().Add(within)
	for {
		j := c.get(id)
		for _, s := range states {
			if j.State == s {
				return j
			}
		}
		require.NotContains(c.t, []string{"done", "failed", "dead"}, j.State, "job %s ended %s: %+v", id, j.State, j.Error)
		require.True(c.t, clk.Now().Before(deadline), "job %s is still %s after %s", id, j.State, within)
		time.Sleep(20 * time.Millisecond)
	}
}

func voiceNote(t *testing.T) []byte {
	t.Helper()
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		t.Skip("ffmpeg is needed on PATH (apt-get install ffmpeg)")
	}
	f := filepath.Join(t.TempDir(), "note.ogg")
	out, err := exec.Command("ffmpeg", "-nostdin", "-loglevel", "error", "-f", "lavfi", "-i", "sine=duration=3",
		"-c:a", "libopus", f).CombinedOutput()
	require.NoError(t, err, "%s", out)
	body, err := os.ReadFile(f)
	require.NoError(t, err)
	return body
}

// A burst of 50 uploads: every job says created (or later) within 10 s of
// its PUT, even while every ingest worker is stuck in a submission that
// does not return. Then they are all recognized.
func TestABurstOfUploadsIsAcceptedAtOnce(t *testing.T) {
	note := voiceNote(t)
	sk := speechkittest.Start(t)
	release := make(chan struct{})
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	t.Cleanup(unblock)
	sk.Script(func(*stt.RecognizeFileRequest) speechkittest.Plan {
		<-release
		return speechkittest.DefaultPlan()
	})
	st := startStackWith(t, func(c *Config) {
		c.App.SpeechKit = sk.Config()
		c.App.SyncMaxDuration = 0 // every recording goes to RecognizeFile, which blocks
		c.PollInterval = 200 * time.Millisecond
	})
	c := client{t: t, st: st}
	jobs := make([]view, 50)
	for i := range jobs {
		jobs[i] = c.create(note)
	}
	put := make([]time.Time, len(jobs))
	var wg sync.WaitGroup
	for i := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.upload(jobs[i], note)
			put[i] = clock.System().Now()
		}()
	}
	wg.Wait()
	for i, j := range jobs {
		within := 10*time.Second - clock.System().Now().Sub(put[i])
		c.waitFor(j.ID, max(within, 0), "created", "converted", "transcribe")
	}
	unblock()
	for _, j := range jobs {
		c.waitFor(j.ID, time.Minute, "done")
	}
}

// SpeechKit answering UNAVAILABLE to every call for a while costs no job
// on the local stack: the jobs in flight — two waiting for their
// recognitions, three uploaded during the outage — all end done, none
// dead. The numbers are scaled down: attempts that would all be spent
// within 0.3 s, a breaker probing from 0.1 s, an outage of 3 s.
func TestAnOutageOfSpeechKitCostsNoJobOnTheLocalStack(t *testing.T) {
	note := voiceNote(t)
	sk := speechkittest.Start(t)
	sk.Script(func(*stt.RecognizeFileRequest) speechkittest.Plan {
		p := speechkittest.DefaultPlan()
		p.PendingChecks = 1 << 30 // still running when the outage starts
		return p
	})
	st := startStackWith(t, func(c *Config) {
		c.App.SpeechKit = sk.Config()
		c.App.SyncMaxDuration = 0
		c.App.Pipeline.InlineCheckFor = 100 * time.Millisecond
		c.App.Pipeline.MinCheckPause = 50 * time.Millisecond
		c.App.Pipeline.Policy = job.Policy{MaxAttempts: 5, BasePause: 20 * time.Millisecond, MaxPause: 200 * time.Millisecond}
		c.App.Pipeline.OutageProbeFirst = 100 * time.Millisecond
		c.App.Pipeline.OutageProbeMax = 400 * time.Millisecond
		c.PollInterval = 50 * time.Millisecond
	})
	c := client{t: t, st: st}
	var ids []string
	for range 2 {
		j := c.create(note)
		c.upload(j, note)
		c.waitFor(j.ID, 30*time.Second, "transcribe")
		ids = append(ids, j.ID)
	}

	sk.Down(func() bool { return true })
	sk.FinishAll()
	sk.Script(func(*stt.RecognizeFileRequest) speechkittest.Plan { return speechkittest.DefaultPlan() })
	for range 3 {
		j := c.create(note)
		c.upload(j, note)
		ids = append(ids, j.ID)
	}
	time.Sleep(3 * time.Second) // the outage: ten times what the attempts last
	for _, id := range ids {
		j := c.get(id)
		require.NotContains(t, []string{"done", "failed", "dead"}, j.State, "job %s during the outage: %+v", id, j.Error)
	}
	sk.Down(nil)
	for _, id := range ids {
		c.waitFor(id, 30*time.Second, "done")
	}
}
