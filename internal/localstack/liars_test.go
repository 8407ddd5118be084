package localstack

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/clock"
	"transcriber/internal/media/mediatest"
	"transcriber/internal/media/oggopus"
	"transcriber/internal/speechkit/speechkittest"
)

// Black-box, as a client does it: under a day of 700 s, two MP3s that say
// 5 s and hold 5 minutes and a Matroska file that says 4 minutes and
// holds 10 are uploaded to the local stack with one token. The audio the
// recognizer is sent (inline here), counted packet by packet, stays
// within the day: the MP3s are recognized for what they hold, the
// Matroska file is refused.
func TestLyingFilesGetNoMoreAudioRecognizedThanTheDayAllows(t *testing.T) {
	if testing.Short() {
		t.Skip("converts 20 minutes of audio")
	}
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		t.Skip("ffmpeg is needed on PATH (apt-get install ffmpeg)")
	}
	dir := t.TempDir()
	mp3a, err := mediatest.LyingMP3("ffmpeg", dir, "a.mp3", 300)
	require.NoError(t, err)
	mp3b, err := mediatest.LyingMP3("ffmpeg", dir, "b.mp3", 300)
	require.NoError(t, err)
	mkv, err := mediatest.LyingMatroska("ffmpeg", dir, "c.mkv", 600, 240)
	require.NoError(t, err)

	sk := speechkittest.Start(t)
	st := startStackWith(t, func(c *Config) {
		c.App.SpeechKit = sk.Config()
		c.PollInterval = time.Second
		c.IngestWorkers = 1 // one at a time: the reservations are made in upload order
		c.App.Limits.AudioPerDay, c.App.Limits.ActiveJobs = 700*time.Second, 0
		c.App.Pipeline.Limits, c.App.API.Limits, c.App.Telegram.Limits = c.App.Limits, c.App.Limits, c.App.Limits
	})
	api := func(method, path, body string, into any) int { return st.call(t, method, path, body, into) }
	type view struct {
		ID         string `json:"id"`
		State      string `json:"state"`
		DurationMs int64  `json:"duration_ms"`
		Error      *struct{ Code, Message string }
		Upload     struct {
			URL     string            `json:"url"`
			Headers map[string]string `json:"headers"`
		} `json:"upload"`
	}
	var ids []string
	for _, l := range []mediatest.Liar{mp3a, mp3b, mkv} {
		body, err := os.ReadFile(l.Path)
		require.NoError(t, err)
		var j view
		require.Equal(t, http.StatusCreated, api(http.MethodPost, "/v1/jobs",
			fmt.Sprintf(`{"filename":%q,"size_bytes":%d}`, l.Name, len(body)), &j))
		req, err := http.NewRequest(http.MethodPut, j.Upload.URL, strings.NewReader(string(body)))
		require.NoError(t, err)
		for k, v := range j.Upload.Headers {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_ = resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		ids = append(ids, j.ID)
	}

	clk := clock.System()
	deadline := clk.Now().Add(3 * time.Minute)
	ended := map[string]view{}
	for len(ended) < len(ids) {
		require.True(t, clk.Now().Before(deadline), "jobs still running: %d of %d ended", len(ended), len(ids))
		time.Sleep(500 * time.Millisecond)
		for _, id := range ids {
			var v view
			require.Equal(t, http.StatusOK, api(http.MethodGet, "/v1/jobs/"+id, "", &v))
			if v.State == "done" || v.State == "failed" || v.State == "dead" {
				ended[id] = v
			}
		}
	}

	var sent int64
	for _, r := range sk.Requests() {
		m := &oggopus.Meter{}
		_, err := m.Write(r.GetContent())
		require.NoError(t, err)
		require.NoError(t, m.Close())
		sent += m.Ms()
	}
	require.LessOrEqual(t, sent, int64(700_000), "the recognizer got %d ms under a day of 700 s", sent)
	require.Equal(t, "done", ended[ids[0]].State, "%+v", ended[ids[0]].Error)
	require.InDelta(t, 300_000, ended[ids[0]].DurationMs, 2_000, "the job shows the 5 minutes it holds, not the 5 s it claims")
	require.Equal(t, "failed", ended[ids[2]].State)
	require.Equal(t, "quota_exceeded", ended[ids[2]].Error.Code)
}
