package pipeline_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/errs"
	"transcriber/internal/job"
	"transcriber/internal/pipeline"
	"transcriber/internal/speechkit"
)

// slowRecognizer's checks each take a while; its recognitions never finish.
type slowRecognizer struct {
	*flightRecognizer
	advance func(time.Duration)
	checks  int
}

func (r *slowRecognizer) Check(context.Context, string) (bool, error) {
	r.checks++
	r.advance(5 * time.Second)
	return false, nil
}

// A backlog of due jobs does not keep a poll call past its time: it stops
// at its deadline and leaves the rest to the next call, so calls do not
// pile up to the function's timeout.
func TestAPollCallStopsAtItsDeadlineUnderABacklog(t *testing.T) {
	e := newQuotaEnv(t)
	rec := &slowRecognizer{flightRecognizer: newFlightRecognizer(), advance: func(d time.Duration) { e.clk.Advance(d) }}
	p := e.flightPipeline(rec, pipeline.Config{PollFor: 50 * time.Second})
	for range 25 {
		j := e.converted(t, 1)
		require.NoError(t, p.Uploaded(e.ctx, job.SourceKey(j.ID)))
	}
	e.clk.Advance(time.Hour) // all 25 are due
	rec.checks = 0
	start := e.clk.Now()
	st, err := p.Poll(e.ctx)
	require.NoError(t, err)
	require.Equal(t, 10, st.Checked, "one batch of 10 fills the 50 s; the other 15 wait for the next call")
	require.Equal(t, 10, rec.checks)
	require.Equal(t, 50*time.Second, e.clk.Now().Sub(start))
}

// checkQuotaRecognizer refuses every status check over its quota.
type checkQuotaRecognizer struct{ *flightRecognizer }

func (checkQuotaRecognizer) Check(context.Context, string) (bool, error) {
	return false, errs.Wrap(errors.New("rpc error: code = ResourceExhausted"), errs.Unavailable,
		speechkit.CodeCheckQuota, "the speech recognizer is asked too often for now")
}

// A check refused over the recognizer's quota of checks is only late: the
// job stays in transcribe, due again after its pause, with no attempt
// counted and no failure recorded, however often it happens.
func TestARefusedCheckCostsNoAttempt(t *testing.T) {
	e := newQuotaEnv(t)
	p := e.flightPipeline(checkQuotaRecognizer{newFlightRecognizer()}, pipeline.Config{})
	j := e.converted(t, 1)
	require.NoError(t, p.Uploaded(e.ctx, job.SourceKey(j.ID)))
	for range 8 {
		got := e.get(t, j.ID)
		e.clk.Set(got.NextRunAt)
		_, err := p.Poll(e.ctx)
		require.NoError(t, err)
	}
	got := e.get(t, j.ID)
	require.Equal(t, job.Transcribe, got.State)
	require.Zero(t, got.Attempts)
	require.Empty(t, got.ErrorCode)
	require.True(t, got.NextRunAt.After(e.clk.Now()), "due again later")
}

// A voice note the poll function's sweep submits (one the quota held back)
// is not checked inside the sweep: the sweep would wait up to 15 s for each
// such job. It is checked after its pause, like any other.
func TestTheSweepDoesNotWaitForAVoiceNote(t *testing.T) {
	e := newQuotaEnv(t)
	rec := &clockedRecognizer{flightRecognizer: newFlightRecognizer(), now: e.clk.Now}
	p := e.flightPipeline(rec, pipeline.Config{})
	j := e.converted(t, 1)
	j, err := e.st.Claim(e.ctx, j.ID, job.Ingest)
	require.NoError(t, err)
	j.DurationMs, j.Segments[0].DurationMs = 5000, 5000
	_, err = e.st.Save(e.ctx, j, job.Next{}) // due now: the sweep takes it
	require.NoError(t, err)

	start := e.clk.Now()
	st, err := p.Poll(e.ctx)
	require.NoError(t, err)
	require.Equal(t, 1, st.Ingested)
	require.NotEmpty(t, rec.checks, "checked within the call, once due")
	require.GreaterOrEqual(t, rec.checks[0].Sub(start), 2*time.Second, "first checked after the pause, by the poll, not 250 ms after its submission")
}
