package admission

import (
	"context"
	"fmt"
	"slices"

	"transcriber/internal/errs"
	"transcriber/internal/job"
	"transcriber/internal/spend"
)

// CodeOverReserved is the code of a job whose audio holds more than was
// reserved for it: only a file made to mislead does that.
const CodeOverReserved = "audio_over_reservation"

var ErrOverReserved = errs.New(errs.Permanent, CodeOverReserved,
	"the file holds more audio than its length as read from it; it was not sent for recognition")

// Reserve counts the most recognizing j's pieces (ms) is billed
// (spend.Limits.Plan; sync: a synchronous try first) against the payer's
// day, the month and its budget, records it on j, and reports whether it
// took any (the caller saves j). A job with a reservation is not counted
// again; one past a limit fails with quota_exceeded or budget_exceeded,
// nothing counted.
func (a *Admission) Reserve(ctx context.Context, j *job.Job, pieces []int64, sync bool) (bool, error) {
	ch := a.cfg.Limits.Plan(*j, pieces, sync)
	if a.cfg.Counters == nil || j.ReservedSeconds > 0 || ch.Zero() || j.DurationMs <= 0 {
		return false, nil
	}
	day, err := spend.Reserve(ctx, a.cfg.Counters, a.cfg.Limits, j.ChargedTo, ch, a.cfg.Clock.Now(), true)
	if err != nil {
		return false, err
	}
	spend.SetReserved(j, ch)
	j.ReservedDay = day
	return true, nil
}

// Settle moves j's reservation to ch before the save that records it:
// more is reserved now on the reservation's day, against the limits when
// limited (the audio made: a refusal fails the job) or not (what was
// billed); less is given back by Release once j is saved.
func (a *Admission) Settle(ctx context.Context, j *job.Job, ch spend.Charge, limited bool) error {
	if a.cfg.Counters == nil || j.ReservedSeconds <= 0 {
		return nil
	}
	if more := ch.Less(spend.Reserved(*j)); !more.Zero() {
		if _, err := spend.Reserve(ctx, a.cfg.Counters, a.cfg.Limits, j.ChargedTo, more, j.ReservedDay, limited); err != nil {
			return err
		}
		a.jobLog(*j).InfoContext(ctx, "reservation raised", "seconds", more.Seconds, "micros", more.Micros)
	}
	spend.SetReserved(j, ch)
	return nil
}

// Needs is the most j's segments are billed (sync: a synchronous try too).
func (a *Admission) Needs(j job.Job, sync bool) spend.Charge {
	return a.cfg.Limits.Plan(j, job.Lengths(j.Segments), sync)
}

// AudioAllowance is the most audio (ms) j may make in pieces pieces: its
// probed length or its reservation, and a second a piece for a cut's last
// frame. The conversion's meter stops at it.
func AudioAllowance(j job.Job, pieces int) int64 {
	return max(j.DurationMs, j.ReservedSeconds*1000) + int64(pieces)*1000
}

// covers is the one check before j's audio leaves: Needs within the
// reservation. Settle made it so already; this holds the invariant
// against anything else that set the segments.
func (a *Admission) covers(j job.Job, sync bool) error {
	if a.cfg.Counters == nil {
		return nil
	}
	need, have := a.Needs(j, sync), spend.Reserved(j)
	if !have.Covers(need) {
		return fmt.Errorf("%d billed seconds and %d µ₽ against %d and %d reserved: %w",
			need.Seconds, need.Micros, have.Seconds, have.Micros, ErrOverReserved)
	}
	return nil
}

// reached reports whether any of a job's audio may have reached the
// recognizer: it was in transcribe, or a piece has a recognition.
func reached(was, j job.Job) bool {
	return was.State == job.Transcribe || slices.ContainsFunc(j.Segments, func(sg job.Segment) bool { return sg.OperationID != "" })
}

// giveBack gives back ch of j's reservation.
func (a *Admission) giveBack(ctx context.Context, j job.Job, ch spend.Charge, done string) {
	if ch.Zero() {
		return
	}
	if err := spend.Release(ctx, a.cfg.Counters, j.ChargedTo, ch, j.ReservedDay); err != nil {
		a.jobLog(j).WarnContext(ctx, "reservation not given back", "seconds", ch.Seconds, "micros", ch.Micros, "error", err.Error())
		return
	}
	a.jobLog(j).InfoContext(ctx, done, "released_seconds", ch.Seconds, "released_micros", ch.Micros)
}
