package pipeline_test

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/clock"
	"transcriber/internal/clock/clocktest"
	"transcriber/internal/job"
	"transcriber/internal/pipeline"
	"transcriber/internal/store/sqlite"
)

// countingStore counts the calls that reach the store.
type countingStore struct {
	job.Store
	calls atomic.Int64
}

func (c *countingStore) NextDue(ctx context.Context, s []job.State) (time.Time, bool, error) {
	c.calls.Add(1)
	return c.Store.NextDue(ctx, s)
}

func (c *countingStore) ClaimDue(ctx context.Context, s job.Step, n int) ([]job.Job, error) {
	c.calls.Add(1)
	return c.Store.ClaimDue(ctx, s, n)
}

func newStore(t *testing.T, clk clock.Clock) job.Store {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "jobs.db"), clk)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	return sqlite.NewJobStore(db)
}

func TestIdlePollIsOneRead(t *testing.T) {
	clk := clocktest.NewFake(time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC))
	st := &countingStore{Store: newStore(t, clk)}
	var slept time.Duration
	p := pipeline.New(pipeline.Deps{
		Store: st, Clock: clk, Log: logs.Logger(t),
		Sleep: func(_ context.Context, d time.Duration) error { slept += d; return nil },
	}, pipeline.Config{})

	stats, err := p.Poll(context.Background())
	require.NoError(t, err)
	require.Equal(t, pipeline.PollStats{}, stats)
	require.Equal(t, int64(1), st.calls.Load(), "an idle poll reads the store once")
	require.Zero(t, slept, "and does not wait")

	// A job whose upload window closes after the call's time is not waited for.
	_, err = st.Create(context.Background(), job.Draft{Source: job.SourceAPI, UploadWindow: time.Hour})
	require.NoError(t, err)
	st.calls.Store(0)
	_, err = p.Poll(context.Background())
	require.NoError(t, err)
	require.Equal(t, int64(1), st.calls.Load())
	require.Zero(t, slept)
}

func TestPollStopsBeforeTheFunctionTimeout(t *testing.T) {
	// A context's deadline is in real time, so this clock starts at the real now.
	start := clock.System().Now()
	clk := clocktest.NewFake(start)
	st := newStore(t, clk)
	_, err := st.Create(context.Background(), job.Draft{Source: job.SourceAPI, UploadWindow: 20 * time.Second})
	require.NoError(t, err)
	p := pipeline.New(pipeline.Deps{
		Store: st, Clock: clk, Log: logs.Logger(t),
		Sleep: func(_ context.Context, d time.Duration) error { clk.Advance(d); return nil },
	}, pipeline.Config{})
	// The call's context ends in 25 s: with 10 s kept for the job in hand, the
	// call may not wait for work due in 20 s.
	ctx, cancel := context.WithDeadline(context.Background(), clk.Now().Add(25*time.Second))
	defer cancel()
	_, err = p.Poll(ctx)
	require.NoError(t, err)
	require.Equal(t, start, clk.Now(), "it returned without waiting")
}
