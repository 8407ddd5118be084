package localstack

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/clock"
	"transcriber/internal/speechkit"
	"transcriber/internal/speechkit/speechkittest"
)

// Black-box, as a client does it: a fast job of a 4-second voice note on
// the local stack, with a stand-in for SpeechKit at both endpoints, is
// done from one synchronous request and says so; nothing is submitted
// asynchronously.
func TestAFastJobIsRecognizedSynchronouslyOnTheLocalStack(t *testing.T) {
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		t.Skip("ffmpeg is needed on PATH (apt-get install ffmpeg)")
	}
	voice := filepath.Join(t.TempDir(), "voice.ogg")
	out, err := exec.Command("ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-f", "lavfi",
		"-i", "sine=frequency=440:duration=4:sample_rate=48000", "-c:a", "libopus", "-b:a", "24k", voice).CombinedOutput()
	require.NoError(t, err, "%s", out)
	body, err := os.ReadFile(voice)
	require.NoError(t, err)

	sk := speechkittest.Start(t)
	st := startStackWith(t, func(c *Config) {
		c.App.SpeechKit = sk.Config()
		c.App.SyncMaxDuration = speechkit.MaxSyncDuration
		c.PollInterval = time.Second
	})
	type view struct {
		ID          string `json:"id"`
		State       string `json:"state"`
		Recognition string `json:"recognition"`
		Upload      struct {
			URL     string            `json:"url"`
			Headers map[string]string `json:"headers"`
		} `json:"upload"`
	}
	api := func(method, path, body string, into any) int { return st.call(t, method, path, body, into) }
	var j view
	require.Equal(t, http.StatusCreated, api(http.MethodPost, "/v1/jobs",
		fmt.Sprintf(`{"filename":"voice.ogg","size_bytes":%d,"priority":"fast"}`, len(body)), &j))
	req, err := http.NewRequest(http.MethodPut, j.Upload.URL, strings.NewReader(string(body)))
	require.NoError(t, err)
	for k, v := range j.Upload.Headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	clk := clock.System()
	deadline := clk.Now().Add(time.Minute)
	var v view
	for v.State != "done" {
		require.True(t, clk.Now().Before(deadline), "the job is still %s", v.State)
		time.Sleep(100 * time.Millisecond)
		require.Equal(t, http.StatusOK, api(http.MethodGet, "/v1/jobs/"+j.ID, "", &v))
		require.NotContains(t, []string{"failed", "dead"}, v.State)
	}
	require.Equal(t, "sync", v.Recognition)
	require.Equal(t, 1, sk.SyncCallCount())
	require.Zero(t, sk.RecognizeCalls(), "nothing submitted asynchronously")
}
