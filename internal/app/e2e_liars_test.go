package app_test

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/app"
	"transcriber/internal/job"
	"transcriber/internal/media/mediatest"
	"transcriber/internal/media/oggopus"
	"transcriber/internal/spend"
)

// Files whose headers understate their length, through the whole service
// with real ffmpeg under a month of 700 s: two MP3s that say 5 s and hold
// 5 minutes each, a Matroska file that says 4 minutes and holds 10 (cut
// into pieces), and an Ogg file that says 5 s and holds 2 minutes. What
// reaches the recognizer, counted packet by packet in the objects it was
// given, never passes the month, and each job shows the audio it sent.
func TestFilesThatLieAboutTheirLengthStayWithinTheLimits(t *testing.T) {
	st := newStack(t, func(c *app.Config) {
		c.Limits.AudioPerMonth = 700 * time.Second // the jobs here have no payer: the installation's month is their limit
		c.Pipeline.Limits = c.Limits
		c.Media.ParallelFrom, c.Media.PieceLength = time.Minute, 2*time.Minute
	})
	dir := t.TempDir()
	mp3a, err := mediatest.LyingMP3("ffmpeg", dir, "a.mp3", 300)
	require.NoError(t, err)
	mp3b, err := mediatest.LyingMP3("ffmpeg", dir, "b.mp3", 300)
	require.NoError(t, err)
	mkv, err := mediatest.LyingMatroska("ffmpeg", dir, "c.mkv", 600, 240)
	require.NoError(t, err)
	ogg, err := mediatest.LyingOgg(dir, "d.ogg", 120_000, 5_000)
	require.NoError(t, err)

	var jobs []job.Job
	for _, l := range []mediatest.Liar{mp3a, mp3b, mkv, ogg} {
		j, ev := st.upload(l.Path)
		st.ingest(ev)
		jobs = append(jobs, st.job(j.ID))
	}

	var sent int64
	billed := map[string]int64{} // by job: what SpeechKit bills for what it was sent
	for _, r := range st.sk.Requests() {
		u, err := url.Parse(r.GetUri())
		require.NoError(t, err)
		key := strings.TrimPrefix(u.Path, "/"+st.s3.Bucket+"/")
		m := &oggopus.Meter{}
		_, err = m.Write(st.s3.Object(t, key))
		require.NoError(t, err)
		require.NoError(t, m.Close())
		sent += m.Ms()
		id := strings.Split(strings.TrimPrefix(key, "audio/"), "/")[0]
		billed[id] += spend.BilledSeconds(m.Ms(), spend.SubmittedChannels)
	}
	require.LessOrEqual(t, sent, int64(700_000), "the recognizer got %d ms of audio under a month of 700 s", sent)
	for _, j := range jobs {
		require.LessOrEqual(t, billed[j.ID], j.ReservedSeconds, "job %s: what was sent is billed within its reservation", j.Filename)
	}

	var reserved int64
	for _, j := range jobs {
		reserved += j.ReservedSeconds
		if j.State == job.Failed {
			require.Contains(t, []string{spend.CodeQuotaExceeded, "audio_over_reservation"}, j.ErrorCode)
			continue
		}
		require.Equal(t, job.AudioMs(j.Segments), j.DurationMs, "job %s shows the audio it sent", j.Filename)
	}
	require.Equal(t, job.Transcribe, jobs[0].State, "the first MP3's real 5 minutes fit")
	require.InDelta(t, 300_000, jobs[0].DurationMs, 2_000, "it shows what it holds, not the 5 s it claims")
	require.Equal(t, job.Failed, jobs[2].State, "10 minutes no longer fit")
	require.LessOrEqual(t, reserved, int64(700))
}
