package admission

import (
	"context"
	"fmt"
	"time"

	"transcriber/internal/job"
)

// The installation's bound on recognitions in flight: a recognition is in
// flight from its submission until its check finds it done (or it fails
// and is dropped), and the installation has at most Config.MaxInFlight,
// counted in the shared counters under InFlightKey.
//
// The count is kept in fixed windows (inFlightWindow): a recognition is
// counted in the window it was submitted in, and a check of its job in a
// later window counts it again in that window and takes it out of the one
// it was in (Renew). What is in flight now is then at most what the
// current and the previous window hold, and a submission is admitted only
// while their sum is under the bound. Nothing has to be taken out for the
// count to stay right: a recognition whose job ended, was deleted, or
// whose release was lost in a crash is simply not counted again, and
// leaves the count within two windows. The window is twice the longest
// pause between two checks of a job in transcribe, so every recognition
// still running is counted again in time, for as long as the poll
// function runs.
const InFlightKey = "recognitions_in_flight"

// countingInFlight reports whether the installation's recognitions in
// flight are counted and bounded.
func (a *Admission) countingInFlight() bool { return a.cfg.Counters != nil && a.cfg.MaxInFlight > 0 }

// InFlightWindowLength is the length of the in-flight count's windows:
// twice the longer of the longest pause between two checks of a running
// recognition and the request window, so a recognition still running is
// counted again within the window after the one it was counted in.
func InFlightWindowLength(checkedWithin, requestWindow time.Duration) time.Duration {
	return 2 * max(checkedWithin, requestWindow)
}

// inFlightWindow returns the window of the in-flight count that holds now
// and the one before it.
func (a *Admission) inFlightWindow(now time.Time) (cur, prev time.Time) {
	length := InFlightWindowLength(a.cfg.CheckedWithin, a.requestWindowLength())
	cur = now.UTC().Truncate(length)
	return cur, cur.Add(-length)
}

// takeInFlight takes a place in the installation's count for one more
// recognition and returns the window it is counted in, or refuses when
// the installation has MaxInFlight in flight. Without counting it admits
// every recognition and returns the zero window. One read of the previous
// window serves a round (r): that window only shrinks while the current
// one runs, so an earlier read errs towards fewer places.
func (a *Admission) takeInFlight(ctx context.Context, r *Round) (time.Time, error) {
	if !a.countingInFlight() {
		return time.Time{}, nil
	}
	cur, prev := a.inFlightWindow(a.cfg.Clock.Now())
	if !r.read || !r.window.Equal(prev) {
		n, err := a.cfg.Counters.Used(ctx, InFlightKey, prev)
		if err != nil {
			return time.Time{}, fmt.Errorf("count recognitions in flight: %w", err)
		}
		*r = Round{read: true, window: prev, held: n}
	}
	room := int64(a.cfg.MaxInFlight) - r.held
	if room <= 0 {
		return time.Time{}, &Refused{Resource: InFlight}
	}
	_, ok, err := a.cfg.Counters.Reserve(ctx, InFlightKey, cur, 1, room)
	if err != nil {
		return time.Time{}, fmt.Errorf("count recognitions in flight: %w", err)
	}
	if !ok {
		return time.Time{}, &Refused{Resource: InFlight}
	}
	return cur, nil
}

// giveBackInFlight takes one recognition of j out of window's count. A
// failure is logged: the place comes back when its window passes.
func (a *Admission) giveBackInFlight(ctx context.Context, j job.Job, window time.Time) {
	if window.IsZero() || a.cfg.Counters == nil {
		return
	}
	if err := a.cfg.Counters.Release(ctx, InFlightKey, window, 1); err != nil {
		a.jobLog(j).WarnContext(ctx, "could not give back a place among the recognitions in flight", "error", err.Error())
	}
}

// Renew counts j's recognitions in flight in the current window, those
// counted in an earlier one (or in none: a segment written before the
// count was kept), and takes them out of the window they were in; the
// job's check calls it each time. It reports whether it changed what j
// records: the segments must then be saved with the job, whatever the
// rest of the check does, so a failed attempt's release does not forget
// what the counters hold, and the next attempt does not count them again.
// Counting is best effort: a failure is logged and leaves the segments as
// they were, to be counted at the next check.
func (a *Admission) Renew(ctx context.Context, j *job.Job) bool {
	if !a.countingInFlight() {
		return false
	}
	cur, _ := a.inFlightWindow(a.cfg.Clock.Now())
	var (
		n     int64
		moved = map[time.Time]int64{}
	)
	for _, sg := range j.Segments {
		if sg.OperationID == "" || sg.Done || sg.CountedIn.Equal(cur) {
			continue
		}
		n++
		if !sg.CountedIn.IsZero() {
			moved[sg.CountedIn]++
		}
	}
	if n == 0 {
		return false
	}
	// Recognitions already running are counted whatever the bound: the
	// bound stops new ones.
	if _, _, err := a.cfg.Counters.Reserve(ctx, InFlightKey, cur, n, 0); err != nil {
		a.jobLog(*j).WarnContext(ctx, "could not count the job's recognitions in flight", "error", err.Error())
		return false
	}
	for i, sg := range j.Segments {
		if sg.OperationID != "" && !sg.Done {
			j.Segments[i].CountedIn = cur
		}
	}
	for w, k := range moved {
		if err := a.cfg.Counters.Release(ctx, InFlightKey, w, k); err != nil {
			a.jobLog(*j).WarnContext(ctx, "could not take recognitions out of an earlier window's count", "error", err.Error())
		}
	}
	return true
}
