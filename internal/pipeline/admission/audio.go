package admission

import (
	"context"
	"fmt"

	"transcriber/internal/errs"
	"transcriber/internal/job"
	"transcriber/internal/spend"
)

// CodeOverReserved is the code of a job whose audio holds more than was
// reserved for it.
const CodeOverReserved = "audio_over_reservation"

// ErrOverReserved: the audio made from a file holds more than its length
// as probed, which is what was reserved for it. Only a file made to
// mislead does that; nothing of it is recognized.
var ErrOverReserved = errs.New(errs.Permanent, CodeOverReserved,
	"the file holds more audio than its length as read from it; it was not sent for recognition")

// Reserve counts j's charge, the most recognizing its audio as pieces
// (their lengths in ms) is billed (spend.Limits.Plan: with sync, a
// synchronous try first), against its payer's day, the installation's
// month and the month's budget (spend.Reserve) once its length is known,
// before it is converted or submitted, and records the reservation on j;
// it reports whether it took any, and the caller saves j. A job that has
// a reservation (a retried ingest) is not counted again. A job that would
// pass a limit gets spend's quota_exceeded or budget_exceeded, a
// permanent failure, with nothing counted. A crash between the
// reservation and its save counts the job once more than it uses (the
// retry reserves again): too much, never too little. Without counters
// nothing is counted.
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

// Settle moves j's reservation to charge ch before the save that records
// it: what ch holds past the reservation is reserved now, on the
// reservation's day, against the limits when limited (the audio made,
// before any of it is sent: a refusal fails the job) or with none (what
// the answers billed: counted as it was billed); what it holds less is
// given back by Release once j is saved so. A crash in between leaves the
// counters too high, never too low. Without counters nothing moves.
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

// Needs is what j's audio, as made, is billed at most before it is
// recognized: its segments by the asynchronous rule, the synchronous one
// too when sync.
func (a *Admission) Needs(j job.Job, sync bool) spend.Charge {
	return a.cfg.Limits.Plan(j, job.Lengths(j.Segments), sync)
}

// AudioAllowance is the most audio, in milliseconds, job j may make in
// pieces pieces: its length as probed, or what is reserved for it when
// that is more, and a second a piece for the frame a cut may end in. The
// conversion's meter stops at it.
func AudioAllowance(j job.Job, pieces int) int64 {
	return max(j.DurationMs, j.ReservedSeconds*1000) + int64(pieces)*1000
}

// covers is the one check before any of j's audio goes to the
// recognizer: what its segments are billed at most, as they were made
// (Needs), is within what was reserved for it. The raise before the save
// of the audio (Settle) already made it so; this holds the invariant for
// whatever else may have set the segments (a bug). Without counters
// nothing is reserved and no limit is kept.
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
// recognizer: it was in transcribe (was), or a piece has a recognition.
// A job that reached recognition keeps its reservation: what was
// submitted is paid for.
func reached(was, j job.Job) bool {
	if was.State == job.Transcribe {
		return true
	}
	for _, sg := range j.Segments {
		if sg.OperationID != "" {
			return true
		}
	}
	return false
}

// giveBack gives back ch of j's reservation. A failure is logged: the
// counters then hold more than was used, never less.
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
