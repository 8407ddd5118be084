package pipeline_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/errs"
	"transcriber/internal/job"
	"transcriber/internal/pipeline"
	"transcriber/internal/speechkit"
	"transcriber/internal/spend"
)

// finishObjects signs reads, keeps what is put, names objects by URI and
// deletes nothing: what a source that goes as it is needs, from the probe
// to the transcript, and a deleted job's purge.
type finishObjects struct{ putObjects }

func (*finishObjects) Delete(context.Context, string) error { return nil }

func (*finishObjects) PresignGet(_ context.Context, key string, _ time.Duration) (string, error) {
	return "https://storage.example/bucket/" + key + "?signed", nil
}

// admitted makes a job charged to payer that took its place among the
// payer's unfinished jobs, as the API and the bot make one, with its
// source accepted.
func (e *quotaEnv) admitted(t *testing.T, l spend.Limits, payer string) job.Job {
	t.Helper()
	place, err := spend.Admit(e.ctx, e.counters, l, payer, e.clk.Now())
	require.NoError(t, err)
	require.NotNil(t, place)
	j := e.accepted(t, payer)
	require.NoError(t, place.Settle(e.ctx, j, true))
	return j
}

func (e *quotaEnv) activePipeline(rec pipeline.Recognizer, l spend.Limits) *pipeline.Pipeline {
	return pipeline.New(pipeline.Deps{
		Store: e.st, Objects: &finishObjects{}, Media: passMedia{durationMs: 5_000}, Recognizer: rec, Clock: e.clk, Log: quiet(),
		Sleep: func(_ context.Context, d time.Duration) error { e.clk.Advance(d); return nil },
	}, pipeline.Config{Counters: e.counters, Limits: l, InlineCheckMax: time.Nanosecond})
}

// A job the pipeline ends, failed or done, gives back its place among
// its payer's unfinished jobs: the next job finds room.
func TestAnEndedJobFreesItsPlace(t *testing.T) {
	for name, tc := range map[string]struct {
		rec  pipeline.Recognizer
		poll bool
		want job.State
	}{
		"failed": {rec: &submitRecognizer{submitErr: errs.New(errs.Permanent, "bad_audio", "the recognizer refused the audio")}, want: job.Failed},
		"done":   {rec: &modelRecognizer{done: true}, poll: true, want: job.Done},
	} {
		t.Run(name, func(t *testing.T) {
			e := newQuotaEnv(t)
			l := spend.Limits{ActiveJobs: 1}
			p := e.activePipeline(tc.rec, l)
			j := e.admitted(t, l, "tok:a")
			_, err := spend.Admit(e.ctx, e.counters, l, "tok:a", e.clk.Now())
			require.Equal(t, spend.CodeTooManyActive, errs.CodeOf(err), "the one place is taken")

			require.NoError(t, p.Uploaded(e.ctx, job.SourceKey(j.ID)))
			if tc.poll {
				e.clk.Advance(time.Minute)
				_, err := p.Poll(e.ctx)
				require.NoError(t, err)
			}
			require.Equal(t, tc.want, e.get(t, j.ID).State)
			require.Zero(t, e.used(t, spend.ActiveKey("tok:a"), today), "its place is given back")
			e.admitted(t, l, "tok:a")
		})
	}
}

// A job deleted while a step holds it ends by the deletion, which gives
// its place back; the step, finding its claim lost, gives nothing more.
func TestAJobDeletedUnderAStepGivesItsPlaceBackOnce(t *testing.T) {
	e := newQuotaEnv(t)
	l := spend.Limits{ActiveJobs: 2}
	kept := e.admitted(t, l, "tok:a")
	j := e.admitted(t, l, "tok:a")
	require.Equal(t, int64(2), e.used(t, spend.ActiveKey("tok:a"), today))
	rec := &submitRecognizer{submitErr: errs.New(errs.Permanent, "bad_audio", "the recognizer refused the audio")}
	deleting := &deletingRecognizer{submitRecognizer: rec, delete: func() {
		d, err := e.st.Delete(e.ctx, j.ID)
		require.NoError(t, err)
		spend.Deleted(e.ctx, e.counters, l, j, d, quiet())
	}}
	require.NoError(t, e.activePipeline(deleting, l).Uploaded(e.ctx, job.SourceKey(j.ID)))
	got := e.get(t, j.ID)
	require.True(t, got.Deleted())
	require.Equal(t, job.ErrDeleted.Code, got.ErrorCode)
	require.Equal(t, int64(1), e.used(t, spend.ActiveKey("tok:a"), today), "given back once: %s still holds its place", kept.ID)
}

// deletingRecognizer deletes the job (delete) when it is submitted, then
// fails as its submitRecognizer does.
type deletingRecognizer struct {
	*submitRecognizer
	delete func()
}

func (r *deletingRecognizer) Submit(ctx context.Context, req speechkit.Request) (string, error) {
	r.delete()
	return r.submitRecognizer.Submit(ctx, req)
}
