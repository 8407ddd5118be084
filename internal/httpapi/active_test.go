package httpapi_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/apitoken"
	"transcriber/internal/callback"
	"transcriber/internal/errs"
	"transcriber/internal/httpapi"
	"transcriber/internal/job"
	"transcriber/internal/outbox"
	"transcriber/internal/quota"
	"transcriber/internal/spend"
)

// burst sends n requests at once over client, request i made by req(i),
// and returns their statuses and bodies in order.
func (h *harness) burst(client *http.Client, n int, req func(i int) *http.Request) []reply {
	h.t.Helper()
	out := make([]reply, n)
	fails := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := req(i)
			<-start
			resp, err := client.Do(r)
			if err != nil {
				fails[i] = err
				return
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			out[i], fails[i] = reply{status: resp.StatusCode, header: resp.Header, body: b}, err
		}()
	}
	close(start)
	wg.Wait()
	for _, err := range fails {
		require.NoError(h.t, err)
	}
	return out
}

// request is a request to the harness's server with secret's token.
func (h *harness) request(method, path, secret, body string, hdr ...string) *http.Request {
	req, err := http.NewRequest(method, h.srv.URL+path, strings.NewReader(body))
	require.NoError(h.t, err)
	req.Header.Set("Authorization", "Bearer "+secret)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	return req
}

func activeCount(t *testing.T, c quota.Counters, payer string, now time.Time) int64 {
	t.Helper()
	day, _ := spend.Day(now)
	n, err := c.Used(context.Background(), spend.ActiveKey(payer), day)
	require.NoError(t, err)
	return n
}

// Fifty POST /v1/jobs at once, on kept-alive connections, against
// LIMIT_ACTIVE_JOBS=3 make exactly 3 jobs and answer the rest 429. A
// retry of a made job's request gets that job and takes no second place,
// at the limit or below it; deleting a job frees its place once, however
// many DELETEs race for it.
func TestConcurrentCreatesKeepTheActiveLimit(t *testing.T) {
	h := newHarness(t, httpapi.Config{})
	c := h.withCounters(httpapi.Config{Limits: spend.Limits{ActiveJobs: 3}})
	tok, secret := h.token("ci")
	payer := spend.API(tok.ID)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 50}}
	t.Cleanup(client.CloseIdleConnections)

	// Open the connections first, so the creates go on kept-alive ones.
	for _, r := range h.burst(client, 50, func(int) *http.Request { return h.request(http.MethodGet, "/v1/usage", secret, "") }) {
		require.Equal(t, http.StatusOK, r.status)
	}
	key := func(i int) string { return fmt.Sprintf("k%d", i) }
	replies := h.burst(client, 50, func(i int) *http.Request {
		return h.request(http.MethodPost, "/v1/jobs", secret, createBody, "Idempotency-Key", key(i))
	})
	var made []int
	for i, r := range replies {
		switch r.status {
		case http.StatusCreated:
			made = append(made, i)
		case http.StatusTooManyRequests:
			require.Equal(t, spend.CodeTooManyActive, r.errorCode(t))
		default:
			t.Fatalf("request %d: %d %s", i, r.status, r.body)
		}
	}
	require.Len(t, made, 3, "exactly the limit is made")
	page, err := h.jobs.List(context.Background(), tok.ID, "", 100)
	require.NoError(t, err)
	require.Len(t, page.Jobs, 3)
	require.Equal(t, int64(3), activeCount(t, c, payer, h.clk.Now()))

	var first jobReply
	replies[made[0]].json(t, &first)
	retry := h.do(http.MethodPost, "/v1/jobs", secret, createBody, "Idempotency-Key", key(made[0]))
	require.Equal(t, http.StatusOK, retry.status, "a retry at the limit gets its job: %s", retry.body)
	var again jobReply
	retry.json(t, &again)
	require.Equal(t, first.ID, again.ID)
	require.Equal(t, int64(3), activeCount(t, c, payer, h.clk.Now()), "and takes no place")

	// Sixteen DELETEs of one job at once free one place.
	for _, r := range h.burst(client, 16, func(int) *http.Request {
		return h.request(http.MethodDelete, "/v1/jobs/"+first.ID, secret, "")
	}) {
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	}
	require.Equal(t, int64(2), activeCount(t, c, payer, h.clk.Now()))

	retry = h.do(http.MethodPost, "/v1/jobs", secret, createBody, "Idempotency-Key", key(made[1]))
	require.Equal(t, http.StatusOK, retry.status, "%s", retry.body)
	require.Equal(t, int64(2), activeCount(t, c, payer, h.clk.Now()), "a retry below the limit takes no place either")

	require.Equal(t, http.StatusCreated, h.do(http.MethodPost, "/v1/jobs", secret, createBody).status, "the freed place")
	require.Equal(t, http.StatusTooManyRequests, h.do(http.MethodPost, "/v1/jobs", secret, createBody).status)
	require.Equal(t, int64(3), activeCount(t, c, payer, h.clk.Now()))
}

// failingCallbacks cannot register a callback.
type failingCallbacks struct{}

func (failingCallbacks) Register(context.Context, job.Job, apitoken.Token, string) (callback.Delivery, error) {
	return callback.Delivery{}, errs.New(errs.Unavailable, "callbacks_unavailable", "the callback store is down")
}

func (failingCallbacks) Get(context.Context, string) (callback.Delivery, error) {
	return callback.Delivery{}, outbox.ErrNotFound
}

// A job made and then discarded (its callback could not be registered)
// gives its place back.
func TestADiscardedJobGivesBackItsPlace(t *testing.T) {
	h := newHarness(t, httpapi.Config{})
	cfg := httpapi.Config{Limits: spend.Limits{ActiveJobs: 1}, CallbackAllowPrivate: true}
	c := h.withCounters(cfg)
	cfg.ValidLanguage = func(string) bool { return true }
	h.api = httpapi.New(httpapi.Deps{Jobs: h.jobs, Tokens: h.tokens, Objects: h.objects, Recognitions: h.recs,
		Counters: c, Callbacks: failingCallbacks{}, Clock: h.clk, Log: logs.Logger(t)}, cfg)
	h.restart()
	tok, secret := h.token("ci")

	body := `{"filename": "a.ogg", "size_bytes": 11, "callback_url": "http://127.0.0.1:9/hook"}`
	r := h.do(http.MethodPost, "/v1/jobs", secret, body)
	require.Equal(t, http.StatusServiceUnavailable, r.status, "%s", r.body)
	page, err := h.jobs.List(context.Background(), tok.ID, "", 10)
	require.NoError(t, err)
	require.Len(t, page.Jobs, 1)
	require.True(t, page.Jobs[0].Deleted(), "the job was made, then discarded")
	require.Zero(t, activeCount(t, c, spend.API(tok.ID), h.clk.Now()), "and its place given back")
}
