package outbox

import (
	"context"
	"fmt"
	"time"
)

// The rules of Store, run by a store between its read and write of a row
// in one transaction. Change checks the arguments first, so a rule takes
// them as valid. Every time written is UTC whole milliseconds, as stored.

func stored(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.UTC().Truncate(time.Millisecond)
}

// check is one argument rule: bad says it is broken, why how.
type check struct {
	bad bool
	why string
}

// invalid is ErrInvalid for the first broken check; nil when none is.
func invalid(cs ...check) error {
	for _, c := range cs {
		if c.bad {
			return fmt.Errorf("%w: %s", ErrInvalid, c.why)
		}
	}
	return nil
}

func refChecks(kind Kind, key string, now time.Time) []check {
	return []check{
		{kind != Callback && kind != Telegram, fmt.Sprintf("unknown kind %q", kind)},
		{key == "" || len(key) > MaxKeyLen, fmt.Sprintf("a key must be 1 to %d bytes", MaxKeyLen)},
		{now.IsZero(), "no time given"},
	}
}

// ValidateRef checks the kind and key every Store method takes.
func ValidateRef(kind Kind, key string) error {
	return invalid(refChecks(kind, key, time.Unix(0, 0))...)
}

func validateEntry(e Entry, now time.Time, more ...check) error {
	return invalid(append(append(refChecks(e.Kind, e.Key, now),
		check{len(e.JobID) > MaxJobIDLen, fmt.Sprintf("a job id is at most %d bytes", MaxJobIDLen)},
		check{len(e.Payload) > MaxPayloadLen, fmt.Sprintf("a payload is at most %d bytes", MaxPayloadLen)}), more...)...)
}

func leaseCheck(lease time.Duration) check {
	return check{lease <= 0, fmt.Sprintf("lease %s is not positive", lease)}
}

// ValidateClaim checks ClaimDue's arguments.
func ValidateClaim(kind Kind, now time.Time, lease time.Duration, limit int) error {
	return invalid(append(refChecks(kind, "-", now), leaseCheck(lease),
		check{limit < 1 || limit > MaxClaimLimit, fmt.Sprintf("limit %d is out of 1..%d", limit, MaxClaimLimit)})...)
}

func validateFinish(kind Kind, key string, o Outcome, now time.Time) error {
	known := o.State == Delivered || o.State == Failed || o.State == Pending
	return invalid(append(refChecks(kind, key, now),
		check{!known, fmt.Sprintf("unknown state %q", o.State)},
		check{o.State == Pending && o.NextAt.IsZero(), "pending without NextAt"},
		check{o.Attempt != nil && o.Attempt.At.IsZero(), "an attempt without its time"})...)
}

// applyPut's created says whether to write, as applyBegin's taken does.
func applyPut(cur Entry, found bool, e Entry, at, now time.Time) (Entry, bool) {
	if found {
		return cur, false
	}
	now = stored(now)
	return Entry{Kind: e.Kind, Key: e.Key, JobID: e.JobID, Payload: e.Payload, State: Pending,
		NextAt: stored(at), LeaseUntil: now, CreatedAt: now, UpdatedAt: now}, true
}

func takeable(e Entry, now time.Time) bool { return e.State == Pending && !e.LeaseUntil.After(now) }

func take(e Entry, now time.Time, lease time.Duration) Entry {
	e.LeaseUntil, e.UpdatedAt = stored(now.Add(lease)), stored(now)
	return e
}

func applyBegin(cur Entry, found bool, e Entry, now time.Time, lease time.Duration) (Entry, bool, error) {
	switch {
	case !found && e.Kind == Telegram:
		d, _ := applyPut(Entry{}, false, e, now.Add(lease), now)
		d.LeaseUntil = d.NextAt
		return d, true, nil
	case !found:
		return Entry{}, false, ErrNotFound
	case takeable(cur, now):
		return take(cur, now, lease), true, nil
	}
	return cur, false, nil
}

// Due reports whether ClaimDue may take e at now: pending, due, not held.
func Due(e Entry, now time.Time) bool { return takeable(e, now) && !e.NextAt.After(now) }

// ApplyClaim takes an entry a store's ClaimDue selected; one not Due is a
// bug in the selection (an error of no kind).
func ApplyClaim(cur Entry, now time.Time, lease time.Duration) (Entry, error) {
	if !Due(cur, now) {
		return Entry{}, fmt.Errorf("%s %s (%s, due at %s, held until %s) is not due at %s", cur.Kind, cur.Key,
			cur.State, cur.NextAt.Format(time.RFC3339Nano), cur.LeaseUntil.Format(time.RFC3339Nano), now.Format(time.RFC3339Nano))
	}
	return take(cur, now, lease), nil
}

func applyFinish(cur Entry, found bool, o Outcome, now time.Time) (Entry, error) {
	if !found {
		return Entry{}, ErrNotFound
	}
	e := cur
	switch {
	case e.State == Pending:
		e.State = o.State
		if o.State == Pending {
			e.NextAt = stored(o.NextAt)
		}
		if o.SentID != 0 {
			e.SentID = o.SentID
		}
		if a := o.Attempt; a != nil {
			e.Attempts++
			e.LastAt, e.LastStatus, e.LastError = stored(a.At), a.Status, a.Error
			if e.FirstAt.IsZero() {
				e.FirstAt = e.LastAt
			}
		}
	case o.State == Delivered && o.SentID != 0:
		e.SentID = o.SentID
	}
	e.LeaseUntil, e.UpdatedAt = stored(now), stored(now)
	return e, nil
}

// Get is Store.Get over read, whose found is false when there is none.
func Get(kind Kind, key string, read func() (Entry, bool, error)) (Entry, error) {
	if err := ValidateRef(kind, key); err != nil {
		return Entry{}, fmt.Errorf("get %s: %w", kind, err)
	}
	e, found, err := read()
	if err == nil && !found {
		err = ErrNotFound
	}
	if err != nil {
		return Entry{}, fmt.Errorf("get %s %s: %w", kind, key, err)
	}
	return e, nil
}

// Kept is those of wrote, an earlier run's claims whose commit's answer
// was lost, that get reads still as written: a ClaimDue run again keeps
// them and selects only the rest. It is never nil without an error.
func Kept(wrote []Entry, get func(key string) (Entry, bool, error)) ([]Entry, error) {
	kept := []Entry{}
	for _, w := range wrote {
		cur, found, err := get(w.Key)
		if err != nil {
			return nil, err
		}
		if found && Same(cur, w) {
			kept = append(kept, cur)
		}
	}
	return kept, nil
}

// Change is the primitive a store supplies: in one transaction no writer
// of the row interleaves with, read the entry, let apply decide what it
// becomes and whether to write, and write it. apply may run more than
// once; a run again after the store's own commit (its answer lost)
// returns what that commit wrote (Same) without apply. A store embeds it
// for Put, Begin and Finish.
type Change func(ctx context.Context, kind Kind, key string, apply func(cur Entry, found bool) (e Entry, write bool, err error)) (Entry, bool, error)

// Same reports whether cur, as read back, is wrote, at whole milliseconds:
// how a transaction run again after a commit whose answer was lost finds
// that commit's write (a Put says it created, a Finish counts once). Two
// takes at the same millisecond are equal, so use it only after such a
// commit.
func Same(cur, wrote Entry) bool {
	a, b := cur, wrote
	for _, t := range []*time.Time{&a.NextAt, &a.LeaseUntil, &a.FirstAt, &a.LastAt, &a.CreatedAt, &a.UpdatedAt,
		&b.NextAt, &b.LeaseUntil, &b.FirstAt, &b.LastAt, &b.CreatedAt, &b.UpdatedAt} {
		*t = stored(*t)
	}
	return a == b
}

// run checks the arguments (bad), then runs apply through c.
func (c Change) run(ctx context.Context, op string, kind Kind, key string, bad error,
	apply func(cur Entry, found bool) (Entry, bool, error),
) (Entry, bool, error) {
	if bad != nil {
		return Entry{}, false, fmt.Errorf("%s %s: %w", op, kind, bad)
	}
	got, wrote, err := c(ctx, kind, key, apply)
	if err != nil {
		return Entry{}, false, fmt.Errorf("%s %s %s: %w", op, kind, key, err)
	}
	return got, wrote, nil
}

func (c Change) Put(ctx context.Context, e Entry, at, now time.Time) (Entry, bool, error) {
	return c.run(ctx, "put", e.Kind, e.Key, validateEntry(e, now, check{at.IsZero(), "no due time given"}),
		func(cur Entry, found bool) (Entry, bool, error) {
			d, created := applyPut(cur, found, e, at, now)
			return d, created, nil
		})
}

func (c Change) Begin(ctx context.Context, e Entry, now time.Time, lease time.Duration) (Entry, bool, error) {
	return c.run(ctx, "begin", e.Kind, e.Key, validateEntry(e, now, leaseCheck(lease)),
		func(cur Entry, found bool) (Entry, bool, error) { return applyBegin(cur, found, e, now, lease) })
}

func (c Change) Finish(ctx context.Context, kind Kind, key string, o Outcome, now time.Time) (Entry, error) {
	got, _, err := c.run(ctx, "finish", kind, key, validateFinish(kind, key, o, now),
		func(cur Entry, found bool) (Entry, bool, error) {
			e, err := applyFinish(cur, found, o, now)
			return e, true, err
		})
	return got, err
}
