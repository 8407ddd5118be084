package pipeline_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/errs"
	"transcriber/internal/job"
	"transcriber/internal/pipeline"
	"transcriber/internal/pipeline/admission"
	"transcriber/internal/speechkit"
	"transcriber/internal/transcript"
)

// flightRecognizer numbers its operations op-1, op-2, … in the order they
// are submitted; an operation is done once finish names it, and its result
// is one word, the operation's id.
type flightRecognizer struct {
	mu        sync.Mutex
	submitted []string
	done      map[string]bool
}

func newFlightRecognizer() *flightRecognizer { return &flightRecognizer{done: map[string]bool{}} }

func (r *flightRecognizer) Submit(context.Context, speechkit.Request) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	op := fmt.Sprintf("op-%d", len(r.submitted)+1)
	r.submitted = append(r.submitted, op)
	return op, nil
}

func (r *flightRecognizer) Check(_ context.Context, op string) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.done[op], nil
}

func (r *flightRecognizer) Result(_ context.Context, op string) (transcript.Transcript, error) {
	return transcript.Transcript{Utterances: []transcript.Utterance{{StartMs: 10, EndMs: 500, Text: op, Normal: op,
		Words: []transcript.Word{{Text: op, StartMs: 10, EndMs: 500}}}}}, nil
}

func (r *flightRecognizer) Delete(context.Context, string) error { return nil }

func (r *flightRecognizer) finish(ops ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, op := range ops {
		r.done[op] = true
	}
}

func (r *flightRecognizer) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.submitted)
}

func (e *quotaEnv) flightPipeline(rec pipeline.Recognizer, cfg pipeline.Config) *pipeline.Pipeline {
	cfg.Counters = e.counters
	return pipeline.New(pipeline.Deps{
		Store: e.st, Objects: &putObjects{}, Recognizer: rec, Clock: e.clk, Log: quiet(),
		Sleep: func(_ context.Context, d time.Duration) error { e.clk.Advance(d); return nil },
	}, cfg)
}

// submittedOps lists the operations of j's segments, "" for one waiting.
func submittedOps(j job.Job) []string {
	ops := make([]string, len(j.Segments))
	for i, sg := range j.Segments {
		ops[i] = sg.OperationID
	}
	return ops
}

func TestAJobHasAtMostJobInFlightRecognitionsAndSubmitsTheRestAsTheyFinish(t *testing.T) {
	e := newQuotaEnv(t)
	rec := newFlightRecognizer()
	p := e.flightPipeline(rec, pipeline.Config{JobInFlight: 2})
	j := e.converted(t, 5)

	require.NoError(t, p.Uploaded(e.ctx, job.SourceKey(j.ID)))
	got := e.get(t, j.ID)
	require.Equal(t, job.Transcribe, got.State, "a job whose pieces wait is in transcribe")
	require.Equal(t, []string{"op-1", "op-2", "", "", ""}, submittedOps(got))

	// The first two finish: the check that finds them done submits the next two at once.
	rec.finish("op-1", "op-2")
	e.clk.Set(got.NextRunAt)
	_, err := p.Poll(e.ctx)
	require.NoError(t, err)
	got = e.get(t, j.ID)
	require.Equal(t, []string{"op-1", "op-2", "op-3", "op-4", ""}, submittedOps(got))
	require.True(t, got.Segments[0].Done && got.Segments[1].Done)

	rec.finish("op-3", "op-4")
	e.clk.Set(got.NextRunAt)
	_, err = p.Poll(e.ctx)
	require.NoError(t, err)
	got = e.get(t, j.ID)
	require.Equal(t, []string{"op-1", "op-2", "op-3", "op-4", "op-5"}, submittedOps(got))

	rec.finish("op-5")
	e.clk.Set(got.NextRunAt)
	_, err = p.Poll(e.ctx)
	require.NoError(t, err)
	got = e.get(t, j.ID)
	require.Equal(t, job.Done, got.State)
	require.Equal(t, 5, rec.count(), "each piece submitted once")
}

func TestAFailedRecognitionIsDroppedToBeSubmittedAgain(t *testing.T) {
	e := newQuotaEnv(t)
	rec := &failingRecognizer{flightRecognizer: newFlightRecognizer()}
	p := e.flightPipeline(rec, pipeline.Config{})
	a := e.converted(t, 1)
	require.NoError(t, p.Uploaded(e.ctx, job.SourceKey(a.ID)))
	e.clk.Set(e.get(t, a.ID).NextRunAt)
	_, err := p.Poll(e.ctx)
	require.NoError(t, err)
	got := e.get(t, a.ID)
	require.Equal(t, []string{""}, submittedOps(got), "dropped, to be submitted again")
}

// failingRecognizer's recognitions fail as SpeechKit's do when the audio
// could not be recognized this time.
type failingRecognizer struct{ *flightRecognizer }

func (failingRecognizer) Check(context.Context, string) (bool, error) {
	return true, errFailedRecognition
}

var errFailedRecognition = errs.New(errs.Unavailable, speechkit.CodeRecognitionFailed, "the recognition failed; it is submitted again")

// clockedRecognizer notes when each check came.
type clockedRecognizer struct {
	*flightRecognizer
	now    func() time.Time
	checks []time.Time
}

func (r *clockedRecognizer) Check(ctx context.Context, op string) (bool, error) {
	r.checks = append(r.checks, r.now())
	return r.flightRecognizer.Check(ctx, op)
}

// A voice note is first checked a quarter of a second after its
// submission, then at pauses doubling up to a second: most of a short
// recording's wait is the recognizer's, not ours.
func TestAShortRecordingIsCheckedSoonAfterItsSubmission(t *testing.T) {
	e := newQuotaEnv(t)
	rec := &clockedRecognizer{flightRecognizer: newFlightRecognizer(), now: e.clk.Now}
	p := e.flightPipeline(rec, pipeline.Config{})
	j := e.converted(t, 1)
	j, err := e.st.Claim(e.ctx, j.ID, job.Ingest)
	require.NoError(t, err)
	j.DurationMs, j.Segments[0].DurationMs = 5000, 5000
	_, err = e.st.Save(e.ctx, j, job.Next{})
	require.NoError(t, err)

	start := e.clk.Now()
	require.NoError(t, p.Uploaded(e.ctx, job.SourceKey(j.ID)))
	var at []time.Duration
	for _, c := range rec.checks[:5] {
		at = append(at, c.Sub(start))
	}
	ms := time.Millisecond
	require.Equal(t, []time.Duration{250 * ms, 750 * ms, 1750 * ms, 2750 * ms, 3750 * ms}, at)
}

// brokenChecks's checks fail with err.
type brokenChecks struct {
	*flightRecognizer
	err error
}

func (r brokenChecks) Check(context.Context, string) (bool, error) { return false, r.err }

// A job whose checks keep failing for its own reasons ends dead; one whose
// checks meet an outage of the recognizer is held through it, its attempts
// not spent past the failures that opened the breaker.
func TestChecksThatKeepFailing(t *testing.T) {
	for name, tc := range map[string]struct {
		err      error
		state    job.State
		attempts int
	}{
		"its own failure": {errs.New(errs.Internal, "speechkit_error", ""), job.Dead, 0},
		"an outage": {errs.New(errs.Unavailable, speechkit.CodeUnavailable, "the speech recognizer is unavailable"),
			job.Transcribe, admission.DefaultOutageAfter - 1},
	} {
		t.Run(name, func(t *testing.T) {
			e := newQuotaEnv(t)
			rec := newFlightRecognizer()
			p := e.flightPipeline(rec, pipeline.Config{})
			a := e.converted(t, 2)
			require.NoError(t, p.Uploaded(e.ctx, job.SourceKey(a.ID)))

			e.clk.Set(e.get(t, a.ID).NextRunAt.Add(time.Minute))
			down := e.flightPipeline(brokenChecks{rec, tc.err}, pipeline.Config{})
			_, err := down.Poll(e.ctx)
			require.NoError(t, err)
			got := e.get(t, a.ID)
			require.Equal(t, tc.state, got.State, "within the call")
			require.Equal(t, tc.attempts, got.Attempts)
		})
	}
}
