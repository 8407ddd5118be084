package pipeline_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/job"
	"transcriber/internal/pipeline"
)

// checkTimes is a recognizer that records the clock's time of each
// status check.
type checkTimes struct {
	*flightRecognizer
	clk interface{ Now() time.Time }
	mu  sync.Mutex
	at  []time.Time
}

func (r *checkTimes) Check(ctx context.Context, op string) (bool, error) {
	r.mu.Lock()
	r.at = append(r.at, r.clk.Now())
	r.mu.Unlock()
	return r.flightRecognizer.Check(ctx, op)
}

// An instance spaces its status checks with a margin under SpeechKit's 5
// a second: any six span more than a second and 200 ms, so no second
// holds six even when the first is late by up to 200 ms against the
// last (a sleep that wakes late, a slower request). Spaced exactly
// 200 ms, six land within one closed second, and within 999 ms with 1 ms
// of lateness, as six were seen to land at SpeechKit.
func TestStatusChecksKeepAMarginUnderFiveASecond(t *testing.T) {
	e := newQuotaEnv(t)
	rec := &checkTimes{flightRecognizer: newFlightRecognizer(), clk: e.clk}
	p := e.flightPipeline(rec, pipeline.Config{})
	var due time.Time
	for range 12 {
		j := e.converted(t, 1)
		require.NoError(t, p.Uploaded(e.ctx, job.SourceKey(j.ID)))
		if next := e.get(t, j.ID).NextRunAt; next.After(due) {
			due = next
		}
	}
	e.clk.Set(due)
	_, err := p.Poll(e.ctx)
	require.NoError(t, err)

	rec.mu.Lock()
	at := append([]time.Time(nil), rec.at...)
	rec.mu.Unlock()
	require.GreaterOrEqual(t, len(at), 12, "every job checked")
	const late = 200 * time.Millisecond
	for i := 0; i+5 < len(at); i++ {
		require.Greater(t, at[i+5].Sub(at[i]), time.Second+late, "checks %d to %d", i+1, i+6)
	}
}
