package app_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/apitoken"
	"transcriber/internal/app"
)

// receiver is a client's callback endpoint: it records each request and
// answers failFirst of them with 500, the rest with 204.
type receiver struct {
	mu        sync.Mutex
	failFirst int
	got       []delivery
	url       string
}

type delivery struct {
	header http.Header
	body   []byte
}

func newReceiver(t *testing.T, failFirst int) *receiver {
	rc := &receiver{failFirst: failFirst}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.got = append(rc.got, delivery{header: r.Header.Clone(), body: body})
		n := len(rc.got)
		rc.mu.Unlock()
		if n <= rc.failFirst {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	rc.url = srv.URL + "/hooks/transcriber?client=7"
	return rc
}

func (rc *receiver) deliveries() []delivery {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]delivery(nil), rc.got...)
}

// callbackClient is an API client whose token's callback secret the test
// keeps, as the person who made the token does.
func (st *stack) callbackClient() (*client, string) {
	st.t.Helper()
	srv := st.apiServer()
	tok, secret, err := apitoken.New("e2e", st.clk.Now())
	require.NoError(st.t, err)
	require.NoError(st.t, st.tokens.Create(context.Background(), tok))
	logs.Secret("an API token", secret)
	logs.Secret("a callback secret", tok.CallbackSecret)
	return &client{t: st.t, base: srv.URL, secret: secret}, tok.CallbackSecret
}

type callbackJob struct {
	ID       string `json:"id"`
	State    string `json:"state"`
	Callback *struct {
		URL        string `json:"url"`
		State      string `json:"state"`
		Attempts   int    `json:"attempts"`
		LastStatus int    `json:"last_status"`
		LastError  string `json:"last_error"`
	} `json:"callback"`
}

// submit makes a job with a callback to url, uploads body and runs ingest
// and one poll: the job ends.
func (st *stack) submit(c *client, url string, body []byte) string {
	st.t.Helper()
	var j apiJob
	status, resp, _ := c.call(http.MethodPost, "/v1/jobs",
		`{"filename":"clip.mp4","size_bytes":`+itoa(len(body))+`,"callback_url":"`+url+`"}`, &j)
	require.Equal(st.t, http.StatusCreated, status, resp)
	require.Contains(st.t, resp, `"callback":{"url":"`+url+`","state":"pending","attempts":0}`)
	put(st.t, j, body)
	st.ingest(st.nextEvent())
	st.poll()
	return j.ID
}

func allowPrivateCallbacks(c *app.Config) { c.API.CallbackAllowPrivate = true }

// A job made with a callback_url is told when it ends: a POST signed as
// docs/api.md says, which the receiver written from it accepts, carrying
// the job as GET shows it; the job's view shows the callback delivered.
func TestCallbackTellsTheEndOfAJob(t *testing.T) {
	st := newStack(t, allowPrivateCallbacks)
	c, cbSecret := st.callbackClient()
	rc := newReceiver(t, 0)
	audio, err := os.ReadFile(fixtures(t)["clip.mp4"])
	require.NoError(t, err)

	id := st.submit(c, rc.url, audio)
	got := rc.deliveries()
	require.Len(t, got, 1, "the end of the job is told once")
	d := got[0]
	require.True(t, verify(cbSecret, d.header, d.body, st.clk.Now()), "the receiver of docs/api.md accepts it")
	require.True(t, strings.HasPrefix(d.header.Get("webhook-id"), "msg_"))
	require.Equal(t, "application/json", d.header.Get("Content-Type"))

	var payload struct {
		Type      string          `json:"type"`
		Timestamp time.Time       `json:"timestamp"`
		Data      json.RawMessage `json:"data"`
	}
	require.NoError(t, json.Unmarshal(d.body, &payload))
	require.Equal(t, "job.done", payload.Type)
	require.False(t, payload.Timestamp.IsZero())
	var data apiJob
	require.NoError(t, json.Unmarshal(payload.Data, &data))
	require.Equal(t, id, data.ID)
	require.Equal(t, "done", data.State)
	require.Len(t, data.Transcript, 4, "the job as GET /v1/jobs/{id} shows it")

	var view callbackJob
	status, body, _ := c.call(http.MethodGet, "/v1/jobs/"+id, "", &view)
	require.Equal(t, http.StatusOK, status, body)
	require.NotNil(t, view.Callback, body)
	require.Equal(t, "delivered", view.Callback.State)
	require.Equal(t, 1, view.Callback.Attempts)
	require.Equal(t, http.StatusNoContent, view.Callback.LastStatus)

	// A forged or altered delivery fails the same check.
	require.False(t, verify(cbSecret, d.header, append(d.body[:len(d.body):len(d.body)], ' '), st.clk.Now()), "an altered body")
	_, otherSecret := st.callbackClient()
	require.False(t, verify(otherSecret, d.header, d.body, st.clk.Now()), "another token's secret")
	require.False(t, verify(cbSecret, d.header, d.body, st.clk.Now().Add(10*time.Minute)), "a replay, later")

	st.poll()
	require.Len(t, rc.deliveries(), 1, "a delivered callback is not sent again")
}

// A receiver that fails twice and then accepts gets three attempts, with
// one webhook-id: the first when the job ends, the others from the poll
// function's sweep after the pauses; each is signed anew and recorded.
func TestCallbackIsRetriedUntilAccepted(t *testing.T) {
	st := newStack(t, allowPrivateCallbacks)
	c, cbSecret := st.callbackClient()
	rc := newReceiver(t, 2)
	audio, err := os.ReadFile(fixtures(t)["clip.mp4"])
	require.NoError(t, err)

	id := st.submit(c, rc.url, audio)
	require.Len(t, rc.deliveries(), 1, "the first attempt, when the job ended")
	var view callbackJob
	c.call(http.MethodGet, "/v1/jobs/"+id, "", &view)
	require.Equal(t, "pending", view.Callback.State)
	require.Equal(t, 1, view.Callback.Attempts)
	require.Equal(t, http.StatusInternalServerError, view.Callback.LastStatus)
	require.Equal(t, "status_not_2xx", view.Callback.LastError)

	st.poll()
	require.Len(t, rc.deliveries(), 1, "not due before its pause")
	st.clk.Advance(30 * time.Second)
	st.poll()
	require.Len(t, rc.deliveries(), 2, "the second, 30 s later")
	st.clk.Advance(time.Minute)
	st.poll()
	got := rc.deliveries()
	require.Len(t, got, 3, "the third, a minute after the second")

	for i, d := range got {
		require.Equal(t, got[0].header.Get("webhook-id"), d.header.Get("webhook-id"), "attempt %d: one webhook-id", i+1)
		require.True(t, verify(cbSecret, d.header, d.body, st.clk.Now()), "attempt %d verifies", i+1)
	}
	require.NotEqual(t, got[0].header.Get("webhook-timestamp"), got[2].header.Get("webhook-timestamp"), "each attempt is signed when sent")

	var done callbackJob
	c.call(http.MethodGet, "/v1/jobs/"+id, "", &done)
	require.Equal(t, "delivered", done.Callback.State)
	require.Equal(t, 3, done.Callback.Attempts, "every attempt recorded")
	require.Equal(t, http.StatusNoContent, done.Callback.LastStatus)
	require.Empty(t, done.Callback.LastError)

	st.clk.Advance(time.Hour)
	st.poll()
	require.Len(t, rc.deliveries(), 3, "nothing more")
}

// A job that fails is told as job.failed, with its error.
func TestCallbackTellsAFailure(t *testing.T) {
	st := newStack(t, allowPrivateCallbacks)
	c, cbSecret := st.callbackClient()
	rc := newReceiver(t, 0)
	st.submit(c, rc.url, []byte("this is not a recording at all, just text"))
	got := rc.deliveries()
	require.Len(t, got, 1)
	require.True(t, verify(cbSecret, got[0].header, got[0].body, st.clk.Now()))
	var payload struct {
		Type string `json:"type"`
		Data apiJob `json:"data"`
	}
	require.NoError(t, json.Unmarshal(got[0].body, &payload))
	require.Equal(t, "job.failed", payload.Type)
	require.Equal(t, "failed", payload.Data.State)
	require.NotNil(t, payload.Data.Error)
}

// Without CALLBACK_ALLOW_PRIVATE a callback_url to this machine is refused
// when the job is made, and a token made before callbacks takes none.
func TestCallbackURLIsCheckedAtCreation(t *testing.T) {
	st := newStack(t)
	c, _ := st.callbackClient()
	rc := newReceiver(t, 0)
	for _, url := range []string{rc.url, strings.Replace(rc.url, "http://", "https://", 1), "https://user:pw@hooks.example.com/",
		"https://169.254.169.254/latest", "https://10.0.0.7/cb"} {
		status, body, _ := c.call(http.MethodPost, "/v1/jobs", `{"filename":"a.mp3","size_bytes":10,"callback_url":"`+url+`"}`, nil)
		require.Equal(t, http.StatusBadRequest, status, "%s: %s", url, body)
		require.Contains(t, body, "bad_callback_url", url)
	}

	old, secret, err := apitoken.New("old", st.clk.Now())
	require.NoError(t, err)
	old.CallbackSecret = ""
	require.NoError(t, st.tokens.Create(st.ctx, old))
	c.secret = secret
	status, body, _ := c.call(http.MethodPost, "/v1/jobs", `{"filename":"a.mp3","size_bytes":10,"callback_url":"https://hooks.example.com/cb"}`, nil)
	require.Equal(t, http.StatusBadRequest, status, body)
	require.Contains(t, body, "token_without_callback_secret")
	require.Empty(t, rc.deliveries())
}

// The receiver's check in this package is the one docs/api.md shows.
func TestDocsShowTheReceiversCheck(t *testing.T) {
	src, err := os.ReadFile("callback_verify_test.go")
	require.NoError(t, err)
	doc, err := os.ReadFile("../../docs/api.md")
	require.NoError(t, err)
	code := string(src)
	code = code[strings.Index(code, "// verify reports"):]
	require.Contains(t, string(doc), code, "docs/api.md shows verify exactly as the test runs it")
}
