package app_test

import (
	"bytes"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	stt "github.com/yandex-cloud/go-genproto/yandex/cloud/ai/stt/v3"

	"transcriber/internal/job"
	"transcriber/internal/speechkit/speechkittest"
)

// A presigned PUT stays valid for its whole lifetime, so whoever holds the
// URL can write the upload's key again after the job was accepted. What is
// recognized must be what was accepted: the second file changes nothing.
func TestUploadSwappedAfterAcceptanceIsNotRecognized(t *testing.T) {
	st := newStack(t)
	// The recognition stays pending past the ingest call, so the swap
	// happens while SpeechKit would still be reading the audio by URL.
	st.sk.Script(func(*stt.RecognizeFileRequest) speechkittest.Plan {
		p := speechkittest.DefaultPlan()
		p.PendingChecks = 20
		return p
	})
	a, err := os.ReadFile(fixtures(t)["voice.ogg"])
	require.NoError(t, err)
	// B: the same size, other bytes.
	b := bytes.Clone(a)
	for i := len(b) / 2; i < len(b); i++ {
		b[i] ^= 0x5a
	}

	c := st.client()
	var j apiJob
	status, body, _ := c.call(http.MethodPost, "/v1/jobs", `{"filename":"voice.ogg","size_bytes":`+itoa(len(a))+`}`, &j)
	require.Equal(t, http.StatusCreated, status, body)
	put(t, j, a)
	st.ingest(st.nextEvent())
	got := st.job(j.ID)
	require.Equal(t, job.Transcribe, got.State, "error: %s %s", got.ErrorCode, got.ErrorMessage)
	require.Len(t, got.Segments, 1)
	require.Equal(t, 1, st.sk.RecognizeCalls())

	// The same URL, a second time, after the job was accepted.
	put(t, j, b)
	st.ingest(st.nextEvent())

	reqs := st.sk.Requests()
	require.Len(t, reqs, 1, "the second upload is not submitted")
	u, err := url.Parse(reqs[0].GetUri())
	require.NoError(t, err)
	key := strings.TrimPrefix(u.Path, "/"+st.s3.Bucket+"/")
	require.Equal(t, job.AudioKey(j.ID, 0), key, "SpeechKit reads the audio converted from the accepted copy")
	require.Equal(t, a, st.s3.Object(t, job.AcceptedKey(j.ID)), "the accepted copy is the file that was accepted")

	st.poll()
	for st.job(j.ID).State == job.Transcribe {
		st.poll()
	}
	done := st.job(j.ID)
	require.Equal(t, job.Done, done.State, "error: %s %s", done.ErrorCode, done.ErrorMessage)
	require.Equal(t, 1, st.sk.RecognizeCalls())
}
