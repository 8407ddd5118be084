package httpapi_test

import (
	"context"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/httpapi"
	"transcriber/internal/quota"
	"transcriber/internal/spend"
	"transcriber/internal/store/sqlite"
)

// withCounters serves h's API again with counters of their own.
func (h *harness) withCounters(cfg httpapi.Config) quota.Counters {
	h.t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(h.t.TempDir(), "counters.db"), h.clk)
	require.NoError(h.t, err)
	h.t.Cleanup(func() { _ = db.Close() })
	c := sqlite.NewCounters(db)
	cfg.ValidLanguage = func(l string) bool { return l == "ru-RU" || l == "en-US" }
	h.api = httpapi.New(httpapi.Deps{Jobs: h.jobs, Tokens: h.tokens, Objects: h.objects, Recognitions: h.recs,
		Counters: c, Clock: h.clk, Log: logs.Logger(h.t)}, cfg)
	h.restart()
	return c
}

// With LIMIT_ACTIVE_JOBS=2 the 2nd job is made and the 3rd refused 429
// too_many_active_jobs with a Retry-After, making no job; once one ends,
// the caller may make another. Another caller has its own count.
func TestActiveJobsLimitRefusesAtItsEdge(t *testing.T) {
	h := newHarness(t, httpapi.Config{})
	h.withCounters(httpapi.Config{Limits: spend.Limits{ActiveJobs: 2}})
	tok, secret := h.token("ci")
	var made []string
	for i := 0; i < 2; i++ {
		r := h.do(http.MethodPost, "/v1/jobs", secret, createBody)
		require.Equal(t, http.StatusCreated, r.status, "job %d: %s", i+1, r.body)
		var j jobReply
		r.json(t, &j)
		made = append(made, j.ID)
	}
	r := h.do(http.MethodPost, "/v1/jobs", secret, createBody)
	require.Equal(t, http.StatusTooManyRequests, r.status)
	require.Equal(t, spend.CodeTooManyActive, r.errorCode(t))
	require.Equal(t, "60", r.header.Get("Retry-After"))
	page, err := h.jobs.List(context.Background(), tok.ID, "", 10)
	require.NoError(t, err)
	require.Len(t, page.Jobs, 2, "the refused request made no job")
	for _, j := range page.Jobs {
		require.Equal(t, spend.API(tok.ID), j.ChargedTo, "the job is charged to its token")
	}

	keyed := h.do(http.MethodPost, "/v1/jobs", secret, createBody, "Idempotency-Key", "k1")
	require.Equal(t, http.StatusTooManyRequests, keyed.status, "a new key at the limit is refused too")

	_, other := h.token("other")
	require.Equal(t, http.StatusCreated, h.do(http.MethodPost, "/v1/jobs", other, createBody).status, "another token counts apart")

	require.Equal(t, http.StatusOK, h.do(http.MethodDelete, "/v1/jobs/"+made[0], secret, "").status)
	require.Equal(t, http.StatusCreated, h.do(http.MethodPost, "/v1/jobs", secret, createBody, "Idempotency-Key", "k2").status,
		"an ended job frees its place")
	again := h.do(http.MethodPost, "/v1/jobs", secret, createBody, "Idempotency-Key", "k2")
	require.Equal(t, http.StatusOK, again.status, "a retry at the limit gets the job its key made, not 429: %s", again.body)
}

// With no limit set, any number of jobs is made.
func TestNoActiveJobsLimit(t *testing.T) {
	h := newHarness(t, httpapi.Config{})
	_, secret := h.token("ci")
	for i := 0; i < 5; i++ {
		require.Equal(t, http.StatusCreated, h.do(http.MethodPost, "/v1/jobs", secret, createBody).status)
	}
}

type usageReply struct {
	Day, Month struct {
		UsedSeconds  int64     `json:"used_seconds"`
		LimitSeconds int64     `json:"limit_seconds"`
		ResetsAt     time.Time `json:"resets_at"`
	}
	ActiveJobs  int `json:"active_jobs"`
	ActiveLimit int `json:"active_limit"`
}

// GET /v1/usage shows the caller's day, the installation's month, and
// the caller's unfinished jobs, with their limits.
func TestUsage(t *testing.T) {
	h := newHarness(t, httpapi.Config{})
	cfg := httpapi.Config{Limits: spend.Limits{AudioPerDay: time.Hour, AudioPerMonth: 100 * time.Hour, ActiveJobs: 3}}
	c := h.withCounters(cfg)
	tok, secret := h.token("ci")
	other, _ := h.token("other")
	h.clk.Set(time.Date(2026, 12, 31, 22, 0, 0, 0, time.UTC))
	day, month := time.Date(2026, 12, 31, 0, 0, 0, 0, time.UTC), time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	ctx := context.Background()
	for key, n := range map[string]int64{spend.DayKey(spend.API(tok.ID)): 125, spend.DayKey(spend.API(other.ID)): 7} {
		_, _, err := c.Reserve(ctx, key, day, n, 0)
		require.NoError(t, err)
	}
	_, _, err := c.Reserve(ctx, spend.MonthKey, month, 132, 0)
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, h.do(http.MethodPost, "/v1/jobs", secret, createBody).status)

	r := h.do(http.MethodGet, "/v1/usage", secret, "")
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	var u usageReply
	r.json(t, &u)
	require.Equal(t, int64(125), u.Day.UsedSeconds, "the caller's own day")
	require.Equal(t, int64(3600), u.Day.LimitSeconds)
	require.Equal(t, time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC), u.Day.ResetsAt.UTC())
	require.Equal(t, int64(132), u.Month.UsedSeconds, "the installation's month")
	require.Equal(t, int64(360000), u.Month.LimitSeconds)
	require.Equal(t, time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC), u.Month.ResetsAt.UTC())
	require.Equal(t, 1, u.ActiveJobs)
	require.Equal(t, 3, u.ActiveLimit)

	require.Equal(t, http.StatusUnauthorized, h.do(http.MethodGet, "/v1/usage", "", "").status)
}
