package httpapi_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/apitoken"
	"transcriber/internal/clock"
	"transcriber/internal/errs"
	"transcriber/internal/httpapi"
	"transcriber/internal/httpapi/openapitest"
	"transcriber/internal/ident"
	"transcriber/internal/job"
)

// hangingJobs is a job store whose Get and CreateOnce never answer: they
// wait for their context to end (heed) or, with heed false, for the test
// to end, as a call does whose connection died while the instance slept.
type hangingJobs struct {
	job.Store
	heed    bool
	release chan struct{}
}

func (s *hangingJobs) hang(ctx context.Context) error {
	if s.heed {
		<-ctx.Done()
		return ctx.Err()
	}
	<-s.release
	return errors.New("released at the end of the test")
}

func (s *hangingJobs) Get(ctx context.Context, _ string) (job.Job, error) {
	return job.Job{}, s.hang(ctx)
}

func (s *hangingJobs) CreateOnce(ctx context.Context, _ job.Draft) (job.Job, bool, error) {
	return job.Job{}, false, s.hang(ctx)
}

// hangingTokens is a token store whose lookup never answers.
type hangingTokens struct {
	apitoken.Store
	release chan struct{}
}

func (s *hangingTokens) ByHash(context.Context, string) (apitoken.Token, error) {
	<-s.release
	return apitoken.Token{}, errors.New("released at the end of the test")
}

// panickingJobs is a job store whose Get panics.
type panickingJobs struct{ job.Store }

func (panickingJobs) Get(context.Context, string) (job.Job, error) { panic("store bug") }

// serve serves h's API again with jobs and tokens in place of its own,
// and cfg.
func (h *harness) serve(jobs job.Store, tokens apitoken.Store, cfg httpapi.Config) {
	h.t.Helper()
	cfg.ValidLanguage = func(l string) bool { return l == "ru-RU" || l == "en-US" }
	h.api = httpapi.New(httpapi.Deps{Jobs: jobs, Tokens: tokens, Objects: h.objects, Recognitions: h.recs,
		Clock: h.clk, Log: logs.Logger(h.t)}, cfg)
	h.restart()
}

// requireTimedOut: the answer is the API's own 503, with a Retry-After.
func requireTimedOut(t *testing.T, r reply) {
	t.Helper()
	require.Equal(t, http.StatusServiceUnavailable, r.status, "body: %s", r.body)
	require.Equal(t, "request_timeout", r.errorCode(t))
	require.Equal(t, "5", r.header.Get("Retry-After"))
}

// A store that hangs does not hold the request past its deadline: the API
// answers 503 request_timeout with a Retry-After, whether the store heeds
// its context and fails at the deadline, or ignores it and never answers.
func TestHangingStoreIsAnswered503BeforeTheDeadlineRunsOut(t *testing.T) {
	for _, heed := range []bool{true, false} {
		name := map[bool]string{true: "heeding its context", false: "ignoring its context"}[heed]
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, httpapi.Config{})
			_, secret := h.token("client")
			jobs := &hangingJobs{Store: h.jobs, heed: heed, release: make(chan struct{})}
			t.Cleanup(func() { close(jobs.release) })
			h.serve(jobs, h.tokens, httpapi.Config{RequestTimeout: 50 * time.Millisecond})

			requireTimedOut(t, h.do(http.MethodGet, "/v1/jobs/01JD0000000000000000000000", secret, ""))
			requireTimedOut(t, h.do(http.MethodPost, "/v1/jobs", secret, createBody, "Idempotency-Key", "k1"))
		})
	}
	t.Run("the token store, before any route's work", func(t *testing.T) {
		h := newHarness(t, httpapi.Config{})
		_, secret := h.token("client")
		tokens := &hangingTokens{Store: h.tokens, release: make(chan struct{})}
		t.Cleanup(func() { close(tokens.release) })
		h.serve(h.jobs, tokens, httpapi.Config{RequestTimeout: 50 * time.Millisecond})
		requireTimedOut(t, h.do(http.MethodGet, "/v1/jobs", secret, ""))
	})
	t.Run("a request that ends in time is answered as it ended", func(t *testing.T) {
		h := newHarness(t, httpapi.Config{})
		_, secret := h.token("client")
		h.serve(h.jobs, h.tokens, httpapi.Config{RequestTimeout: time.Minute})
		r := h.do(http.MethodGet, "/v1/jobs/01JD0000000000000000000000", secret, "")
		require.Equal(t, http.StatusNotFound, r.status)
		require.Equal(t, "job_not_found", r.errorCode(t))
	})
}

// A handler that panics is answered 500 in the one error shape, and the
// process goes on.
func TestPanickingHandlerIsAnswered500(t *testing.T) {
	h := newHarness(t, httpapi.Config{})
	_, secret := h.token("client")
	h.serve(panickingJobs{h.jobs}, h.tokens, httpapi.Config{})
	r := h.do(http.MethodGet, "/v1/jobs/01JD0000000000000000000000", secret, "")
	require.Equal(t, http.StatusInternalServerError, r.status, "body: %s", r.body)
	require.Equal(t, "internal", r.errorCode(t))
}

// The api function's call has one deadline, from the start of the call:
// the function's timeout less the margin to answer, or sooner when the
// platform's context ends sooner.
func TestCallContextSharesTheFunctionsTimeout(t *testing.T) {
	start := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

	ctx, cancel := httpapi.CallContext(context.Background(), start)
	defer cancel()
	d, ok := ctx.Deadline()
	require.True(t, ok)
	require.Equal(t, start.Add(httpapi.FunctionTimeout-httpapi.AnswerMargin), d)

	platform, cancelPlatform := context.WithDeadline(context.Background(), start.Add(12*time.Second))
	defer cancelPlatform()
	ctx, cancel = httpapi.CallContext(platform, start)
	defer cancel()
	d, _ = ctx.Deadline()
	require.Equal(t, start.Add(12*time.Second-httpapi.AnswerMargin), d, "the platform's earlier deadline, less the margin")

	late, cancelLate := context.WithDeadline(context.Background(), start.Add(time.Hour))
	defer cancelLate()
	ctx, cancel = httpapi.CallContext(late, start)
	defer cancel()
	d, _ = ctx.Deadline()
	require.Equal(t, start.Add(httpapi.FunctionTimeout-httpapi.AnswerMargin), d, "a later deadline does not lift the function's")
}

// What the call spent before the request (an instance's first call opens
// the job store) is not given to the request again: a call whose start
// used up its time is answered 503 at once, with the store never asked.
func TestGatewayRequestGetsWhatTheCallHasLeft(t *testing.T) {
	h := newHarness(t, httpapi.Config{})
	_, secret := h.token("gw")
	before := h.jobs.calls.Load()
	ctx, cancel := httpapi.CallContext(context.Background(),
		clock.System().Now().Add(-(httpapi.FunctionTimeout - httpapi.AnswerMargin)))
	defer cancel()
	got, err := httpapi.ServeGateway(ctx, h.api, h.api.Log, event(t, `{"version": "1.0", "path": "/v1/jobs/01JD0000000000000000000000", "httpMethod": "GET",
		"headers": {"X-Api-Key": "`+secret+`"}}`))
	require.NoError(t, err)
	openapitest.Gateway(t, event(t, `{"path": "/v1/jobs/01JD0000000000000000000000", "httpMethod": "GET"}`), got)
	require.Equal(t, http.StatusServiceUnavailable, got.StatusCode, got.Body)
	require.Equal(t, "5", got.Headers["Retry-After"])
	require.Contains(t, got.Body, `"request_timeout"`)
	require.Equal(t, before, h.jobs.calls.Load(), "the job store was not asked")
}

// A function that could not get ready answers in the one error shape: 503
// with a Retry-After when a dependency is unavailable, 500 when its
// configuration is at fault. Whatever the request, the OpenAPI document
// declares that answer.
func TestNotReadyAnswers(t *testing.T) {
	ctx := context.Background()
	r := httpapi.NotReady(ctx, logs.Logger(t), errs.Wrap(errors.New("dial: i/o timeout"), errs.Unavailable, "store_unavailable", "the job store is unavailable"))
	require.Equal(t, http.StatusServiceUnavailable, r.StatusCode)
	require.Equal(t, "5", r.Headers["Retry-After"])
	require.Contains(t, r.Body, `"store_unavailable"`)
	require.NotContains(t, r.Body, "dial")

	r2 := httpapi.NotReady(ctx, logs.Logger(t), errs.New(errs.Invalid, "config_invalid", "MAX_PIECES is not a number"))
	require.Equal(t, http.StatusInternalServerError, r2.StatusCode, "the deployment's fault, not the caller's")
	require.Contains(t, r2.Body, `"function_not_ready"`)
	require.Empty(t, r2.Headers["Retry-After"])

	doc := openapitest.Load(t)
	for _, rt := range httpapi.Routes {
		ev := &httpapi.GatewayRequest{HTTPMethod: rt.Method, Path: strings.ReplaceAll(rt.Path, "{id}", ident.New())}
		for _, resp := range []*httpapi.GatewayResponse{r, r2} {
			require.NoError(t, openapitest.CheckGateway(doc, ev, resp), "%s %s", rt.Method, rt.Path)
		}
	}
}
