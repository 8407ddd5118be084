package app_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"transcriber/internal/job"
	"transcriber/internal/media/ffmpeg/ffmpegtest"
)

// Uploads that name other inputs (playlists, manifests, an ffconcat list
// naming another job's upload, an SDP description) or are not audio at all
// (images, an archive, text), each sent as an API client sends a file:
// every job fails at its first attempt with a permanent code (never
// retried, never dead), and nothing the files name is connected to.
func TestHostileUploadsFailAtOnceAndFetchNothing(t *testing.T) {
	st := newStack(t)
	c := st.client()
	listener := ffmpegtest.Listen(t)

	// Another owner's recording, which a relative name in an ffconcat list
	// would reach: it sits next to the list in the bucket.
	other, otherEvent := st.upload(writeFile(t, "other.wav", ffmpegtest.WAVSilence(16000)))
	st.ingest(otherEvent)
	st.poll()
	require.Equal(t, job.Done, st.job(other.ID).State)
	recognized := st.sk.RecognizeCalls()
	files := append(ffmpegtest.HostileFiles(t, listener.Addr()), ffmpegtest.Hostile{
		Name:  "other-job.ffconcat",
		Body:  []byte("ffconcat version 1.0\nfile " + other.ID + "\n"),
		Codes: []string{ffmpegtest.CodeUnsupported},
	})

	for _, f := range files {
		t.Run(f.Name, func(t *testing.T) {
			var j apiJob
			status, body, _ := c.call(http.MethodPost, "/v1/jobs",
				`{"filename":"`+f.Name+`","size_bytes":`+itoa(len(f.Body))+`}`, &j)
			require.Equal(t, http.StatusCreated, status, body)
			put(t, j, f.Body)
			ev := st.nextEvent()
			st.ingest(ev) // one ingest call: one attempt

			got := st.job(j.ID)
			require.Equal(t, job.Failed, got.State, "failed at the first attempt, not left to retry: %s %s",
				got.ErrorCode, got.ErrorMessage)
			require.Contains(t, f.Codes, got.ErrorCode)
			require.Equal(t, []job.State{job.Failed}, st.ended.of(j.ID), "the owner hears of it once")

			var seen apiJob
			status, body, _ = c.call(http.MethodGet, "/v1/jobs/"+j.ID, "", &seen)
			require.Equal(t, http.StatusOK, status, body)
			require.Equal(t, "failed", seen.State, body)
			require.Equal(t, got.ErrorCode, seen.Error.Code)
			if got.ErrorCode == ffmpegtest.CodeUnsupported {
				require.Contains(t, seen.Error.Message, "accepted: OGG/Opus, MP3, WAV", "the message says what is accepted")
			}

			// No second attempt: the event again, and the timer, leave it.
			st.ingest(ev)
			st.poll()
			require.Equal(t, got, st.job(j.ID))
			require.Equal(t, []job.State{job.Failed}, st.ended.of(j.ID))
		})
	}
	require.Zero(t, listener.Connections(), "no connection to the hosts the files name")
	require.Equal(t, recognized, st.sk.RecognizeCalls(), "nothing more was sent to recognition")
}
