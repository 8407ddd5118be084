package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"transcriber/internal/clock/clocktest"
	"transcriber/internal/errs"
	"transcriber/internal/job"
	"transcriber/internal/pipeline"
	"transcriber/internal/quota"
	"transcriber/internal/speechkit"
	"transcriber/internal/spend"
	"transcriber/internal/store/sqlite"
)

// submitRecognizer takes every submission (or answers submitErr) and
// counts them; its recognitions never finish.
type submitRecognizer struct {
	pipeline.Recognizer
	mu        sync.Mutex
	submitted int
	submitErr error
}

func (r *submitRecognizer) Submit(context.Context, speechkit.Request) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.submitErr != nil {
		return "", r.submitErr
	}
	r.submitted++
	return fmt.Sprintf("op-%d", r.submitted), nil
}

func (r *submitRecognizer) Check(context.Context, string) (bool, error) { return false, nil }

func (r *submitRecognizer) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.submitted
}

// uriObjects names objects by URI, all that a submission asks of them.
type uriObjects struct{ pipeline.Objects }

func (uriObjects) URI(key string) string { return "https://storage.example/bucket/" + key }

// quotaEnv is a store of jobs and counters on one database, at 10:03, in
// the 10-minute window 10:00-10:10.
type quotaEnv struct {
	ctx      context.Context
	clk      *clocktest.Fake
	st       job.Store
	counters quota.Counters
}

var windowEnd = time.Date(2026, 11, 29, 10, 10, 0, 0, time.UTC)

func newQuotaEnv(t *testing.T) *quotaEnv {
	t.Helper()
	clk := clocktest.NewFake(time.Date(2026, 11, 29, 10, 3, 0, 0, time.UTC))
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "jobs.db"), clk)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	return &quotaEnv{ctx: context.Background(), clk: clk, st: sqlite.NewJobStore(db), counters: sqlite.NewCounters(db)}
}

func (e *quotaEnv) pipeline(rec pipeline.Recognizer, counters quota.Counters, perHour int) *pipeline.Pipeline {
	return pipeline.New(pipeline.Deps{
		Store: e.st, Objects: uriObjects{}, Recognizer: rec, Clock: e.clk, Log: quiet(),
		Sleep: func(_ context.Context, d time.Duration) error { e.clk.Advance(d); return nil },
	}, pipeline.Config{RequestsPerHour: perHour, Counters: counters})
}

// converted makes a job whose audio is ready in segments pieces, none
// submitted: ingest takes it at submission. Its audio is long, so ingest
// hands it to the poll function once submitted.
func (e *quotaEnv) converted(t *testing.T, segments int) job.Job {
	t.Helper()
	j, err := e.st.Create(e.ctx, job.Draft{Source: job.SourceAPI, OwnerID: "o", Filename: "a.mp3", SizeBytes: 10})
	require.NoError(t, err)
	for _, s := range []job.State{job.Created, job.Converted} {
		j, err = e.st.Claim(e.ctx, j.ID, job.Ingest)
		require.NoError(t, err)
		j.State = s
		if s == job.Converted {
			j.DurationMs = int64(segments) * 10 * 60 * 1000
			j.ReservedSeconds = spend.Seconds(j.DurationMs) // what prepare reserves
			for i := 0; i < segments; i++ {
				j.Segments = append(j.Segments, job.Segment{Seq: i, StartMs: int64(i) * 600_000, DurationMs: 600_000,
					AudioKey: job.AudioKey(j.ID, i), Container: "OGG_OPUS"})
			}
		}
		j, err = e.st.Save(e.ctx, j, job.Next{})
		require.NoError(t, err)
	}
	return j
}

func (e *quotaEnv) get(t *testing.T, id string) job.Job {
	t.Helper()
	j, err := e.st.Get(e.ctx, id)
	require.NoError(t, err)
	return j
}

// requireWaiting checks a job left at the quota: in the state it had, due
// when the window ends, with no attempt counted and no failure recorded.
func (e *quotaEnv) requireWaiting(t *testing.T, id string, state job.State) job.Job {
	t.Helper()
	j := e.get(t, id)
	require.Equal(t, state, j.State, "the job waits where it was")
	require.Equal(t, windowEnd, j.NextRunAt, "due when the quota's window ends")
	require.Zero(t, j.Attempts, "waiting for the quota costs no attempt")
	require.Empty(t, j.ClaimID, "its claim ended")
	require.Empty(t, j.ErrorCode, "a wait is no failure")
	return j
}

// With a quota of 35 an hour (5 in each 10-minute window), 8 jobs submit 5;
// the other 3 wait, unfailed and with their attempts, for the next window,
// where they are submitted.
func TestSubmissionsWaitAtTheQuota(t *testing.T) {
	e := newQuotaEnv(t)
	rec := &submitRecognizer{}
	p := e.pipeline(rec, e.counters, 35)
	var jobs []job.Job
	for i := 0; i < 8; i++ {
		jobs = append(jobs, e.converted(t, 1))
	}
	for _, j := range jobs {
		require.NoError(t, p.Uploaded(e.ctx, job.SourceKey(j.ID)))
	}
	require.Equal(t, 5, rec.count(), "the quota's window takes 5")
	var waiting []job.Job
	for _, j := range jobs {
		if got := e.get(t, j.ID); got.State == job.Transcribe {
			continue
		}
		waiting = append(waiting, e.requireWaiting(t, j.ID, job.Converted))
	}
	require.Len(t, waiting, 3)
	used, err := e.counters.Used(e.ctx, "speechkit_requests", windowEnd.Add(-10*time.Minute))
	require.NoError(t, err)
	require.Equal(t, int64(5), used)

	e.clk.Set(windowEnd)
	stats, err := p.Poll(e.ctx)
	require.NoError(t, err)
	require.Equal(t, 3, stats.Ingested, "the sweep takes the waiting jobs when the window opens")
	require.Equal(t, 8, rec.count())
	for _, j := range waiting {
		got := e.get(t, j.ID)
		require.Equal(t, job.Transcribe, got.State)
		require.NotEmpty(t, got.Segments[0].OperationID)
	}
}

// A job whose segments outnumber what the window has left keeps the
// submissions it made and goes on from there in the next window.
func TestAJobPartlySubmittedAtTheQuotaGoesOnLater(t *testing.T) {
	e := newQuotaEnv(t)
	rec := &submitRecognizer{}
	p := e.pipeline(rec, e.counters, 35)
	j := e.converted(t, 7)

	require.NoError(t, p.Uploaded(e.ctx, job.SourceKey(j.ID)))
	require.Equal(t, 5, rec.count())
	got := e.requireWaiting(t, j.ID, job.Converted)
	for i, sg := range got.Segments {
		require.Equal(t, i < 5, sg.OperationID != "", "segment %d", i)
	}

	e.clk.Set(windowEnd)
	require.NoError(t, p.Uploaded(e.ctx, job.SourceKey(j.ID)))
	require.Equal(t, 7, rec.count(), "only the 2 left are submitted")
	got = e.get(t, j.ID)
	require.Equal(t, job.Transcribe, got.State)
	require.Equal(t, "op-1", got.Segments[0].OperationID, "the first submissions are kept")
	require.Equal(t, "op-7", got.Segments[6].OperationID)
}

// SpeechKit's RESOURCE_EXHAUSTED on a submission is waited out like the
// counted quota: the job is due in the next window with its attempts, not
// released as a failed attempt. This holds without a counters store too.
func TestTheRecognizersQuotaAnswerIsWaitedOut(t *testing.T) {
	for name, counters := range map[string]func(e *quotaEnv) quota.Counters{
		"with counters":    func(e *quotaEnv) quota.Counters { return e.counters },
		"without counters": func(*quotaEnv) quota.Counters { return nil },
	} {
		t.Run(name, func(t *testing.T) {
			e := newQuotaEnv(t)
			quotaErr := errs.Wrap(errors.New("rpc error: code = ResourceExhausted"), errs.Unavailable,
				speechkit.CodeRecognitionQuota, "the speech recognizer's request quota is used up for now")
			rec := &submitRecognizer{submitErr: quotaErr}
			p := e.pipeline(rec, counters(e), pipeline.DefaultRequestsPerHour)
			j := e.converted(t, 2)

			require.NoError(t, p.Uploaded(e.ctx, job.SourceKey(j.ID)))
			// The recognizer's answer is transient: it waits for the
			// window, and counts an attempt, since gRPC gives the same code
			// for limits no wait would pass.
			got := e.get(t, j.ID)
			require.Equal(t, job.Converted, got.State)
			require.Equal(t, windowEnd, got.NextRunAt, "due when the quota's window ends")
			require.Equal(t, 1, got.Attempts)
			require.Empty(t, got.ClaimID)

			rec.mu.Lock()
			rec.submitErr = nil
			rec.mu.Unlock()
			e.clk.Set(windowEnd)
			require.NoError(t, p.Uploaded(e.ctx, job.SourceKey(j.ID)))
			require.Equal(t, job.Transcribe, e.get(t, j.ID).State)
		})
	}
}

// Without a counters store, or with a quota of 0, nothing is counted.
func TestNoPacingWithoutCountersOrQuota(t *testing.T) {
	for name, tc := range map[string]struct {
		counters bool
		perHour  int
	}{
		"no counters store": {false, 35},
		"a quota of 0":      {true, 0},
	} {
		t.Run(name, func(t *testing.T) {
			e := newQuotaEnv(t)
			rec := &submitRecognizer{}
			var c quota.Counters
			if tc.counters {
				c = e.counters
			}
			p := e.pipeline(rec, c, tc.perHour)
			j := e.converted(t, 8)
			require.NoError(t, p.Uploaded(e.ctx, job.SourceKey(j.ID)))
			require.Equal(t, 8, rec.count())
			require.Equal(t, job.Transcribe, e.get(t, j.ID).State)
			used, err := e.counters.Used(e.ctx, "speechkit_requests", windowEnd.Add(-10*time.Minute))
			require.NoError(t, err)
			require.Zero(t, used)
		})
	}
}

// A recognizer that always answers RESOURCE_EXHAUSTED (gRPC's code for a
// message too large, too) does not keep a job waiting for ever: each answer
// costs an attempt, and the job ends dead.
func TestAQuotaAnswerThatNeverPassesEndsTheJob(t *testing.T) {
	e := newQuotaEnv(t)
	quotaErr := errs.Wrap(errors.New("rpc error: code = ResourceExhausted"), errs.Unavailable,
		speechkit.CodeRecognitionQuota, "the speech recognizer's request quota is used up for now")
	p := e.pipeline(&submitRecognizer{submitErr: quotaErr}, e.counters, pipeline.DefaultRequestsPerHour)
	j := e.converted(t, 1)
	for i := 0; i < 2*job.DefaultPolicy.MaxAttempts && !e.get(t, j.ID).State.Terminal(); i++ {
		require.NoError(t, p.Uploaded(e.ctx, job.SourceKey(j.ID)))
		e.clk.Set(e.get(t, j.ID).NextRunAt)
	}
	got := e.get(t, j.ID)
	require.Equal(t, job.Dead, got.State, "%s: %s", got.ErrorCode, got.ErrorMessage)
}

// answeringRecognizer answers its submissions from answers, in order (nil
// takes the submission), then takes every one.
type answeringRecognizer struct {
	submitRecognizer
	answers []error
}

func (r *answeringRecognizer) Submit(ctx context.Context, req speechkit.Request) (string, error) {
	r.mu.Lock()
	var err error
	if len(r.answers) > 0 {
		err, r.answers = r.answers[0], r.answers[1:]
	}
	r.mu.Unlock()
	if err != nil {
		return "", err
	}
	return r.submitRecognizer.Submit(ctx, req)
}

// speechkitErr is the error the SpeechKit client makes of a gRPC code on
// a submission.
func speechkitErr(code codes.Code) error {
	return errs.Wrap(status.Error(code, "fake"), errs.Unavailable, speechkit.CodeUnavailable, "the speech recognizer is unavailable")
}

// Only what the recognizer may have accepted counts against its quota: a
// submission it refused before accepting it (UNAVAILABLE) gives its place
// in the window back; one whose fate is unknown (a time-out) keeps it.
func TestOnlyWhatTheRecognizerAcceptedCountsAgainstTheQuota(t *testing.T) {
	e := newQuotaEnv(t)
	rec := &answeringRecognizer{answers: []error{speechkitErr(codes.Unavailable), speechkitErr(codes.DeadlineExceeded)}}
	p := e.pipeline(rec, e.counters, 35)
	requests := func() int64 {
		n, err := e.counters.Used(e.ctx, "speechkit_requests", windowEnd.Add(-10*time.Minute))
		require.NoError(t, err)
		return n
	}

	refused := e.converted(t, 1)
	require.NoError(t, p.Uploaded(e.ctx, job.SourceKey(refused.ID)))
	require.Equal(t, job.Converted, e.get(t, refused.ID).State, "the submission failed")
	require.Zero(t, requests(), "refused before it was accepted: not counted")

	timedOut := e.converted(t, 1)
	require.NoError(t, p.Uploaded(e.ctx, job.SourceKey(timedOut.ID)))
	require.Equal(t, int64(1), requests(), "perhaps accepted: counted")

	taken := e.converted(t, 1)
	require.NoError(t, p.Uploaded(e.ctx, job.SourceKey(taken.ID)))
	require.Equal(t, job.Transcribe, e.get(t, taken.ID).State)
	require.Equal(t, int64(2), requests())
}
