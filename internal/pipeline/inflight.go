package pipeline

import (
	"context"
	"fmt"
	"time"

	"transcriber/internal/job"
)

// The bounds on recognitions in flight: a recognition is in flight from
// its submission until its check finds it done (or it fails and is
// dropped). A job has at most Config.JobInFlight of them at once, so its
// pieces go side by side up to that many; the installation at most
// Config.MaxInFlight, counted in the shared counters under inFlightKey.
//
// The installation's count is kept in fixed windows (inFlightWindow): a
// recognition is counted in the window it was submitted in, and a check of
// its job in a later window counts it again in that window and takes it
// out of the one it was in (renewInFlight). What is in flight now is then
// at most what the current and the previous window hold, and a submission
// is admitted only while their sum is under the bound. Nothing has to be
// taken out for the count to stay right: a recognition whose job ended,
// was deleted, or whose release was lost in a crash is simply not counted
// again, and leaves the count within two windows. The window is twice the
// longest pause between two checks of a job in transcribe, so every
// recognition still running is counted again in time, for as long as the
// poll function runs.
const inFlightKey = "recognitions_in_flight"

// countingInFlight reports whether the installation's recognitions in
// flight are counted and bounded.
func (c Config) countingInFlight() bool { return c.Counters != nil && c.MaxInFlight > 0 }

// inFlightWindow returns the window of the in-flight count that holds now
// and the one before it.
func (c Config) inFlightWindow(now time.Time) (cur, prev time.Time) {
	length := 2 * max(c.MaxCheckPause, c.DeferredCheckPause, c.submissionWindowLength())
	cur = now.UTC().Truncate(length)
	return cur, cur.Add(-length)
}

// submissionWindowLength is the length of the request quota's windows, the
// longest a job waits for the quota without being checked.
func (c Config) submissionWindowLength() time.Duration {
	start, end, _ := c.submissionWindow(time.Time{})
	return end.Sub(start)
}

// inFlight is how many of j's recognitions are in flight.
func inFlight(j job.Job) int {
	n := 0
	for _, sg := range j.Segments {
		if sg.OperationID != "" && !sg.Done {
			n++
		}
	}
	return n
}

// waitingForSlot reports whether j has pieces not yet submitted.
func waitingForSlot(j job.Job) bool {
	for _, sg := range j.Segments {
		if sg.OperationID == "" && !sg.Done {
			return true
		}
	}
	return false
}

// heldBefore is the previous window's count as admitRecognition read it:
// one read serves every piece a submission round admits (the previous
// window only shrinks while the current one runs, so an earlier read
// errs towards fewer places).
type heldBefore struct {
	read   bool
	window time.Time
	n      int64
}

// admitRecognition takes a place in the installation's count for one more
// recognition and returns the window it is counted in, or false when the
// installation has MaxInFlight in flight. Without counting it admits every
// recognition and returns the zero window.
func (p *Pipeline) admitRecognition(ctx context.Context, held *heldBefore) (time.Time, bool, error) {
	if !p.cfg.countingInFlight() {
		return time.Time{}, true, nil
	}
	cur, prev := p.cfg.inFlightWindow(p.Clock.Now())
	if !held.read || !held.window.Equal(prev) {
		n, err := p.cfg.Counters.Used(ctx, inFlightKey, prev)
		if err != nil {
			return time.Time{}, false, fmt.Errorf("count recognitions in flight: %w", err)
		}
		*held = heldBefore{read: true, window: prev, n: n}
	}
	room := int64(p.cfg.MaxInFlight) - held.n
	if room <= 0 {
		return time.Time{}, false, nil
	}
	_, ok, err := p.cfg.Counters.Reserve(ctx, inFlightKey, cur, 1, room)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("count recognitions in flight: %w", err)
	}
	if !ok {
		return time.Time{}, false, nil
	}
	return cur, true, nil
}

// unadmit gives back a place admitRecognition took for a recognition that
// was then not submitted. A failure is logged: the place comes back when
// its window passes.
func (p *Pipeline) unadmit(ctx context.Context, window time.Time) {
	if window.IsZero() {
		return
	}
	if err := p.cfg.Counters.Release(ctx, inFlightKey, window, 1); err != nil {
		p.Log.WarnContext(ctx, "could not give back a place among the recognitions in flight", "error", err.Error())
	}
}

// renewInFlight counts j's recognitions in flight in the current window,
// those counted in an earlier one (or in none: a segment written before
// the count was kept), and takes them out of the window they were in. It
// reports whether it changed the counters: the segments must then be saved
// with the job, whatever the rest of the round does. Counting is best
// effort: a failure is logged and leaves the segments as they were, to be
// counted at the next check.
func (p *Pipeline) renewInFlight(ctx context.Context, j job.Job) (job.Job, bool) {
	if !p.cfg.countingInFlight() {
		return j, false
	}
	cur, _ := p.cfg.inFlightWindow(p.Clock.Now())
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
		return j, false
	}
	// Recognitions already running are counted whatever the bound: the
	// bound stops new ones.
	if _, _, err := p.cfg.Counters.Reserve(ctx, inFlightKey, cur, n, 0); err != nil {
		p.jobLog(j).WarnContext(ctx, "could not count the job's recognitions in flight", "error", err.Error())
		return j, false
	}
	for i, sg := range j.Segments {
		if sg.OperationID != "" && !sg.Done {
			j.Segments[i].CountedIn = cur
		}
	}
	for w, k := range moved {
		if err := p.cfg.Counters.Release(ctx, inFlightKey, w, k); err != nil {
			p.jobLog(j).WarnContext(ctx, "could not take recognitions out of an earlier window's count", "error", err.Error())
		}
	}
	return j, true
}

// leaveInFlight takes segment i of j, whose recognition finished or was
// dropped, out of the installation's count. A failure is logged: the
// recognition leaves the count when its window passes.
func (p *Pipeline) leaveInFlight(ctx context.Context, j *job.Job, i int) {
	w := j.Segments[i].CountedIn
	j.Segments[i].CountedIn = time.Time{}
	if w.IsZero() || p.cfg.Counters == nil {
		return
	}
	if err := p.cfg.Counters.Release(ctx, inFlightKey, w, 1); err != nil {
		p.jobLog(*j).WarnContext(ctx, "could not take a finished recognition out of the count in flight", "error", err.Error())
	}
}
