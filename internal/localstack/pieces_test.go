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
	"transcriber/internal/speechkit/speechkittest"
	"transcriber/internal/transcript"
)

// The rhythm of the test's hour: 6.2 s of tone, then 0.8 s of silence,
// every 7 s.
const (
	beatMs    = 7000
	silenceMs = 800
)

// An hour-long recording uploaded to the local stack, as a client does,
// comes back as one transcript from several pieces recognized apart: 12
// pieces of about 5 minutes, each cut inside a silence, every utterance
// where its piece starts. The recognizer is SpeechKit's fake, which says
// "привет мир" at the start of every file it is given.
func TestAnHourIsRecognizedInPiecesAndComesBackAsOneTranscript(t *testing.T) {
	if testing.Short() {
		t.Skip("converts an hour of audio (about 20 s)")
	}
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		t.Skip("ffmpeg is needed on PATH (apt-get install ffmpeg)")
	}
	// WAV: made in seconds, where encoding an hour would take half a minute.
	file := filepath.Join(t.TempDir(), "hour.wav")
	tone := fmt.Sprintf("aevalsrc=exprs='0.4*sin(2*PI*300*t)*lt(mod(t\\,%g)\\,%g)':s=8000:d=3600",
		float64(beatMs)/1000, float64(beatMs-silenceMs)/1000)
	out, err := exec.Command("ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i", tone,
		"-c:a", "pcm_s16le", file).CombinedOutput()
	require.NoError(t, err, "%s", out)
	body, err := os.ReadFile(file)
	require.NoError(t, err)

	sk := speechkittest.Start(t)
	st := startStackWith(t, func(c *Config) {
		c.App.SpeechKit = sk.Config()
		c.PollInterval = time.Second
	})

	api := func(method, path, body string, into any) int { return st.call(t, method, path, body, into) }
	var j struct {
		ID     string `json:"id"`
		Upload struct {
			URL     string            `json:"url"`
			Headers map[string]string `json:"headers"`
		} `json:"upload"`
	}
	require.Equal(t, http.StatusCreated, api(http.MethodPost, "/v1/jobs",
		fmt.Sprintf(`{"filename":"hour.wav","size_bytes":%d,"language":"ru-RU"}`, len(body)), &j))
	req, err := http.NewRequest(http.MethodPut, j.Upload.URL, strings.NewReader(string(body)))
	require.NoError(t, err)
	for k, v := range j.Upload.Headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	var view struct {
		State      string `json:"state"`
		DurationMs int64  `json:"duration_ms"`
		Error      *struct{ Code, Message string }
	}
	clk := clock.System()
	deadline := clk.Now().Add(3 * time.Minute)
	for view.State != "done" {
		require.True(t, clk.Now().Before(deadline), "the job is still %s", view.State)
		time.Sleep(500 * time.Millisecond)
		require.Equal(t, http.StatusOK, api(http.MethodGet, "/v1/jobs/"+j.ID, "", &view))
		require.NotEqual(t, "failed", view.State, "%+v", view.Error)
	}
	require.Equal(t, 12, sk.RecognizeCalls(), "an hour goes as 12 pieces")

	var tr transcript.Transcript
	require.Equal(t, http.StatusOK, api(http.MethodGet, "/v1/jobs/"+j.ID+"/transcript?format=json", "", &tr))
	require.InDelta(t, 3_600_000, tr.DurationMs, 100)
	require.Len(t, tr.Utterances, 12, "one utterance from each piece, in one transcript")
	const piece = 300_000
	for i, u := range tr.Utterances {
		// The piece starts where it was cut: near its planned place, inside
		// one of the recording's silences.
		require.InDelta(t, int64(i)*piece, u.StartMs, 60_000, "piece %d starts near %d min", i, i*5)
		if i > 0 {
			inBeat := u.StartMs % beatMs
			require.True(t, inBeat >= beatMs-silenceMs && inBeat < beatMs,
				"piece %d starts at %d ms, %d ms into a 7 s beat: inside the tone, not its silence", i, u.StartMs, inBeat)
		}
		require.Equal(t, "Привет мир.", u.Normal)
		require.Equal(t, u.StartMs+120, u.Words[0].StartMs, "its words are shifted with it")
		require.Equal(t, u.StartMs+1200, u.EndMs)
	}
}
