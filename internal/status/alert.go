package status

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"transcriber/internal/quota"
	"transcriber/internal/spend"
)

// Kind is a kind of alert to the owner, sent at most once an hour, or
// once a UTC month for the thresholds (Monthly): a threshold is passed once.
type Kind string

const (
	AlertDead      Kind = "dead"       // a job ended dead
	AlertQuotaWait Kind = "quota_wait" // jobs waited for the request window over QuotaWaitAlert
	AlertAudio80   Kind = "audio_80"   // the month's audio passed 80 % of LIMIT_AUDIO_PER_MONTH
	AlertAudio100  Kind = "audio_100"
	AlertBudget80  Kind = "budget_80" // the month's money passed 80 % of LIMIT_BUDGET_PER_MONTH
	AlertBudget100 Kind = "budget_100"
	AlertCallbacks Kind = "callbacks" // an endpoint failed its last CallbackFailures POSTs
)

// Kinds are every kind, in the order Decide returns them.
var Kinds = []Kind{AlertDead, AlertQuotaWait, AlertAudio100, AlertAudio80, AlertBudget100, AlertBudget80, AlertCallbacks}

// Monthly reports whether k is sent once a UTC month, not an hour.
func (k Kind) Monthly() bool {
	return k == AlertAudio80 || k == AlertAudio100 || k == AlertBudget80 || k == AlertBudget100
}

// The alerts' numbers (docs/settings.md).
const (
	AlertEvery = time.Hour // the least time between two alerts of one kind
	// QuotaWaitAlert: a wait passes within one 10-minute window when the
	// quota only ran short for a moment.
	QuotaWaitAlert   = 15 * time.Minute
	CallbackFailures = 5 // failed POSTs in a row of an endpoint
	// CheckEvery is how often the alerts are decided (Gate.Check), one
	// status read each (docs/database.md, "Cost in request units").
	CheckEvery = 15 * time.Minute
)

// Sent is when each kind was last sent, within what Gate.Sent reads.
type Sent map[Kind]time.Time

// Alert is one alert to send, with what its text says.
type Alert struct {
	Kind Kind `json:"kind"`
	// AlertDead: the latest dead job since the last alert, and how many
	// others the status names (at most LatestDead in all).
	JobID string    `json:"job_id,omitempty"`
	Code  string    `json:"code,omitempty"`
	At    time.Time `json:"at"`
	More  int       `json:"more,omitempty"`
	// AlertQuotaWait: how many jobs wait (more with JobsMore), how long.
	Jobs     int           `json:"jobs,omitempty"`
	JobsMore bool          `json:"jobs_more,omitempty"`
	Waited   time.Duration `json:"waited,omitempty"`
	// Audio and budget thresholds: the month's use and limit; At is when
	// the month ends.
	UsedSeconds  int64 `json:"used_seconds,omitempty"`
	LimitSeconds int64 `json:"limit_seconds,omitempty"`
	UsedMicros   int64 `json:"used_micros,omitempty"` // µ₽
	BudgetMicros int64 `json:"budget_micros,omitempty"`
	// AlertCallbacks: the endpoint failing most, and how many fail.
	Endpoint  Endpoint `json:"endpoint"`
	Endpoints int      `json:"endpoints,omitempty"`
}

// Decide returns the alerts due at now, given the status read at now and
// what was sent, in the order of Kinds. The caller sends each through the
// outbox, keyed by kind and window, then records it (Gate.Take).
func Decide(s Status, sent Sent, now time.Time) []Alert {
	var out []Alert
	allowed := func(k Kind) bool {
		last := sent[k]
		if k.Monthly() {
			return last.Before(WindowOf(k, now))
		}
		return last.IsZero() || now.Sub(last) >= AlertEvery
	}

	if allowed(AlertDead) {
		since := cmp.Or(sent[AlertDead], now.Add(-AlertEvery)) // new: ended since
		var fresh []Ended
		for _, d := range s.Dead {
			if d.At.After(since) {
				fresh = append(fresh, d)
			}
		}
		if len(fresh) > 0 {
			out = append(out, Alert{Kind: AlertDead, JobID: fresh[0].JobID, Code: fresh[0].Code, At: fresh[0].At, More: len(fresh) - 1})
		}
	}

	if q := s.QuotaWait; q.Jobs > 0 && !q.Since.IsZero() && now.Sub(q.Since) >= QuotaWaitAlert && allowed(AlertQuotaWait) {
		out = append(out, Alert{Kind: AlertQuotaWait, Jobs: q.Jobs, JobsMore: q.More, Waited: now.Sub(q.Since), At: now})
	}

	// 80 % says nothing new after the month's 100 % alert (the limit was
	// raised since).
	threshold := func(used, limit int64, k80, k100 Kind, a Alert) {
		_, sent100 := sent[k100]
		switch {
		case limit <= 0:
		case used >= limit && allowed(k100):
			a.Kind = k100
			out = append(out, a)
		case used < limit && used*100 >= limit*80 && allowed(k80) && (!sent100 || allowed(k100)):
			a.Kind = k80
			out = append(out, a)
		}
	}
	a := s.Audio
	threshold(a.UsedSeconds, a.LimitSeconds, AlertAudio80, AlertAudio100,
		Alert{UsedSeconds: a.UsedSeconds, LimitSeconds: a.LimitSeconds, At: a.ResetsAt})
	b := s.Spend
	threshold(b.UsedMicros, b.BudgetMicros, AlertBudget80, AlertBudget100,
		Alert{UsedMicros: b.UsedMicros, BudgetMicros: b.BudgetMicros, At: b.ResetsAt})

	if c := s.Callbacks; c != nil && allowed(AlertCallbacks) {
		var failing []Endpoint
		for _, e := range c.Endpoints {
			if e.Failures >= CallbackFailures {
				failing = append(failing, e)
			}
		}
		if len(failing) > 0 { // the status sorts them, the most failures first
			out = append(out, Alert{Kind: AlertCallbacks, Endpoint: failing[0], Endpoints: len(failing), At: failing[0].LastAt})
		}
	}
	return out
}

// Gate keeps when each kind was last sent in the shared usage counters:
// counter "alert:<kind>" of the kind's window (the UTC hour or month)
// holds milliseconds from the window's start plus one. Take reserves that
// with itself as the limit, granted only while the counter is 0: one
// record a window, atomically.
type Gate struct{ Counters quota.Counters }

func AlertKey(k Kind) string { return "alert:" + string(k) }

const checkKey = "alert:check"

// WindowOf is the start of k's window holding t: one alert of k a window.
func WindowOf(k Kind, t time.Time) time.Time {
	if k.Monthly() {
		start, _ := spend.Month(t)
		return start
	}
	return t.UTC().Truncate(time.Hour)
}

// Take records an alert of k sent at at (the status's At, so a job that
// ended after the read is new to the next); false when k's window has one.
func (g Gate) Take(ctx context.Context, k Kind, at time.Time) (bool, error) {
	at = at.UTC().Truncate(time.Millisecond)
	w := WindowOf(k, at)
	ok, err := g.once(ctx, AlertKey(k), w, at.Sub(w).Milliseconds()+1)
	if err != nil {
		return false, fmt.Errorf("record the %s alert: %w", k, err)
	}
	return ok, nil
}

// Sent reads each kind's current and previous hour (or current month).
func (g Gate) Sent(ctx context.Context, now time.Time) (Sent, error) {
	out := Sent{}
	if g.Counters == nil {
		return out, nil
	}
	var errList []error
	for _, k := range Kinds {
		w := WindowOf(k, now)
		windows := []time.Time{w}
		if !k.Monthly() {
			windows = append(windows, w.Add(-time.Hour))
		}
		for _, w := range windows {
			used, err := g.Counters.Used(ctx, AlertKey(k), w)
			if err != nil {
				errList = append(errList, err)
			} else if at := w.Add(time.Duration(used-1) * time.Millisecond); used > 0 && at.After(out[k]) {
				out[k] = at
			}
		}
	}
	if err := errors.Join(errList...); err != nil {
		return nil, fmt.Errorf("read the alerts sent: %w", err)
	}
	return out, nil
}

// Check reports whether this caller decides the alerts now: one caller a
// CheckEvery window.
func (g Gate) Check(ctx context.Context, now time.Time) (bool, error) {
	ok, err := g.once(ctx, checkKey, now.UTC().Truncate(CheckEvery), 1)
	if err != nil {
		return false, fmt.Errorf("take the alerts' turn: %w", err)
	}
	return ok, nil
}

// once reserves mark of key's window w with mark as the limit: granted
// only while the counter is 0.
func (g Gate) once(ctx context.Context, key string, w time.Time, mark int64) (bool, error) {
	if g.Counters == nil {
		return false, errors.New("no usage counters: alerts cannot be recorded")
	}
	_, ok, err := g.Counters.Reserve(ctx, key, w, mark, mark)
	return ok, err
}
