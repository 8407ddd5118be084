package admission_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/errs"
	"transcriber/internal/pipeline/admission"
	"transcriber/internal/quota"
	"transcriber/internal/racetest"
)

// The breaker of a service every job needs, as the pipeline uses it: Pass
// before a call, Failed when a call failed for an outage, Answered when a
// call was answered. Its state is in the shared counters: two admissions
// over one store are two instances.

func mustPass(t *testing.T, a *admission.Admission, what string) {
	t.Helper()
	_, ok := a.Pass(context.Background(), admission.Recognizer)
	require.True(t, ok, what)
}

func mustWait(t *testing.T, a *admission.Admission, until time.Time, what string) {
	t.Helper()
	got, ok := a.Pass(context.Background(), admission.Recognizer)
	require.False(t, ok, what)
	require.Equal(t, until, got, what)
}

func TestBreaker(t *testing.T) {
	t.Run("opens after three failures in a row, probes at a growing interval, closes on an answer", func(t *testing.T) {
		e, a := newEnv(t, admission.Config{})
		ctx := e.ctx
		for i := 1; i < admission.DefaultOutageAfter; i++ {
			_, open := a.Failed(ctx, admission.Recognizer)
			require.False(t, open, "failure %d: the job's own, for all anyone knows", i)
			mustPass(t, a, "still closed")
		}
		until, open := a.Failed(ctx, admission.Recognizer)
		require.True(t, open, "the third in a row opens it")
		require.Equal(t, start.Add(10*time.Second), until)
		mustWait(t, a, until, "no call goes")
		_, ok := a.Pass(ctx, admission.Storage)
		require.True(t, ok, "each service has its own")

		// Each failed probe doubles the interval, up to 5 minutes.
		for _, d := range []time.Duration{20, 40, 80, 160, 300, 300} {
			e.clk.Set(until)
			mustPass(t, a, "the probe")
			mustWait(t, a, until.Add(10*time.Second), "the others wait while it runs")
			until, open = a.Failed(ctx, admission.Recognizer)
			require.True(t, open)
			require.Equal(t, e.clk.Now().Add(d*time.Second), until, "after a probe failed")
		}
		e.clk.Set(until)
		mustPass(t, a, "the probe")
		a.Answered(ctx, admission.Recognizer)
		mustPass(t, a, "closed")
		mustPass(t, a, "closed, for every call")
		_, open = a.Failed(ctx, admission.Recognizer)
		require.False(t, open, "counting starts again from one")
	})

	t.Run("failures between answers do not add up", func(t *testing.T) {
		e, a := newEnv(t, admission.Config{})
		for range 5 {
			_, open := a.Failed(e.ctx, admission.Recognizer)
			require.False(t, open)
			e.clk.Advance(2 * time.Second) // past the instance's view of a clean breaker
			a.Answered(e.ctx, admission.Recognizer)
		}
		mustPass(t, a, "closed")
	})

	t.Run("every instance sees one breaker, and one of them takes the probe", func(t *testing.T) {
		e, a := newEnv(t, admission.Config{})
		others := make([]*admission.Admission, 16)
		for i := range others {
			others[i] = admission.New(admission.Config{Counters: e.counters, Clock: e.clk})
		}
		var until time.Time
		for i := range admission.DefaultOutageAfter {
			until, _ = others[i].Failed(e.ctx, admission.Recognizer)
		}
		mustWait(t, a, until, "opened by the others")
		e.clk.Set(until)
		passed := make([]bool, len(others))
		racetest.Run(len(others), func(i int) { _, passed[i] = others[i].Pass(e.ctx, admission.Recognizer) })
		n := 0
		for _, p := range passed {
			if p {
				n++
			}
		}
		require.Equal(t, 1, n, "exactly one probe")
		a.Answered(e.ctx, admission.Recognizer)
		for _, o := range others {
			mustPass(t, o, "closed for every instance")
		}
	})

	t.Run("an outage across midnight is not forgotten", func(t *testing.T) {
		e, a := newEnv(t, admission.Config{})
		e.clk.Set(time.Date(2026, 11, 29, 23, 59, 55, 0, time.UTC))
		var until time.Time
		for range admission.DefaultOutageAfter {
			until, _ = a.Failed(e.ctx, admission.Recognizer)
		}
		e.clk.Set(time.Date(2026, 11, 30, 0, 0, 1, 0, time.UTC))
		mustWait(t, a, until, "still open the next day")
		e.clk.Set(until)
		mustPass(t, a, "the probe")
		until, open := a.Failed(e.ctx, admission.Recognizer)
		require.True(t, open)
		require.Equal(t, e.clk.Now().Add(20*time.Second), until, "the interval grew from yesterday's failures")
	})

	t.Run("a breaker that cannot be kept lets calls go and leaves failures to the retry policy", func(t *testing.T) {
		e, _ := newEnv(t, admission.Config{})
		a := admission.New(admission.Config{Counters: downCounters{e.counters}, Clock: e.clk})
		for range 5 {
			_, open := a.Failed(e.ctx, admission.Recognizer)
			require.False(t, open)
			mustPass(t, a, "unknown is closed")
		}
		none := admission.New(admission.Config{Clock: e.clk})
		for range 5 {
			_, open := none.Failed(e.ctx, admission.Recognizer)
			require.False(t, open, "no counters: no breaker")
		}
		mustPass(t, none, "no counters: no breaker")
	})
}

// downCounters fail every call.
type downCounters struct{ quota.Counters }

var errDown = errs.New(errs.Unavailable, "counters_down", "the counters are unavailable")

func (downCounters) Reserve(context.Context, string, time.Time, int64, int64) (int64, bool, error) {
	return 0, false, errDown
}
func (downCounters) Release(context.Context, string, time.Time, int64) error { return errDown }
func (downCounters) Used(context.Context, string, time.Time) (int64, error)  { return 0, errDown }
