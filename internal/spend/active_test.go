package spend_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/clock/clocktest"
	"transcriber/internal/errs"
	"transcriber/internal/job"
	"transcriber/internal/quota"
	"transcriber/internal/spend"
	"transcriber/internal/store/sqlite"
)

// activeEnv is a job store and counters on one embedded database.
type activeEnv struct {
	ctx      context.Context
	clk      *clocktest.Fake
	jobs     job.Store
	counters quota.Counters
}

var noon = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func newActiveEnv(t *testing.T) *activeEnv {
	t.Helper()
	clk := clocktest.NewFake(noon)
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "s.db"), clk)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	return &activeEnv{ctx: context.Background(), clk: clk, jobs: sqlite.NewJobStore(db), counters: sqlite.NewCounters(db)}
}

// make admits a job for payer at the clock's time and makes it: the job,
// or the refusal.
func (e *activeEnv) make(t *testing.T, l spend.Limits, payer string) (job.Job, error) {
	t.Helper()
	place, err := spend.Admit(e.ctx, e.counters, l, payer, e.clk.Now())
	if err != nil {
		return job.Job{}, err
	}
	j, err := e.jobs.Create(e.ctx, job.Draft{Source: job.SourceAPI, OwnerID: "o", ChargedTo: payer, SizeBytes: 1})
	require.NoError(t, err)
	require.NoError(t, place.Settle(e.ctx, j, true))
	return j, nil
}

func (e *activeEnv) counted(t *testing.T, payer string, day time.Time) int64 {
	t.Helper()
	n, err := e.counters.Used(e.ctx, spend.ActiveKey(payer), day)
	require.NoError(t, err)
	return n
}

func requireTooMany(t *testing.T, err error) {
	t.Helper()
	require.Equal(t, spend.CodeTooManyActive, errs.CodeOf(err), "%v", err)
	require.Equal(t, errs.Conflict, errs.KindOf(err))
}

// end saves j ended as state, as a step does under its claim.
func (e *activeEnv) end(t *testing.T, j job.Job, state job.State) job.Job {
	t.Helper()
	c, err := e.jobs.Claim(e.ctx, j.ID, job.Ingest)
	require.NoError(t, err)
	if state == job.Done {
		for _, s := range []job.State{job.Created, job.Converted, job.Transcribe} {
			c.State = s
			c, err = e.jobs.Save(e.ctx, c, job.Next{Keep: true})
			require.NoError(t, err)
		}
	}
	c.State, c.ErrorCode, c.ErrorMessage = state, "x", "x"
	ended, err := e.jobs.Save(e.ctx, c, job.Next{})
	require.NoError(t, err)
	return ended
}

var today = time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)

// Fifty admissions at once against a limit of 3: exactly 3 pass.
func TestAdmitHoldsTheLimitUnderConcurrency(t *testing.T) {
	e := newActiveEnv(t)
	l := spend.Limits{ActiveJobs: 3}
	var (
		wg    sync.WaitGroup
		start = make(chan struct{})
		got   = make(chan error, 50)
	)
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, err := spend.Admit(e.ctx, e.counters, l, "tok:a", e.clk.Now())
			got <- err
		}()
	}
	close(start)
	wg.Wait()
	close(got)
	passed := 0
	for err := range got {
		if err == nil {
			passed++
			continue
		}
		requireTooMany(t, err)
	}
	require.Equal(t, 3, passed)
	require.Equal(t, int64(3), e.counted(t, "tok:a", today))
}

// A job made yesterday, or 3 days ago, still holds its place today; a
// count 4 days old (a job made then that never gave it back) no longer
// does: the default JobLife spans today and 3 days before.
func TestTheCountSpansTheDaysAJobLives(t *testing.T) {
	e := newActiveEnv(t)
	l := spend.Limits{ActiveJobs: 3}
	e.clk.Set(noon.AddDate(0, 0, -1))
	_, err := e.make(t, l, "tok:a")
	require.NoError(t, err)
	e.clk.Set(noon)
	_, err = e.make(t, l, "tok:a")
	require.NoError(t, err)
	_, err = e.make(t, l, "tok:a")
	require.NoError(t, err)
	_, err = e.make(t, l, "tok:a")
	requireTooMany(t, err)
	require.Equal(t, int64(1), e.counted(t, "tok:a", today.AddDate(0, 0, -1)))
	require.Equal(t, int64(2), e.counted(t, "tok:a", today))

	// Leaked counts of "tok:b": 2 on the last day of the span, 5 on the
	// day before it.
	_, _, err = e.counters.Reserve(e.ctx, spend.ActiveKey("tok:b"), today.AddDate(0, 0, -3), 2, 0)
	require.NoError(t, err)
	_, _, err = e.counters.Reserve(e.ctx, spend.ActiveKey("tok:b"), today.AddDate(0, 0, -4), 5, 0)
	require.NoError(t, err)
	_, err = e.make(t, l, "tok:b")
	require.NoError(t, err, "a count older than the span no longer counts")
	_, err = e.make(t, l, "tok:b")
	requireTooMany(t, err)
	e.clk.Set(noon.AddDate(0, 0, 1))
	_, err = e.make(t, l, "tok:b")
	require.NoError(t, err, "the next day the 2 have left: yesterday's 1 leaves room for 2")
	_, err = e.make(t, l, "tok:b")
	require.NoError(t, err)
	_, err = e.make(t, l, "tok:b")
	requireTooMany(t, err)
}

// A longer JobLife (a long upload URL) spans more days.
func TestALongerJobLifeSpansMoreDays(t *testing.T) {
	e := newActiveEnv(t)
	l := spend.Limits{ActiveJobs: 1, JobLife: spend.JobLife(7*24*time.Hour + 2*time.Hour)}
	_, _, err := e.counters.Reserve(e.ctx, spend.ActiveKey("tok:a"), today.AddDate(0, 0, -10), 1, 0)
	require.NoError(t, err)
	_, err = e.make(t, l, "tok:a")
	requireTooMany(t, err) // 9 days 2 h span the 10 days before today
	e.clk.Set(noon.AddDate(0, 0, 1))
	_, err = e.make(t, l, "tok:a")
	require.NoError(t, err)
}

// A job that ends gives its place back to its creation day's window,
// once; the next job then finds room.
func TestAnEndedJobGivesBackItsPlace(t *testing.T) {
	e := newActiveEnv(t)
	l := spend.Limits{ActiveJobs: 2}
	e.clk.Set(noon.AddDate(0, 0, -1))
	old, err := e.make(t, l, "tok:a")
	require.NoError(t, err)
	e.clk.Set(noon)
	_, err = e.make(t, l, "tok:a")
	require.NoError(t, err)
	_, err = e.make(t, l, "tok:a")
	requireTooMany(t, err)

	spend.Ended(e.ctx, e.counters, l, old, slog.Default())
	require.Equal(t, int64(1), e.counted(t, "tok:a", today.AddDate(0, 0, -1)), "a live job gives nothing back")
	ended := e.end(t, old, job.Failed)
	spend.Ended(e.ctx, e.counters, l, ended, slog.Default())
	require.Zero(t, e.counted(t, "tok:a", today.AddDate(0, 0, -1)), "given back to the day it was made")
	require.Equal(t, int64(1), e.counted(t, "tok:a", today))
	_, err = e.make(t, l, "tok:a")
	require.NoError(t, err)
}

// A place not used (the request found the job it made before, or the
// create failed) is given back; a job made after midnight moves its count
// to its own day, where its end will give it back.
func TestSettle(t *testing.T) {
	e := newActiveEnv(t)
	l := spend.Limits{ActiveJobs: 1}
	place, err := spend.Admit(e.ctx, e.counters, l, "tok:a", e.clk.Now())
	require.NoError(t, err)
	require.Equal(t, int64(1), e.counted(t, "tok:a", today))
	require.NoError(t, place.Settle(e.ctx, job.Job{}, false))
	require.Zero(t, e.counted(t, "tok:a", today))

	e.clk.Set(today.Add(24*time.Hour - time.Millisecond))
	place, err = spend.Admit(e.ctx, e.counters, l, "tok:a", e.clk.Now())
	require.NoError(t, err)
	e.clk.Set(today.Add(24 * time.Hour))
	j, err := e.jobs.Create(e.ctx, job.Draft{Source: job.SourceAPI, OwnerID: "o", ChargedTo: "tok:a", SizeBytes: 1})
	require.NoError(t, err)
	require.NoError(t, place.Settle(e.ctx, j, true))
	require.Zero(t, e.counted(t, "tok:a", today))
	require.Equal(t, int64(1), e.counted(t, "tok:a", today.AddDate(0, 0, 1)))
	spend.Ended(e.ctx, e.counters, l, e.end(t, j, job.Done), slog.Default())
	require.Zero(t, e.counted(t, "tok:a", today.AddDate(0, 0, 1)))
}

// Sixteen deletions of one job at once give its place back once; a
// deletion of a job that had ended gives nothing back.
func TestADeletionGivesBackOnce(t *testing.T) {
	e := newActiveEnv(t)
	l := spend.Limits{ActiveJobs: 3}
	j, err := e.make(t, l, "tok:a")
	require.NoError(t, err)
	_, err = e.make(t, l, "tok:a")
	require.NoError(t, err)
	var wg sync.WaitGroup
	start := make(chan struct{})
	fails := make(chan error, 16)
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			deleted, err := e.jobs.Delete(e.ctx, j.ID)
			if err != nil {
				fails <- err
				return
			}
			spend.Deleted(e.ctx, e.counters, l, j, deleted, slog.Default())
		}()
	}
	close(start)
	wg.Wait()
	close(fails)
	for err := range fails {
		require.NoError(t, err)
	}
	require.Equal(t, int64(1), e.counted(t, "tok:a", today))

	done, err := e.make(t, l, "tok:a")
	require.NoError(t, err)
	ended := e.end(t, done, job.Done)
	spend.Ended(e.ctx, e.counters, l, ended, slog.Default())
	require.Equal(t, int64(1), e.counted(t, "tok:a", today))
	deleted, err := e.jobs.Delete(e.ctx, done.ID)
	require.NoError(t, err)
	spend.Deleted(e.ctx, e.counters, l, ended, deleted, slog.Default())
	require.Equal(t, int64(1), e.counted(t, "tok:a", today), "its end gave it back already")
}

// Without a limit, for an exempt user, or without counters nothing is
// counted and nothing given back.
func TestNoLimitTakesNoCount(t *testing.T) {
	e := newActiveEnv(t)
	for _, tc := range []struct {
		l     spend.Limits
		payer string
	}{
		{spend.Limits{}, "tok:a"},
		{spend.Limits{ActiveJobs: 1, Exempt: map[int64]bool{42: true}}, "tgu:42"},
		{spend.Limits{ActiveJobs: 1}, ""},
	} {
		for range 3 {
			place, err := spend.Admit(e.ctx, e.counters, tc.l, tc.payer, e.clk.Now())
			require.NoError(t, err)
			require.Nil(t, place)
		}
		if tc.payer != "" {
			require.Zero(t, e.counted(t, tc.payer, today))
		}
	}
	place, err := spend.Admit(e.ctx, nil, spend.Limits{ActiveJobs: 1}, "tok:a", e.clk.Now())
	require.NoError(t, err)
	require.Nil(t, place, "no counters count nothing")
	require.NoError(t, place.Settle(e.ctx, job.Job{}, false), "a nil place settles as nothing")

	// An exempt user's ended job gives nothing back to a count of the
	// same key (there is none: it never took one).
	_, _, err = e.counters.Reserve(e.ctx, spend.ActiveKey("tgu:42"), today, 1, 0)
	require.NoError(t, err)
	l := spend.Limits{ActiveJobs: 1, Exempt: map[int64]bool{42: true}}
	j, err := e.jobs.Create(e.ctx, job.Draft{Source: job.SourceAPI, OwnerID: "o", ChargedTo: "tgu:42", SizeBytes: 1})
	require.NoError(t, err)
	spend.Ended(e.ctx, e.counters, l, e.end(t, j, job.Failed), slog.Default())
	require.Equal(t, int64(1), e.counted(t, "tgu:42", today))
}
