package admission

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"transcriber/internal/spend"
)

// The breakers: a service every job needs (the recognizer, the object
// store) out for everyone is no job's failure. Each service's breaker is
// kept in the shared counters, so every instance sees the same one:
//
//   - closed, calls go. A call that fails for an outage (Failed) counts
//     one more failure in a row; an answer (Answered) resets the count.
//   - OutageAfter failures in a row open it: no call goes until the end of
//     an interval from OutageProbeFirst, doubling with each failure to
//     OutageProbeMax; the jobs that meet it are held until then, their
//     attempts not counted.
//   - then the first caller (Pass) takes the probe, the others held for
//     OutageProbeFirst. An answer closes it; a failure doubles the interval.
//
// The state is two counters a service in the UTC day's window (yesterday's
// read too, so midnight forgets nothing): outageFailures, the failures in
// a row, and outageUntil, the moment (Unix ms) until which no call goes.
// outageUntil only rises, so a conditional Reserve lifting it from the
// value read is a compare-and-set.

// Service names a service whose outages the breaker keeps.
type Service string

// The services the pipeline's jobs all depend on.
const (
	Recognizer Service = "speechkit"
	Storage    Service = "storage"
	// SyncRecognizer is SpeechKit's synchronous API (another endpoint and
	// quota): while it is out a fast job goes the asynchronous way.
	SyncRecognizer Service = "speechkit_sync"
)

// The breaker's numbers (docs/settings.md).
const (
	DefaultOutageAfter      = 3
	DefaultOutageProbeFirst = 10 * time.Second
	DefaultOutageProbeMax   = 5 * time.Minute
)

// outageLook is how long this instance trusts a clean read: at most one
// read a second while every call is answered.
const outageLook = time.Second

func outageFailures(s Service) string { return "outage_failures:" + string(s) }
func outageUntil(s Service) string    { return "outage_until:" + string(s) }

// breakers are this instance's clean reads.
type breakers struct {
	mu    sync.Mutex
	clean map[Service]time.Time // when a breaker was last read closed with no failure
}

// outageView is a breaker as read.
type outageView struct {
	failures int64     // in a row, today's and yesterday's
	until    time.Time // no call goes before it (zero: none set)
	day      time.Time // the day read as today: the window a raise writes
	today    int64     // that day's outageUntil, as stored: what a raise lifts from
}

func (a *Admission) outageDays(now time.Time) (today, yesterday time.Time) {
	today, _ = spend.Day(now)
	return today, today.AddDate(0, 0, -1)
}

// look reads s's breaker, or trusts a clean read of less than outageLook
// ago (a clean breaker costs two reads).
func (a *Admission) look(ctx context.Context, s Service, now time.Time) (outageView, error) {
	a.breakers.mu.Lock()
	at, ok := a.breakers.clean[s]
	a.breakers.mu.Unlock()
	if ok && !now.Before(at) && now.Sub(at) < outageLook {
		return outageView{}, nil
	}
	today, yesterday := a.outageDays(now)
	days := []time.Time{today, yesterday}
	var v outageView
	for _, day := range days {
		n, err := a.cfg.Counters.Used(ctx, outageFailures(s), day)
		if err != nil {
			return outageView{}, fmt.Errorf("read the breaker of %s: %w", s, err)
		}
		v.failures += n
	}
	if v.failures == 0 {
		a.remember(s, v, now)
		return v, nil
	}
	var untilMs [2]int64
	for i, day := range days {
		var err error
		if untilMs[i], err = a.cfg.Counters.Used(ctx, outageUntil(s), day); err != nil {
			return outageView{}, fmt.Errorf("read the breaker of %s: %w", s, err)
		}
	}
	v.day, v.today = today, untilMs[0]
	if ms := max(untilMs[0], untilMs[1]); ms > 0 {
		v.until = time.UnixMilli(ms).UTC()
	}
	a.remember(s, v, now)
	return v, nil
}

// remember keeps v as the instance's view of s when it is clean.
func (a *Admission) remember(s Service, v outageView, now time.Time) {
	a.breakers.mu.Lock()
	defer a.breakers.mu.Unlock()
	if a.breakers.clean == nil {
		a.breakers.clean = map[Service]time.Time{}
	}
	if v.failures == 0 {
		a.breakers.clean[s] = now
	} else {
		delete(a.breakers.clean, s)
	}
}

// interval is how long the breaker stays open after its n-th failure in a row.
func (a *Admission) interval(n int64) time.Duration {
	d := a.cfg.OutageProbeFirst
	for i := int64(DefaultOutageAfter); i < n && d < a.cfg.OutageProbeMax; i++ {
		d *= 2
	}
	return min(d, a.cfg.OutageProbeMax)
}

// raise lifts s's outageUntil from v's reading to at, if later: the
// compare-and-set. It reports whether it moved it.
func (a *Admission) raise(ctx context.Context, s Service, v outageView, at time.Time) (bool, error) {
	target := at.UnixMilli()
	if target <= v.today || (!v.until.IsZero() && !at.After(v.until)) {
		return false, nil
	}
	_, ok, err := a.cfg.Counters.Reserve(ctx, outageUntil(s), v.day, target-v.today, target)
	return ok, err
}

// Pass reports whether a call to s may go now (closed, or this caller
// takes the probe), else when to ask again. An unread breaker lets it go.
func (a *Admission) Pass(ctx context.Context, s Service) (time.Time, bool) {
	if a.cfg.Counters == nil {
		return time.Time{}, true
	}
	now := a.cfg.Clock.Now()
	v, err := a.look(ctx, s, now)
	switch {
	case err != nil:
		a.cfg.Log.WarnContext(ctx, "breaker unread; call goes", "service", string(s), "error", err.Error())
		return time.Time{}, true
	case v.failures < DefaultOutageAfter:
		return time.Time{}, true
	case now.Before(v.until):
		return v.until, false
	}
	// The probe is due: the first to move the moment on takes it.
	held := now.Add(a.cfg.OutageProbeFirst)
	took, err := a.raise(ctx, s, v, held)
	if err != nil {
		a.cfg.Log.WarnContext(ctx, "probe not taken; call goes", "service", string(s), "error", err.Error())
		return time.Time{}, true
	}
	if !took {
		return held, false
	}
	a.cfg.Log.InfoContext(ctx, "breaker probes", "service", string(s), "failures_in_a_row", v.failures)
	return time.Time{}, true
}

// Failed counts a call to s that failed for an outage, and reports whether
// s's breaker is open after it, and until when. A breaker that cannot be
// written leaves the failure to the retry policy.
func (a *Admission) Failed(ctx context.Context, s Service) (time.Time, bool) {
	if a.cfg.Counters == nil {
		return time.Time{}, false
	}
	now := a.cfg.Clock.Now()
	today, _ := a.outageDays(now)
	if _, _, err := a.cfg.Counters.Reserve(ctx, outageFailures(s), today, 1, 0); err != nil {
		a.cfg.Log.WarnContext(ctx, "failure not counted", "service", string(s), "error", err.Error())
		return time.Time{}, false
	}
	a.remember(s, outageView{failures: 1}, now)
	for range 3 {
		v, err := a.look(ctx, s, now)
		if err != nil {
			a.cfg.Log.WarnContext(ctx, "breaker unread", "service", string(s), "error", err.Error())
			return time.Time{}, false
		}
		if v.failures < DefaultOutageAfter {
			return time.Time{}, false
		}
		until := now.Add(a.interval(v.failures))
		moved, err := a.raise(ctx, s, v, until)
		switch {
		case err != nil:
			a.cfg.Log.WarnContext(ctx, "breaker not opened", "service", string(s), "error", err.Error())
			return time.Time{}, false
		case moved && v.failures == DefaultOutageAfter:
			a.cfg.Log.WarnContext(ctx, "breaker opens", "service", string(s), "failures_in_a_row", v.failures, "until", until)
		case moved:
			a.cfg.Log.InfoContext(ctx, "probe failed", "service", string(s), "failures_in_a_row", v.failures, "until", until)
		case !v.until.IsZero() && !until.After(v.until):
			return v.until, true // opened as far by another
		default:
			continue // moved meanwhile
		}
		return until, true
	}
	return now.Add(a.cfg.OutageProbeFirst), true
}

// Answered records that s answered a call: its breaker closes. A clean
// breaker costs one read a second at most.
func (a *Admission) Answered(ctx context.Context, s Service) {
	if a.cfg.Counters == nil {
		return
	}
	now := a.cfg.Clock.Now()
	v, err := a.look(ctx, s, now)
	if err != nil {
		a.cfg.Log.WarnContext(ctx, "breaker unread", "service", string(s), "error", err.Error())
		return
	}
	if v.failures == 0 {
		return
	}
	today, yesterday := a.outageDays(now)
	for _, day := range []time.Time{today, yesterday} {
		if err := a.cfg.Counters.Release(ctx, outageFailures(s), day, math.MaxInt64); err != nil {
			a.cfg.Log.WarnContext(ctx, "breaker not closed", "service", string(s), "error", err.Error())
			return
		}
	}
	a.remember(s, outageView{}, now)
	if v.failures >= DefaultOutageAfter {
		a.cfg.Log.InfoContext(ctx, "breaker closes", "service", string(s), "failures_in_a_row", v.failures)
	}
}
