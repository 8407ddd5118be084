package admission_test

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/clock"
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
// A job here goes through the calls the pipeline makes, as the pipeline
// makes them: Reserve when its length is known (prepare), Take before each
// piece is submitted (admit), Renew at each check, Release when a piece's
// recognition is over or its submission failed (check, submit), when a
// save lowered its reservation (prepare) and when a save ended it (settle).
// "Saving" is keeping the job value; a crash is losing it.

// At 10:03 the request quota's window is 10:00–10:10 (71 requests of the
// default 500 an hour), the in-flight count's 10:00–10:30 (twice the
// deferred jobs' 15-minute pause between checks).
var (
	start       = time.Date(2026, 11, 29, 10, 3, 0, 0, time.UTC)
	today       = time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	thisMonth   = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	requestsWin = time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	flight      = time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	flightNext  = flight.Add(30 * time.Minute)
)

const payer = "tok:a"

type env struct {
	t        *testing.T
	ctx      context.Context
	clk      *clock.Fake
	counters quota.Counters
	limits   spend.Limits
	seq      int
}

// newEnv returns counters on a fresh database and an admission over them
// with cfg (its Counters, Clock and, unless set, Limits filled in).
func newEnv(t *testing.T, cfg admission.Config) (*env, *admission.Admission) {
	t.Helper()
	clk := clock.NewFake(start)
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "jobs.db"), clk)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	e := &env{t: t, ctx: context.Background(), clk: clk, counters: sqlite.NewCounters(db)}
	if cfg.Limits.AudioPerDay == 0 && cfg.Limits.ActiveJobs == 0 {
		cfg.Limits = spend.Limits{AudioPerDay: time.Hour, ActiveJobs: 10}
	}
	e.limits = cfg.Limits
	cfg.Counters, cfg.Clock = e.counters, clk
	if cfg.CheckedWithin == 0 {
		cfg.CheckedWithin = 15 * time.Minute
	}
	return e, admission.New(cfg)
}

func (e *env) used(key string, window time.Time) int64 {
	e.t.Helper()
	n, err := e.counters.Used(e.ctx, key, window)
	require.NoError(e.t, err)
	return n
}

func (e *env) inFlight(window time.Time) int64 { return e.used("recognitions_in_flight", window) }
func (e *env) requests() int64                 { return e.used("speechkit_requests", requestsWin) }
func (e *env) audio() int64                    { return e.used(spend.DayKey(payer), today) }
func (e *env) month() int64                    { return e.used(spend.MonthKey, thisMonth) }
func (e *env) active() int64                   { return e.used(spend.ActiveKey(payer), today) }

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
func (e *env) submit(a *admission.Admission, j *job.Job, i int, r *admission.Round) {
	e.t.Helper()
	require.NoError(e.t, a.Take(e.ctx, j, i, r))
	j.Segments[i].OperationID = fmt.Sprintf("op-%s-%d", j.ID, i)
}

// submitAll submits every piece of j and moves it to transcribe.
func (e *env) submitAll(a *admission.Admission, j *job.Job) {
	var r admission.Round
	for i := range j.Segments {
		e.submit(a, j, i, &r)
	}
	j.State = job.Transcribe
}

// over ends piece i's recognition: done, or dropped to be submitted again.
func over(ctx context.Context, a *admission.Admission, j *job.Job, i int, done bool) {
	if done {
		j.Segments[i].Done = true
	} else {
		j.Segments[i].OperationID = ""
	}
	a.Release(ctx, *j, j)
}

// end saves j ended in state (failed or dead with a code, or done) and
// tells the admission, as settle does.
func end(ctx context.Context, a *admission.Admission, was job.Job, state job.State) job.Job {
	ended := was
	ended.Segments = append([]job.Segment(nil), was.Segments...)
	ended.State = state
	a.Release(ctx, was, &ended)
	return ended
}

func refusal(t *testing.T, err error) *admission.Refused {
	t.Helper()
	var r *admission.Refused
	require.ErrorAs(t, err, &r)
	return r
}

func TestContract(t *testing.T) {
	t.Run("a full request window takes no place in flight, and says until when", func(t *testing.T) {
		e, a := newEnv(t, admission.Config{RequestsPerHour: 35, MaxInFlight: 10}) // 5 a 10-minute window
		j := e.made(a, 7)
		var r admission.Round
		for i := range 5 {
			e.submit(a, &j, i, &r)
		}
		err := a.Take(e.ctx, &j, 5, &r)
		got := refusal(t, err)
		require.Equal(t, admission.Requests, got.Resource)
		require.Equal(t, requestsWin.Add(10*time.Minute), got.Until, "when the window ends")
		require.True(t, j.Segments[5].CountedIn.IsZero(), "no place recorded")
		require.Equal(t, int64(5), e.inFlight(flight), "the place it took for the refused piece went back")
		require.Equal(t, int64(5), e.requests())
		require.Equal(t, requestsWin.Add(10*time.Minute), a.RequestsFreeAt(e.clk.Now()))
	})

	t.Run("a submission refused before it was accepted gives its request back; one perhaps accepted keeps it", func(t *testing.T) {
		e, a := newEnv(t, admission.Config{RequestsPerHour: 35, MaxInFlight: 10}) // 5 a 10-minute window
		j := e.made(a, 3)
		var r admission.Round
		require.NoError(t, a.Take(e.ctx, &j, 0, &r))
		e.clk.Set(requestsWin.Add(10*time.Minute + time.Second)) // the refusal comes in the next window
		a.Unsent(e.ctx, &j, &r, true)
		require.Zero(t, e.requests(), "refused: its place in the window it was counted in goes back")
		require.True(t, j.Segments[0].CountedIn.IsZero())
		require.Zero(t, e.inFlight(flight))
		a.Unsent(e.ctx, &j, &r, true)
		require.Zero(t, e.used("speechkit_requests", requestsWin.Add(10*time.Minute)), "nothing given back twice, nor to another window")

		require.NoError(t, a.Take(e.ctx, &j, 1, &r))
		a.Unsent(e.ctx, &j, &r, false)
		require.Equal(t, int64(1), e.used("speechkit_requests", requestsWin.Add(10*time.Minute)), "perhaps accepted: counted")
		require.Zero(t, e.inFlight(flight)+e.inFlight(flight.Add(30*time.Minute)), "its place in flight goes back all the same")

		// Refusals never fill the window: five more, then five taken.
		for range 5 {
			require.NoError(t, a.Take(e.ctx, &j, 2, &r))
			a.Unsent(e.ctx, &j, &r, true)
		}
		for i := range 4 {
			require.NoError(t, a.Take(e.ctx, &j, 2, &r), "request %d", i)
			a.Unsent(e.ctx, &j, &r, false)
		}
		require.Equal(t, admission.Requests, refusal(t, a.Take(e.ctx, &j, 2, &r)).Resource, "the five counted fill it")
	})

	t.Run("no place in flight takes no request", func(t *testing.T) {
		e, a := newEnv(t, admission.Config{RequestsPerHour: 500, MaxInFlight: 1})
		first, second := e.made(a, 1), e.made(a, 1)
		e.submitAll(a, &first)
		got := refusal(t, a.Take(e.ctx, &second, 0, &admission.Round{}))
		require.Equal(t, admission.InFlight, got.Resource)
		require.True(t, got.Until.IsZero(), "a place frees when a running recognition is found finished")
		require.Equal(t, int64(1), e.requests(), "the refused piece counted no request")
		require.Equal(t, int64(1), e.inFlight(flight))
	})

	t.Run("audio beyond the reservation takes nothing and fails the job", func(t *testing.T) {
		e, a := newEnv(t, admission.Config{RequestsPerHour: 500, MaxInFlight: 10})
		j := e.made(a, 2)                 // 30 billed seconds reserved: 15 a piece
		j.Segments[1].DurationMs += 5_001 // billed 16 s: a segment set by anything but the metered conversion
		err := a.Take(e.ctx, &j, 0, &admission.Round{})
		got := refusal(t, err)
		require.Equal(t, admission.Audio, got.Resource)
		require.True(t, got.Until.IsZero(), "never")
		require.Equal(t, admission.CodeOverReserved, errs.CodeOf(err))
		require.Equal(t, errs.Permanent, errs.KindOf(err))
		require.Zero(t, e.requests())
		require.Zero(t, e.inFlight(flight))

		j.Segments[1].DurationMs-- // billed 15 s: within
		require.NoError(t, a.Take(e.ctx, &j, 0, &admission.Round{}))
	})

	t.Run("a counter that fails keeps nothing", func(t *testing.T) {
		e, _ := newEnv(t, admission.Config{})
		a := admission.New(admission.Config{Counters: failing{Counters: e.counters, key: "speechkit_requests"},
			Limits: e.limits, RequestsPerHour: 500, MaxInFlight: 10, CheckedWithin: 15 * time.Minute, Clock: e.clk})
		j := e.made(a, 1)
		err := a.Take(e.ctx, &j, 0, &admission.Round{})
		require.Error(t, err)
		var r *admission.Refused
		require.NotErrorAs(t, err, &r, "a failure is not a refusal")
		require.True(t, j.Segments[0].CountedIn.IsZero())
		require.Zero(t, e.inFlight(flight), "the place taken before the failure went back")
	})

	t.Run("nothing a job recorded is taken twice", func(t *testing.T) {
		e, a := newEnv(t, admission.Config{RequestsPerHour: 500, MaxInFlight: 10})
		j := e.made(a, 2)
		took, err := a.Reserve(e.ctx, &j, []int64{10_000, 10_000}, false)
		require.NoError(t, err)
		require.False(t, took, "a job with a reservation (a retried probe) reserves nothing")
		require.Equal(t, int64(30), e.audio())

		var r admission.Round
		e.submit(a, &j, 0, &r)
		require.ErrorIs(t, a.Take(e.ctx, &j, 0, &r), admission.ErrTaken, "a submitted piece")
		require.NoError(t, a.Take(e.ctx, &j, 1, &r))
		require.ErrorIs(t, a.Take(e.ctx, &j, 1, &r), admission.ErrTaken, "a piece that holds its place")
		j.Segments[1].OperationID = "op-1"
		require.Equal(t, int64(2), e.requests())
		require.Equal(t, int64(2), e.inFlight(flight))

		require.False(t, a.Renew(e.ctx, &j), "counted in this window already")
		e.clk.Set(flightNext.Add(time.Minute))
		require.True(t, a.Renew(e.ctx, &j))
		require.False(t, a.Renew(e.ctx, &j), "a second check in the window counts nothing more")
		require.Equal(t, int64(2), e.inFlight(flightNext))
		require.Zero(t, e.inFlight(flight), "moved, not added")
	})

	t.Run("nothing is given back twice", func(t *testing.T) {
		e, a := newEnv(t, admission.Config{RequestsPerHour: 500, MaxInFlight: 10})
		other, j := e.made(a, 1), e.made(a, 1)
		e.submitAll(a, &other)
		e.submitAll(a, &j)
		over(e.ctx, a, &j, 0, true)
		a.Release(e.ctx, j, &j)
		require.Equal(t, int64(1), e.inFlight(flight), "the other job's place is still counted")

		ended := end(e.ctx, a, j, job.Done)
		a.Release(e.ctx, ended, &ended) // told again: it ended before
		require.Equal(t, int64(1), e.active(), "the other job's place among the unfinished is still counted")

		failed := e.made(a, 1)
		gone := end(e.ctx, a, failed, job.Failed)
		a.Release(e.ctx, gone, &gone)
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
		a.Release(e.ctx, reserved, &j)
		require.Equal(t, int64(30), e.audio())
		require.Equal(t, int64(30), e.month())

		// A store that kept the reservation (it lowers none to 0) kept it
		// counted: nothing is given back that the job still records.
		k := e.made(a, 1)
		before := k
		require.NoError(t, a.Settle(e.ctx, &k, spend.Charge{}, true))
		saved := k
		saved.ReservedSeconds, saved.ReservedMicros = before.ReservedSeconds, before.ReservedMicros
		a.Release(e.ctx, before, &saved)
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
			e.clk.Set(flightNext.Add(time.Minute)) // checked in the next window
			a.Renew(e.ctx, &j)
			over(e.ctx, a, &j, 0, true)
			over(e.ctx, a, &j, 1, true)
			end(e.ctx, a, j, job.Done)
		}, 30},
		{"failed before any submission", func(e *env, a *admission.Admission, j job.Job) {
			end(e.ctx, a, j, job.Failed)
		}, 0},
		{"failed when its first submission failed", func(e *env, a *admission.Admission, j job.Job) {
			require.NoError(e.t, a.Take(e.ctx, &j, 0, &admission.Round{}))
			a.Release(e.ctx, j, &j) // the submission failed
			end(e.ctx, a, j, job.Failed)
		}, 0},
		{"failed after a piece was submitted", func(e *env, a *admission.Admission, j job.Job) {
			e.submit(a, &j, 0, &admission.Round{})
			end(e.ctx, a, j, job.Failed)
		}, 30},
		{"dead in transcribe", func(e *env, a *admission.Admission, j job.Job) {
			e.submitAll(a, &j)
			e.clk.Set(flightNext.Add(time.Minute))
			a.Renew(e.ctx, &j)
			end(e.ctx, a, j, job.Dead)
		}, 30},
		{"dead with its recognitions dropped", func(e *env, a *admission.Admission, j job.Job) {
			e.submitAll(a, &j)
			over(e.ctx, a, &j, 0, false)
			over(e.ctx, a, &j, 1, false)
			end(e.ctx, a, j, job.Dead)
		}, 30},
	} {
		t.Run("ended "+tc.name, func(t *testing.T) {
			e, a := newEnv(t, admission.Config{RequestsPerHour: 500, MaxInFlight: 10})
			j := e.made(a, 2)
			require.Equal(t, int64(1), e.active())
			tc.run(e, a, j)
			require.Equal(t, tc.audio, e.audio(), "audio kept only for what reached the recognizer")
			require.Equal(t, tc.audio, e.month())
			require.Zero(t, e.active(), "its place among the unfinished went back")
			require.Zero(t, e.inFlight(flight), "no place in flight left")
			require.Zero(t, e.inFlight(flightNext))
		})
	}

	t.Run("ended deleted: nothing told, nothing held past two windows", func(t *testing.T) {
		e, a := newEnv(t, admission.Config{RequestsPerHour: 500, MaxInFlight: 2})
		j := e.made(a, 2)
		e.submitAll(a, &j)
		// The owner deletes it under a step: the deletion ends it and gives
		// its place among the unfinished back; the step, its claim lost,
		// tells the admission nothing, and nothing checks it again.
		deleted := j
		deleted.State, deleted.ErrorCode, deleted.DeletedAt = job.Failed, job.ErrDeleted.Code, e.clk.Now()
		spend.Deleted(e.ctx, e.counters, e.limits, j, deleted, slog.Default())
		require.Zero(t, e.active())

		other := e.made(a, 1)
		e.clk.Set(flightNext.Add(time.Minute))
		require.Equal(t, admission.InFlight, refusal(t, a.Take(e.ctx, &other, 0, &admission.Round{})).Resource,
			"the previous window still holds its places")
		e.clk.Set(flightNext.Add(31 * time.Minute))
		require.NoError(t, a.Take(e.ctx, &other, 0, &admission.Round{}), "two windows on, they are gone")
	})

	t.Run("a crash after a take holds the place no longer than two windows", func(t *testing.T) {
		e, a := newEnv(t, admission.Config{RequestsPerHour: 500, MaxInFlight: 10})
		stored := e.made(a, 1)
		lost := stored
		lost.Segments = append([]job.Segment(nil), stored.Segments...)
		e.submit(a, &lost, 0, &admission.Round{}) // submitted, then the call died before its save
		e.submitAll(a, &stored)                   // the next attempt submits it again
		require.Equal(t, int64(2), e.inFlight(flight), "the lost place is still counted")

		for _, w := range []time.Time{flightNext, flightNext.Add(30 * time.Minute)} {
			e.clk.Set(w.Add(time.Minute))
			a.Renew(e.ctx, &stored)
		}
		last := flightNext.Add(30 * time.Minute)
		require.Equal(t, int64(1), e.inFlight(last)+e.inFlight(flightNext), "only the running recognition, two windows on")
		over(e.ctx, a, &stored, 0, true)
		end(e.ctx, a, stored, job.Done)
		require.Zero(t, e.inFlight(last)+e.inFlight(flightNext))
		require.Zero(t, e.active())
	})

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
