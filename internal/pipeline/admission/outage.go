package admission

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"transcriber/internal/spend"
)

// Outages: a service every job depends on (the recognizer, the object
// store) that is unavailable to everyone is no job's failure. Each such
// service has a breaker, kept in the shared counters so that every
// instance sees the same one:
//
//   - closed, calls go. A call that fails for an outage (the caller tells
//     Failed) counts one more failure in a row; a call that is answered
//     (Answered) sets the count back to 0. So only failures with no answer
//     between them, across every job and instance, add up.
//   - OutageAfter failures in a row open it: no call goes until the end of
//     an interval that starts at OutageProbeFirst and doubles with each
//     further failure, up to OutageProbeMax. The jobs that meet it are held
//     until then (the pipeline saves or releases them due at that moment,
//     their attempts not counted).
//   - at the end of the interval the first caller (Pass) takes the probe:
//     its call goes, while the others are held for OutageProbeFirst. If
//     the probe is answered the breaker closes and the held jobs go on, in
//     the order they come due; if it fails the interval doubles.
//
// The state is two counters a service in the UTC day's window (the day
// before is read with it, so a breaker is not forgotten at midnight):
// outageFailures, the failures in a row (Reserve adds one, Release of
// everything resets them), and outageUntil, the moment (in Unix
// milliseconds) until which no call goes. The latter only ever rises, so
// a conditional Reserve that lifts it from the value just read to a later
// one is a compare-and-set: of two instances that read the same moment,
// one moves it and the other is refused and reads again. Closed and open
// are told by the failures alone; a past moment is stale.

// Service names a service whose outages the breaker keeps.
type Service string

// The services the pipeline's jobs all depend on.
const (
	// Recognizer: SpeechKit (its submissions, checks and results).
	Recognizer Service = "speechkit"
	// Storage: the object store (the uploads, the converted audio, the
	// transcripts).
	Storage Service = "storage"
	// SyncRecognizer: SpeechKit's synchronous API, a door of its own
	// (another endpoint, another quota). Its breaker only decides whether
	// a fast job tries it: while it is open the job goes the asynchronous
	// way at once, and no asynchronous work waits for it.
	SyncRecognizer Service = "speechkit_sync"
)

// The breaker's numbers; docs/settings.md says where they come from.
const (
	DefaultOutageAfter      = 3
	DefaultOutageProbeFirst = 10 * time.Second
	DefaultOutageProbeMax   = 5 * time.Minute
)

// outageLook is how long a read of a breaker that found it closed and
// clean is trusted by this instance: at most one read a second while
// every call is answered. A stale view errs towards a call that fails and
// is counted.
const outageLook = time.Second

func outageFailures(s Service) string { return "outage_failures:" + string(s) }
func outageUntil(s Service) string    { return "outage_until:" + string(s) }

// breakers are the instance's views of the shared breakers.
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

// breaking reports whether the breakers are kept.
func (a *Admission) breaking() bool { return a.cfg.Counters != nil }

func (a *Admission) outageDays(now time.Time) (today, yesterday time.Time) {
	today, _ = spend.Day(now)
	return today, today.AddDate(0, 0, -1)
}

// look reads s's breaker, or trusts a clean read of less than outageLook
// ago: its failures in a row, and, when there are any, the moment until
// which no call goes (a clean breaker costs two reads).
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
		// Closed and clean: its moments say nothing (raise is only ever
		// asked with failures counted).
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

// interval is how long the breaker stays open after its n-th failure in a
// row: OutageProbeFirst at the OutageAfter-th, doubling, at most
// OutageProbeMax.
func (a *Admission) interval(n int64) time.Duration {
	d := a.cfg.OutageProbeFirst
	for i := int64(a.cfg.OutageAfter); i < n && d < a.cfg.OutageProbeMax; i++ {
		d *= 2
	}
	return min(d, a.cfg.OutageProbeMax)
}

// raise lifts s's outageUntil from v's reading to at, if at is later: the
// compare-and-set (see above). It reports whether it moved it.
func (a *Admission) raise(ctx context.Context, s Service, v outageView, at time.Time) (bool, error) {
	target := at.UnixMilli()
	if target <= v.today || (!v.until.IsZero() && !at.After(v.until)) {
		return false, nil
	}
	_, ok, err := a.cfg.Counters.Reserve(ctx, outageUntil(s), v.day, target-v.today, target)
	return ok, err
}

// Pass asks whether a call to s may go now: true when s's breaker is
// closed, or open with its probe due and this caller takes it. Otherwise
// it returns when to ask again. A breaker that cannot be read lets the
// call go.
func (a *Admission) Pass(ctx context.Context, s Service) (time.Time, bool) {
	if !a.breaking() {
		return time.Time{}, true
	}
	now := a.cfg.Clock.Now()
	v, err := a.look(ctx, s, now)
	switch {
	case err != nil:
		a.cfg.Log.WarnContext(ctx, "could not read a breaker; the call goes", "service", string(s), "error", err.Error())
		return time.Time{}, true
	case v.failures < int64(a.cfg.OutageAfter):
		return time.Time{}, true
	case now.Before(v.until):
		return v.until, false
	}
	// The probe is due: the first to move the moment on takes it, and
	// holds the others while it runs.
	held := now.Add(a.cfg.OutageProbeFirst)
	took, err := a.raise(ctx, s, v, held)
	if err != nil {
		a.cfg.Log.WarnContext(ctx, "could not take a breaker's probe; the call goes", "service", string(s), "error", err.Error())
		return time.Time{}, true
	}
	if !took {
		return held, false
	}
	a.cfg.Log.InfoContext(ctx, "probing a service that was unavailable", "service", string(s), "failures_in_a_row", v.failures)
	return time.Time{}, true
}

// Failed records that a call to s failed for an outage of s, and reports
// whether s's breaker is open after it, and until when: a job whose call
// failed is then held until that moment, its attempt not counted. A
// breaker that cannot be written leaves the failure to the retry policy.
func (a *Admission) Failed(ctx context.Context, s Service) (time.Time, bool) {
	if !a.breaking() {
		return time.Time{}, false
	}
	now := a.cfg.Clock.Now()
	today, _ := a.outageDays(now)
	if _, _, err := a.cfg.Counters.Reserve(ctx, outageFailures(s), today, 1, 0); err != nil {
		a.cfg.Log.WarnContext(ctx, "could not count a failure of a service", "service", string(s), "error", err.Error())
		return time.Time{}, false
	}
	a.remember(s, outageView{failures: 1}, now)
	for range 3 {
		v, err := a.look(ctx, s, now)
		if err != nil {
			a.cfg.Log.WarnContext(ctx, "could not read a breaker", "service", string(s), "error", err.Error())
			return time.Time{}, false
		}
		if v.failures < int64(a.cfg.OutageAfter) {
			return time.Time{}, false
		}
		until := now.Add(a.interval(v.failures))
		moved, err := a.raise(ctx, s, v, until)
		switch {
		case err != nil:
			a.cfg.Log.WarnContext(ctx, "could not open a breaker", "service", string(s), "error", err.Error())
			return time.Time{}, false
		case moved && v.failures == int64(a.cfg.OutageAfter):
			a.cfg.Log.WarnContext(ctx, "a service is unavailable to every job: its calls stop, the jobs wait, and a probe goes at a growing interval",
				"service", string(s), "failures_in_a_row", v.failures, "until", until)
		case moved:
			a.cfg.Log.InfoContext(ctx, "a probe failed; the service stays unavailable", "service", string(s),
				"failures_in_a_row", v.failures, "until", until)
		case !v.until.IsZero() && !until.After(v.until):
			return v.until, true // someone else opened it as far already
		default:
			continue // moved meanwhile: read again
		}
		return until, true
	}
	return now.Add(a.cfg.OutageProbeFirst), true
}

// Answered records that a call to s was answered, whatever the answer:
// s is up, its failures in a row go back to 0 and its breaker closes. A
// clean breaker (the usual case) costs one read a second at most.
func (a *Admission) Answered(ctx context.Context, s Service) {
	if !a.breaking() {
		return
	}
	now := a.cfg.Clock.Now()
	v, err := a.look(ctx, s, now)
	if err != nil {
		a.cfg.Log.WarnContext(ctx, "could not read a breaker", "service", string(s), "error", err.Error())
		return
	}
	if v.failures == 0 {
		return
	}
	today, yesterday := a.outageDays(now)
	for _, day := range []time.Time{today, yesterday} {
		if err := a.cfg.Counters.Release(ctx, outageFailures(s), day, math.MaxInt64); err != nil {
			a.cfg.Log.WarnContext(ctx, "could not close a breaker", "service", string(s), "error", err.Error())
			return
		}
	}
	a.remember(s, outageView{}, now)
	if v.failures >= int64(a.cfg.OutageAfter) {
		a.cfg.Log.InfoContext(ctx, "a service that was unavailable answers again; the jobs that waited for it go on",
			"service", string(s), "failures_in_a_row", v.failures)
	}
}
