package admission_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/clock/clocktest"
	"transcriber/internal/errs"
	"transcriber/internal/job"
	"transcriber/internal/pipeline/admission"
	"transcriber/internal/quota"
	"transcriber/internal/spend"
	"transcriber/internal/store/sqlite"
)

// The admission's contract, with the embedded store's counters: a piece
// takes all it needs or nothing, says what refused it and until when,
// nothing a job recorded is taken twice, nothing is given back twice, and
// no ending — done, failed, dead, deleted, a crash — leaves anything
// counted beyond what was recognized for longer than its window.
//
// A job here goes through the calls the pipeline makes, as it makes them:
// Reserve when its length is known (prepare), Take before each piece is
// submitted (admit), Unsent when a submission was refused (submit),
// Release when a save lowered its reservation (prepare) and when a save
// ended it (settle). "Saving" is keeping the job value; a crash is losing it.

// At 10:03 the request quota's window is 10:00–10:10 (71 requests of the
// default 500 an hour).
var (
	start       = time.Date(2026, 11, 29, 10, 3, 0, 0, time.UTC)
	today       = time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	thisMonth   = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	requestsWin = time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
)

const payer = "tok:a"

type env struct {
	t        *testing.T
	ctx      context.Context
	clk      *clocktest.Fake
	counters quota.Counters
	limits   spend.Limits
	seq      int
}

// newEnv returns counters on a fresh database and an admission over them
// with cfg (its Counters, Clock and, unless set, Limits filled in).
func newEnv(t *testing.T, cfg admission.Config) (*env, *admission.Admission) {
	t.Helper()
	clk := clocktest.NewFake(start)
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "jobs.db"), clk)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	e := &env{t: t, ctx: context.Background(), clk: clk, counters: sqlite.NewCounters(db)}
	if cfg.Limits.AudioPerDay == 0 && cfg.Limits.ActiveJobs == 0 {
		cfg.Limits = spend.Limits{AudioPerDay: time.Hour, ActiveJobs: 10}
	}
	e.limits = cfg.Limits
	cfg.Counters, cfg.Clock = e.counters, clk
	return e, admission.New(cfg)
}

func (e *env) used(key string, window time.Time) int64 {
	e.t.Helper()
	n, err := e.counters.Used(e.ctx, key, window)
	require.NoError(e.t, err)
	return n
}

func (e *env) requests() int64 { return e.used("speechkit_requests", requestsWin) }
func (e *env) audio() int64    { return e.used(spend.DayKey(payer), today) }
func (e *env) month() int64    { return e.used(spend.MonthKey, thisMonth) }
func (e *env) active() int64   { return e.used(spend.ActiveKey(payer), today) }

// made is a job of payer's, made as the API makes one (its place among
// the unfinished taken), whose audio of pieces pieces of 10 s each is
// ready and reserved (15 billed seconds a piece, SpeechKit's least a
// file), none submitted: converted, as prepare saves it.
func (e *env) made(a *admission.Admission, pieces int) job.Job {
	e.t.Helper()
	_, err := spend.Admit(e.ctx, e.counters, e.limits, payer, e.clk.Now())
	require.NoError(e.t, err)
	e.seq++
	j := job.Job{ID: fmt.Sprintf("job-%d", e.seq), ChargedTo: payer, State: job.Created, CreatedAt: e.clk.Now(),
		DurationMs: int64(pieces) * 10_000}
	lengths := make([]int64, pieces)
	for i := range lengths {
		lengths[i] = 10_000
	}
	took, err := a.Reserve(e.ctx, &j, lengths, false)
	require.NoError(e.t, err)
	require.True(e.t, took)
	for i := range pieces {
		j.Segments = append(j.Segments, job.Segment{Seq: i, StartMs: int64(i) * 10_000, DurationMs: 10_000, Container: "OGG_OPUS"})
	}
	j.State = job.Converted
	return j
}

// submit takes what piece i needs and gives it a recognition.
func (e *env) submit(a *admission.Admission, j *job.Job, i int) {
	e.t.Helper()
	_, err := a.Take(e.ctx, *j, i)
	require.NoError(e.t, err)
	j.Segments[i].OperationID = fmt.Sprintf("op-%s-%d", j.ID, i)
}

// submitAll submits every piece of j and moves it to transcribe.
func (e *env) submitAll(a *admission.Admission, j *job.Job) {
	for i := range j.Segments {
		e.submit(a, j, i)
	}
	j.State = job.Transcribe
}

// over ends piece i's recognition: done, or dropped to be submitted again.
func over(j *job.Job, i int, done bool) {
	if done {
		j.Segments[i].Done = true
	} else {
		j.Segments[i].OperationID = ""
	}
}

// end saves j ended in state (failed or dead with a code, or done) and
// tells the admission, as settle does.
func end(ctx context.Context, a *admission.Admission, was job.Job, state job.State) job.Job {
	ended := was
	ended.Segments = append([]job.Segment(nil), was.Segments...)
	ended.State = state
	a.Release(ctx, was, ended)
	return ended
}

func refusal(t *testing.T, err error) *admission.Refused {
	t.Helper()
	var r *admission.Refused
	require.ErrorAs(t, err, &r)
	return r
}

func TestContract(t *testing.T) {
	t.Run("a full request window refuses, and says until when", func(t *testing.T) {
		e, a := newEnv(t, admission.Config{RequestsPerHour: 35}) // 5 a 10-minute window
		j := e.made(a, 7)
		for i := range 5 {
			e.submit(a, &j, i)
		}
		_, err := a.Take(e.ctx, j, 5)
		got := refusal(t, err)
		require.Equal(t, admission.Requests, got.Resource)
		require.Equal(t, requestsWin.Add(10*time.Minute), got.Until, "when the window ends")
		require.Equal(t, int64(5), e.requests())
		require.Equal(t, requestsWin.Add(10*time.Minute), a.RequestsFreeAt(e.clk.Now()))
	})

	t.Run("a submission refused before it was accepted gives its request back; one perhaps accepted keeps it", func(t *testing.T) {
		e, a := newEnv(t, admission.Config{RequestsPerHour: 35}) // 5 a 10-minute window
		j := e.made(a, 3)
		w, err := a.Take(e.ctx, j, 0)
		require.NoError(t, err)
		require.Equal(t, requestsWin, w)
		e.clk.Set(requestsWin.Add(10*time.Minute + time.Second)) // the refusal comes in the next window
		a.Unsent(e.ctx, j, w)
		require.Zero(t, e.requests(), "refused: its place in the window it was counted in goes back")
		require.Zero(t, e.used("speechkit_requests", requestsWin.Add(10*time.Minute)), "nor to another window")

		_, err = a.Take(e.ctx, j, 1) // perhaps accepted: not given back
		require.NoError(t, err)
		require.Equal(t, int64(1), e.used("speechkit_requests", requestsWin.Add(10*time.Minute)), "perhaps accepted: counted")

		// Refusals never fill the window: five more, then five taken.
		for range 5 {
			w, err := a.Take(e.ctx, j, 2)
			require.NoError(t, err)
			a.Unsent(e.ctx, j, w)
		}
		for i := range 4 {
			_, err := a.Take(e.ctx, j, 2)
			require.NoError(t, err, "request %d", i)
		}
		_, err = a.Take(e.ctx, j, 2)
		require.Equal(t, admission.Requests, refusal(t, err).Resource, "the five counted fill it")
	})

	t.Run("audio beyond the reservation takes nothing and fails the job", func(t *testing.T) {
		e, a := newEnv(t, admission.Config{RequestsPerHour: 500})
		j := e.made(a, 2)                 // 30 billed seconds reserved: 15 a piece
		j.Segments[1].DurationMs += 5_001 // billed 16 s: a segment set by anything but the metered conversion
		_, err := a.Take(e.ctx, j, 0)
		got := refusal(t, err)
		require.Equal(t, admission.Audio, got.Resource)
		require.True(t, got.Until.IsZero(), "never")
		require.Equal(t, admission.CodeOverReserved, errs.CodeOf(err))
		require.Equal(t, errs.Permanent, errs.KindOf(err))
		require.Zero(t, e.requests())

		j.Segments[1].DurationMs-- // billed 15 s: within
		_, err = a.Take(e.ctx, j, 0)
		require.NoError(t, err)
	})

	t.Run("a counter that fails keeps nothing", func(t *testing.T) {
		e, _ := newEnv(t, admission.Config{})
		a := admission.New(admission.Config{Counters: failing{Counters: e.counters, key: "speechkit_requests"},
			Limits: e.limits, RequestsPerHour: 500, Clock: e.clk})
		j := e.made(a, 1)
		_, err := a.Take(e.ctx, j, 0)
		require.Error(t, err)
		var r *admission.Refused
		require.NotErrorAs(t, err, &r, "a failure is not a refusal")
		require.Zero(t, e.requests())
	})

	t.Run("nothing a job recorded is taken twice", func(t *testing.T) {
		e, a := newEnv(t, admission.Config{RequestsPerHour: 500})
		j := e.made(a, 2)
		took, err := a.Reserve(e.ctx, &j, []int64{10_000, 10_000}, false)
		require.NoError(t, err)
		require.False(t, took, "a job with a reservation (a retried probe) reserves nothing")
		require.Equal(t, int64(30), e.audio())

		e.submit(a, &j, 0)
		_, err = a.Take(e.ctx, j, 0)
		require.ErrorIs(t, err, admission.ErrTaken, "a submitted piece")
		j.Segments[1].Done = true
		_, err = a.Take(e.ctx, j, 1)
		require.ErrorIs(t, err, admission.ErrTaken, "a piece done")
		require.Equal(t, int64(1), e.requests())
	})

	t.Run("nothing is given back twice", func(t *testing.T) {
		e, a := newEnv(t, admission.Config{RequestsPerHour: 500})
		other, j := e.made(a, 1), e.made(a, 1)
		e.submitAll(a, &other)
		e.submitAll(a, &j)
		over(&j, 0, true)

		ended := end(e.ctx, a, j, job.Done)
		a.Release(e.ctx, ended, ended) // told again: it ended before
		require.Equal(t, int64(1), e.active(), "the other job's place among the unfinished is still counted")

		failed := e.made(a, 1)
		gone := end(e.ctx, a, failed, job.Failed)
		a.Release(e.ctx, gone, gone)
		require.Equal(t, int64(30), e.audio(), "the two recognized jobs' billed seconds; the failed one's given back once")
	})

	t.Run("a reservation lowered to the audio gives back the rest once saved", func(t *testing.T) {
		e, a := newEnv(t, admission.Config{})
		j := e.made(a, 5) // 75 s reserved
		reserved := j
		j.Segments = j.Segments[:2] // what the conversion made
		require.NoError(t, a.Settle(e.ctx, &j, a.Needs(j, false), true))
		require.Equal(t, int64(30), j.ReservedSeconds)
		require.Equal(t, int64(75), e.audio(), "nothing given back before the save")
		a.Release(e.ctx, reserved, j)
		require.Equal(t, int64(30), e.audio())
		require.Equal(t, int64(30), e.month())

		// A store that kept the reservation (it lowers none to 0) kept it
		// counted: nothing is given back that the job still records.
		k := e.made(a, 1)
		before := k
		require.NoError(t, a.Settle(e.ctx, &k, spend.Charge{}, true))
		saved := k
		saved.ReservedSeconds, saved.ReservedMicros = before.ReservedSeconds, before.ReservedMicros
		a.Release(e.ctx, before, saved)
		require.Equal(t, int64(45), e.audio())
	})

	t.Run("a reservation raised takes the limit first, and counts what was billed past it", func(t *testing.T) {
		e, a := newEnv(t, admission.Config{Limits: spend.Limits{AudioPerDay: 40 * time.Second}})
		j := e.made(a, 2) // 30 s reserved
		more := spend.Charge{Seconds: 41}
		err := a.Settle(e.ctx, &j, more, true)
		require.Equal(t, spend.CodeQuotaExceeded, errs.CodeOf(err), "the audio made would pass the day")
		require.Equal(t, int64(30), j.ReservedSeconds, "nothing moved")
		require.Equal(t, int64(30), e.audio(), "nothing counted")

		require.NoError(t, a.Settle(e.ctx, &j, spend.Charge{Seconds: 40}, true))
		require.Equal(t, int64(40), e.audio(), "raised within the day")
		require.NoError(t, a.Settle(e.ctx, &j, more, false), "what the answer billed is counted past the limit")
		require.Equal(t, int64(41), e.audio())
		require.Equal(t, int64(41), j.ReservedSeconds)
	})

	for _, tc := range []struct {
		name string
		// run takes a job of two pieces, 20 s billed 30, from converted to its end.
		run func(e *env, a *admission.Admission, j job.Job)
		// audio is what the payer's day still holds of it: what reached
		// the recognizer is paid for.
		audio int64
	}{
		{"done", func(e *env, a *admission.Admission, j job.Job) {
			e.submitAll(a, &j)
			over(&j, 0, true)
			over(&j, 1, true)
			end(e.ctx, a, j, job.Done)
		}, 30},
		{"failed before any submission", func(e *env, a *admission.Admission, j job.Job) {
			end(e.ctx, a, j, job.Failed)
		}, 0},
		{"failed when its first submission failed", func(e *env, a *admission.Admission, j job.Job) {
			_, err := a.Take(e.ctx, j, 0) // then the submission failed
			require.NoError(e.t, err)
			end(e.ctx, a, j, job.Failed)
		}, 0},
		{"failed after a piece was submitted", func(e *env, a *admission.Admission, j job.Job) {
			e.submit(a, &j, 0)
			end(e.ctx, a, j, job.Failed)
		}, 30},
		{"dead in transcribe", func(e *env, a *admission.Admission, j job.Job) {
			e.submitAll(a, &j)
			end(e.ctx, a, j, job.Dead)
		}, 30},
		{"dead with its recognitions dropped", func(e *env, a *admission.Admission, j job.Job) {
			e.submitAll(a, &j)
			over(&j, 0, false)
			over(&j, 1, false)
			end(e.ctx, a, j, job.Dead)
		}, 30},
	} {
		t.Run("ended "+tc.name, func(t *testing.T) {
			e, a := newEnv(t, admission.Config{RequestsPerHour: 500})
			j := e.made(a, 2)
			require.Equal(t, int64(1), e.active())
			tc.run(e, a, j)
			require.Equal(t, tc.audio, e.audio(), "audio kept only for what reached the recognizer")
			require.Equal(t, tc.audio, e.month())
			require.Zero(t, e.active(), "its place among the unfinished went back")
		})
	}

	t.Run("a crash after a reservation errs towards too much", func(t *testing.T) {
		e, a := newEnv(t, admission.Config{})
		j := e.made(a, 1) // reserved, then the call died before its save
		j.ReservedSeconds, j.ReservedDay = 0, time.Time{}
		took, err := a.Reserve(e.ctx, &j, []int64{10_000}, false) // the retried probe reserves again
		require.NoError(t, err)
		require.True(t, took)
		require.Equal(t, int64(30), e.audio(), "counted twice: too much, never too little")
		end(e.ctx, a, j, job.Failed)
		require.Equal(t, int64(15), e.audio(), "the recorded reservation went back; the lost one leaves with its day")
	})
}

// failing counters fail every reservation under key.
type failing struct {
	quota.Counters
	key string
}

func (f failing) Reserve(ctx context.Context, key string, window time.Time, amount, limit int64) (int64, bool, error) {
	if key == f.key {
		return 0, false, errs.New(errs.Unavailable, "counters_down", "the counters are unavailable")
	}
	return f.Counters.Reserve(ctx, key, window, amount, limit)
}
