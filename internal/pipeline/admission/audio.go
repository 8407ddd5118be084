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

// Reserve counts j's audio against its payer's day and the installation's
// month (spend.Reserve) once its length is known, before it is converted
// or submitted, and records the reservation on j; it reports whether it
// took any, and the caller saves j. A job that has a reservation (a
// retried ingest) is not counted again. A job that would pass a limit
// gets spend's quota_exceeded, a permanent failure, with nothing counted.
// A crash between the reservation and its save counts the job's audio
// once more than it uses (the retry reserves again): too much, never too
// little. Without counters nothing is counted.
func (a *Admission) Reserve(ctx context.Context, j *job.Job) (bool, error) {
	secs := spend.Seconds(j.DurationMs)
	if a.cfg.Counters == nil || j.ReservedSeconds > 0 || secs == 0 {
		return false, nil
	}
	day, err := spend.Reserve(ctx, a.cfg.Counters, a.cfg.Limits, j.ChargedTo, secs, a.cfg.Clock.Now())
	if err != nil {
		return false, err
	}
	j.ReservedSeconds, j.ReservedDay = secs, day
	return true, nil
}

// Trim lowers j's reservation to what its audio holds (j.DurationMs, as
// counted on its way to storage), when that is less: a header that
// overstated its length. The difference is given back by Release once j
// is saved so: a crash in between leaves the counter too high, never too
// low.
func (a *Admission) Trim(j *job.Job) {
	if held := spend.Seconds(j.DurationMs); a.cfg.Counters != nil && j.ReservedSeconds > held {
		j.ReservedSeconds = held
	}
}

// AudioAllowance is the most audio, in milliseconds, job j may make in
// pieces pieces: its length as probed, or what is reserved for it when
// that is more, and a second a piece for the frame a cut may end in. The
// conversion's meter stops at it.
func AudioAllowance(j job.Job, pieces int) int64 {
	return max(j.DurationMs, j.ReservedSeconds*1000) + int64(pieces)*1000
}

// covers is the one check before any of j's audio goes to the recognizer:
// the audio of all its segments, as counted when it was made, is at most
// what was reserved for it and a second a piece. The conversion's meter
// already stopped any that passed it; this holds the invariant for
// whatever else may have set the segments (a job converted before the
// meter existed, a bug). Without counters nothing is reserved and no
// limit is kept.
func (a *Admission) covers(j job.Job) error {
	if a.cfg.Counters == nil {
		return nil
	}
	allowed := (j.ReservedSeconds + int64(len(j.Segments))) * 1000
	total := job.AudioMs(j.Segments)
	if total > allowed {
		return fmt.Errorf("%d ms of audio against %d ms reserved and allowed: %w", total, allowed, ErrOverReserved)
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

// giveBackAudio gives back seconds of j's reservation. A failure is
// logged: the counter then holds more than was used, never less.
func (a *Admission) giveBackAudio(ctx context.Context, j job.Job, seconds int64, done string) {
	if seconds <= 0 {
		return
	}
	if err := spend.Release(ctx, a.cfg.Counters, j.ChargedTo, seconds, j.ReservedDay); err != nil {
		a.jobLog(j).WarnContext(ctx, "could not give back audio reserved for the job", "seconds", seconds, "error", err.Error())
		return
	}
	a.jobLog(j).InfoContext(ctx, done, "released_seconds", seconds)
}
