package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/apitoken"
	"transcriber/internal/clock"
	"transcriber/internal/clock/clocktest"
	"transcriber/internal/httpapi"
	"transcriber/internal/httpapi/openapitest"
	"transcriber/internal/job"
	"transcriber/internal/storage/s3"
	"transcriber/internal/storage/s3/s3test"
	"transcriber/internal/store/sqlite"
)

// countingJobs counts the calls that reach the job store.
type countingJobs struct {
	job.Store
	calls atomic.Int64
}

func (c *countingJobs) Get(ctx context.Context, id string) (job.Job, error) {
	c.calls.Add(1)
	return c.Store.Get(ctx, id)
}

// recognitions records the recognitions the API deletes.
type recognitions struct {
	mu      sync.Mutex
	deleted []string
}

func (r *recognitions) Delete(_ context.Context, op string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.deleted = append(r.deleted, op)
	return nil
}

type harness struct {
	t       *testing.T
	api     *httpapi.API
	srv     *httptest.Server
	jobs    *countingJobs
	tokens  apitoken.Store
	objects *s3.Store
	s3      *s3test.Server
	recs    *recognitions
	clk     *clocktest.Fake
}

func newHarness(t *testing.T, cfg httpapi.Config) *harness {
	t.Helper()
	h := &harness{t: t, clk: clocktest.NewFake(clock.System().Now()), recs: &recognitions{}}
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "api.db"), h.clk)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	h.jobs = &countingJobs{Store: sqlite.NewJobStore(db)}
	h.tokens = sqlite.NewTokenStore(db)
	h.s3 = s3test.Start(t)
	scfg := h.s3.Config()
	scfg.Clock = h.clk
	h.objects, err = s3.New(scfg)
	require.NoError(t, err)
	if cfg.ValidLanguage == nil {
		cfg.ValidLanguage = func(l string) bool { return l == "ru-RU" || l == "en-US" }
	}
	h.api = httpapi.New(httpapi.Deps{Jobs: h.jobs, Tokens: h.tokens, Objects: h.objects, Recognitions: h.recs,
		Clock: h.clk, Log: logs.Logger(t)}, cfg)
	h.restart()
	return h
}

// restart serves h.api on a new server, in place of the one before. Each
// answer it gives is checked against the OpenAPI document.
func (h *harness) restart() {
	h.t.Helper()
	if h.srv != nil {
		h.srv.Close()
	}
	h.srv = httptest.NewServer(openapitest.Handler(h.t, h.api))
	h.t.Cleanup(h.srv.Close)
}

// token issues a live token and returns its secret.
func (h *harness) token(name string) (apitoken.Token, string) {
	h.t.Helper()
	tok, secret, err := apitoken.New(name, h.clk.Now())
	require.NoError(h.t, err)
	require.NoError(h.t, h.tokens.Create(context.Background(), tok))
	return tok, secret
}

type reply struct {
	status int
	header http.Header
	body   []byte
}

func (r reply) json(t *testing.T, v any) {
	t.Helper()
	require.NoError(t, json.Unmarshal(r.body, v), "body: %s", r.body)
}

// errorCode checks the one error shape and returns its code.
func (r reply) errorCode(t *testing.T) string {
	t.Helper()
	require.Equal(t, "application/json; charset=utf-8", r.header.Get("Content-Type"))
	var e struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	dec := json.NewDecoder(bytes.NewReader(r.body))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&e), "body: %s", r.body)
	require.NotEmpty(t, e.Error.Code)
	require.NotEmpty(t, e.Error.Message)
	return e.Error.Code
}

func (h *harness) do(method, path, secret string, body string, hdr ...string) reply {
	h.t.Helper()
	req, err := http.NewRequest(method, h.srv.URL+path, strings.NewReader(body))
	require.NoError(h.t, err)
	if secret != "" {
		req.Header.Set("Authorization", "Bearer "+secret)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(h.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(h.t, err)
	return reply{status: resp.StatusCode, header: resp.Header, body: b}
}

type jobReply struct {
	ID         string            `json:"id"`
	State      string            `json:"state"`
	Progress   int               `json:"progress"`
	Filename   string            `json:"filename"`
	SizeBytes  int64             `json:"size_bytes"`
	Language   string            `json:"language"`
	CreatedAt  time.Time         `json:"created_at"`
	DeletedAt  *time.Time        `json:"deleted_at"`
	Transcript map[string]string `json:"transcript"`
	Error      *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Upload *struct {
		Method    string            `json:"method"`
		URL       string            `json:"url"`
		Headers   map[string]string `json:"headers"`
		ExpiresAt time.Time         `json:"expires_at"`
	} `json:"upload"`
}

const createBody = `{"filename": "interview.ogg", "size_bytes": 11, "content_type": "audio/ogg"}`
