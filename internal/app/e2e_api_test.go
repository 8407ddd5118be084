package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/apitoken"
	"transcriber/internal/httpapi/openapitest"
	"transcriber/internal/job"
)

// client is an HTTP client of the API with a token.
type client struct {
	t      *testing.T
	base   string
	secret string
}

// apiServer serves the API over HTTP; each answer it gives is checked
// against the OpenAPI document.
func (st *stack) apiServer() *httptest.Server {
	st.t.Helper()
	srv := httptest.NewServer(openapitest.Handler(st.t, st.app.API))
	st.t.Cleanup(srv.Close)
	return srv
}

func (st *stack) client() *client {
	st.t.Helper()
	srv := st.apiServer()
	tok, secret, err := apitoken.New("e2e", st.clk.Now())
	require.NoError(st.t, err)
	require.NoError(st.t, st.tokens.Create(context.Background(), tok))
	return &client{t: st.t, base: srv.URL, secret: secret}
}

func (c *client) call(method, path, body string, out any) (int, string, http.Header) {
	c.t.Helper()
	req, err := http.NewRequest(method, c.base+path, strings.NewReader(body))
	require.NoError(c.t, err)
	req.Header.Set("Authorization", "Bearer "+c.secret)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(c.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(c.t, err)
	if out != nil && resp.StatusCode < 300 {
		require.NoError(c.t, json.Unmarshal(b, out), "%s", b)
	}
	return resp.StatusCode, string(b), resp.Header
}

type apiJob struct {
	ID     string `json:"id"`
	State  string `json:"state"`
	Upload struct {
		Method  string            `json:"method"`
		URL     string            `json:"url"`
		Headers map[string]string `json:"headers"`
	} `json:"upload"`
	Transcript map[string]string `json:"transcript"`
	Error      *struct{ Code, Message string }
}

// put uploads body as a client would with curl --upload-file.
func put(t *testing.T, j apiJob, body []byte) {
	t.Helper()
	req, err := http.NewRequest(j.Upload.Method, j.Upload.URL, bytes.NewReader(body))
	require.NoError(t, err)
	for k, v := range j.Upload.Headers {
		req.Header.Set(k, v)
	}
	req.ContentLength = int64(len(body))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
}

func (st *stack) nextEvent() []byte {
	select {
	case ev := <-st.events:
		return ev
	case <-time.After(5 * time.Second):
		st.t.Fatal("no ObjectCreate event")
		return nil
	}
}

func TestAPIClientUploadsAndGetsEveryFormat(t *testing.T) {
	st := newStack(t)
	c := st.client()
	audio, err := os.ReadFile(fixtures(t)["clip.mp4"])
	require.NoError(t, err)

	var j apiJob
	status, body, _ := c.call(http.MethodPost, "/v1/jobs",
		`{"filename":"clip.mp4","size_bytes":`+itoa(len(audio))+`,"content_type":"video/mp4"}`, &j)
	require.Equal(t, http.StatusCreated, status, body)
	put(t, j, audio)
	st.ingest(st.nextEvent())
	st.poll()

	var got apiJob
	status, body, _ = c.call(http.MethodGet, "/v1/jobs/"+j.ID, "", &got)
	require.Equal(t, http.StatusOK, status, body)
	require.Equal(t, "done", got.State, body)
	require.Len(t, got.Transcript, 4)
	wantType := map[string]string{"txt": "text/plain", "srt": "application/x-subrip", "vtt": "text/vtt", "json": "application/json"}
	for f, link := range got.Transcript {
		status, body, hdr := c.call(http.MethodGet, link, "", nil)
		require.Equal(t, http.StatusOK, status, "%s: %s", f, body)
		require.True(t, strings.HasPrefix(hdr.Get("Content-Type"), wantType[f]), "%s: %s", f, hdr.Get("Content-Type"))
		require.Contains(t, body, "ривет", f)
	}

	status, body, _ = c.call(http.MethodDelete, "/v1/jobs/"+j.ID, "", nil)
	require.Equal(t, http.StatusOK, status, body)
	require.False(t, st.s3.Has(job.SourceKey(j.ID)), "the source is gone")
	require.False(t, st.s3.Has(job.ResultKey(j.ID)), "the transcript is gone")
	require.False(t, st.s3.Has(job.AudioKey(j.ID, 0)), "the converted audio is gone")
	status, _, _ = c.call(http.MethodGet, "/v1/jobs/"+j.ID+"/transcript", "", nil)
	require.Equal(t, http.StatusGone, status)
}

// The in-process S3 server checks no signatures, so a PUT of another size
// lands; the pipeline still refuses to transcribe it. (Object Storage itself
// refuses the PUT, since the URL signs the size.)
func TestWrongSizeUploadNeverBecomesATranscript(t *testing.T) {
	st := newStack(t)
	c := st.client()
	audio, err := os.ReadFile(fixtures(t)["voice.ogg"])
	require.NoError(t, err)
	var j apiJob
	status, body, _ := c.call(http.MethodPost, "/v1/jobs", `{"filename":"voice.ogg","size_bytes":`+itoa(len(audio)+1)+`}`, &j)
	require.Equal(t, http.StatusCreated, status, body)
	j.Upload.Headers = nil // send the real length, not the signed one
	put(t, j, audio)
	st.ingest(st.nextEvent())

	var got apiJob
	c.call(http.MethodGet, "/v1/jobs/"+j.ID, "", &got)
	require.Equal(t, "failed", got.State)
	require.Equal(t, "size_mismatch", got.Error.Code)
	require.Zero(t, st.sk.RecognizeCalls())
	status, _, _ = c.call(http.MethodGet, "/v1/jobs/"+j.ID+"/transcript", "", nil)
	require.Equal(t, http.StatusConflict, status)
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// The upload URL outlives a DELETE; a file sent to it afterwards is not kept.
func TestUploadAfterDeleteIsNotKept(t *testing.T) {
	st := newStack(t)
	c := st.client()
	audio, err := os.ReadFile(fixtures(t)["voice.ogg"])
	require.NoError(t, err)
	var j apiJob
	status, body, _ := c.call(http.MethodPost, "/v1/jobs", `{"filename":"voice.ogg","size_bytes":`+itoa(len(audio))+`}`, &j)
	require.Equal(t, http.StatusCreated, status, body)
	status, body, _ = c.call(http.MethodDelete, "/v1/jobs/"+j.ID, "", nil)
	require.Equal(t, http.StatusOK, status, body)

	put(t, j, audio)
	require.True(t, st.s3.Has(job.SourceKey(j.ID)))
	st.ingest(st.nextEvent())
	require.False(t, st.s3.Has(job.SourceKey(j.ID)), "the late upload is removed")
	require.Zero(t, st.sk.RecognizeCalls())
}
