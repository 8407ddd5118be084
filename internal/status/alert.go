package status

import (
	"context"
	"errors"
	"fmt"
	"time"

	"transcriber/internal/quota"
	"transcriber/internal/spend"
)

// Kind is a kind of alert to the owner. Each kind is sent at most once an
// hour, but for the month's audio thresholds, sent once a UTC month
// (Kind.Monthly): a threshold is passed once.
type Kind string

// The kinds.
const (
	// AlertDead: a job ended dead (its code and id).
	AlertDead Kind = "dead"
	// AlertQuotaWait: jobs have waited for the recognizer's request window
	// over QuotaWaitAlert.
	AlertQuotaWait Kind = "quota_wait"
	// AlertAudio80 and AlertAudio100: the month's audio passed 80 % and
	// 100 % of LIMIT_AUDIO_PER_MONTH.
	AlertAudio80  Kind = "audio_80"
	AlertAudio100 Kind = "audio_100"
	// AlertBudget80 and AlertBudget100: the month's money passed 80 % and
	// 100 % of LIMIT_BUDGET_PER_MONTH.
	AlertBudget80  Kind = "budget_80"
	AlertBudget100 Kind = "budget_100"
	// AlertCallbacks: a callback endpoint failed its last CallbackFailures
	// POSTs.
	AlertCallbacks Kind = "callbacks"
)

// Kinds are every kind, in the order Decide returns them.
var Kinds = []Kind{AlertDead, AlertQuotaWait, AlertAudio100, AlertAudio80, AlertBudget100, AlertBudget80, AlertCallbacks}

// Monthly reports whether k is sent once a UTC month rather than once an
// hour.
func (k Kind) Monthly() bool {
	return k == AlertAudio80 || k == AlertAudio100 || k == AlertBudget80 || k == AlertBudget100
}

// The alerts' numbers (docs/settings.md).
const (
	// AlertEvery is the least time between two alerts of one kind.
	AlertEvery = time.Hour
	// QuotaWaitAlert is how long jobs wait for the request window before
	// the owner hears of it: a wait passes within one 10-minute window
	// when the quota only ran short for a moment.
	QuotaWaitAlert = 15 * time.Minute
	// CallbackFailures is how many failed POSTs in a row of an endpoint's
	// callbacks make an alert.
	CallbackFailures = 5
	// CheckEvery is how often the alerts are decided (Gate.Check): one
	// status read each time (docs/database.md, "Cost in request units").
	CheckEvery = 15 * time.Minute
)

// Sent is when each kind of alert was last sent; a kind not in it was not
// sent within what the record keeps (Gate.Sent).
type Sent map[Kind]time.Time

// Alert is one alert to send, with what its text says.
type Alert struct {
	Kind Kind `json:"kind"`
	// AlertDead: the latest job that ended dead since the last alert, its
	// code, when it ended, and how many others the status names since then
	// (at most LatestDead in all).
	JobID string    `json:"job_id,omitempty"`
	Code  string    `json:"code,omitempty"`
	At    time.Time `json:"at"`
	More  int       `json:"more,omitempty"`
	// AlertQuotaWait: how many jobs wait (more than that when JobsMore),
	// and for how long at most.
	Jobs     int           `json:"jobs,omitempty"`
	JobsMore bool          `json:"jobs_more,omitempty"`
	Waited   time.Duration `json:"waited,omitempty"`
	// AlertAudio80, AlertAudio100: the month's billed seconds and their
	// limit, and when the month ends.
	UsedSeconds  int64 `json:"used_seconds,omitempty"`
	LimitSeconds int64 `json:"limit_seconds,omitempty"`
	// AlertBudget80, AlertBudget100: the month's money and the budget, in
	// µ₽, and when the month ends.
	UsedMicros   int64 `json:"used_micros,omitempty"`
	BudgetMicros int64 `json:"budget_micros,omitempty"`
	// AlertCallbacks: the endpoint with the most failed POSTs, and how
	// many endpoints fail in all.
	Endpoint  Endpoint `json:"endpoint"`
	Endpoints int      `json:"endpoints,omitempty"`
}

// Decide returns the alerts to send at now, given the status s (read at
// now) and when each kind was last sent: each kind at most once in
// AlertEvery (once a UTC month for the audio thresholds), in the order of
// Kinds. The caller sends each through the outbox, keyed by kind and
// window (sent once), then records it (Gate.Take).
func Decide(s Status, sent Sent, now time.Time) []Alert {
	var out []Alert
	allowed := func(k Kind) bool {
		last, ok := sent[k]
		if !ok || last.IsZero() {
			return true
		}
		if k.Monthly() {
			month, _ := spend.Month(now)
			return last.Before(month)
		}
		return now.Sub(last) >= AlertEvery
	}

	if allowed(AlertDead) {
		// New: ended after the last alert, or in the last AlertEvery.
		since := now.Add(-AlertEvery)
		if last := sent[AlertDead]; !last.IsZero() {
			since = last
		}
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

	// A threshold's alert: 100 %, or 80 % but not after the month's
	// 100 % alert (the limit came down or was raised since, and 80 % says
	// nothing new).
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

// Gate keeps when each kind of alert was last sent in the shared usage
// counters, so every instance sees one record: counter "alert:<kind>" of
// the kind's window (the UTC hour, or month for the thresholds) holds the
// moment as milliseconds from the window's start plus one. Take reserves
// that amount with itself as the limit, granted only while the counter is
// 0: one record a window, atomically. The rows expire as every counter's.
type Gate struct{ Counters quota.Counters }

// AlertKey is the counter key of kind k's record.
func AlertKey(k Kind) string { return "alert:" + string(k) }

// checkKey is the counter that lets one caller a CheckEvery decide the
// alerts (Check).
const checkKey = "alert:check"

// WindowOf is the start of kind k's window that holds t: at most one
// alert of k is sent in it.
func WindowOf(k Kind, t time.Time) time.Time {
	if k.Monthly() {
		start, _ := spend.Month(t)
		return start
	}
	return t.UTC().Truncate(time.Hour)
}

// Take records an alert of kind k sent at at (the status's At, so a job
// that ended after the read is new to the next one); false when one was
// recorded in k's window already.
func (g Gate) Take(ctx context.Context, k Kind, at time.Time) (bool, error) {
	if g.Counters == nil {
		return false, errNoCounters
	}
	at = at.UTC().Truncate(time.Millisecond)
	w := WindowOf(k, at)
	mark := at.Sub(w).Milliseconds() + 1
	_, ok, err := g.Counters.Reserve(ctx, AlertKey(k), w, mark, mark)
	if err != nil {
		return false, fmt.Errorf("record the %s alert: %w", k, err)
	}
	return ok, nil
}

// Sent reads when each kind was last sent in the current and previous hour
// (the current month for the thresholds): all Decide needs.
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
				continue
			}
			if used <= 0 {
				continue
			}
			if at := w.Add(time.Duration(used-1) * time.Millisecond); at.After(out[k]) {
				out[k] = at
			}
		}
	}
	if err := errors.Join(errList...); err != nil {
		return nil, fmt.Errorf("read the alerts sent: %w", err)
	}
	return out, nil
}

// Check reports whether this caller decides the alerts now: true for one
// caller in each CheckEvery window; only it reads the status and Sent.
func (g Gate) Check(ctx context.Context, now time.Time) (bool, error) {
	if g.Counters == nil {
		return false, errNoCounters
	}
	_, ok, err := g.Counters.Reserve(ctx, checkKey, now.UTC().Truncate(CheckEvery), 1, 1)
	if err != nil {
		return false, fmt.Errorf("take the alerts' turn: %w", err)
	}
	return ok, nil
}

var errNoCounters = errors.New("no usage counters: alerts cannot be recorded")
