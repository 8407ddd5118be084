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

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// ValidateRef checks the kind and key every Store method takes.
func ValidateRef(kind Kind, key string) error {
	switch {
	case kind != Callback && kind != Telegram:
		return fmt.Errorf("%w: unknown kind %q", ErrInvalid, kind)
	case key == "" || len(key) > MaxKeyLen:
		return fmt.Errorf("%w: a key must be 1 to %d bytes", ErrInvalid, MaxKeyLen)
	}
	return nil
}

func validateTime(t time.Time, what string) error {
	if t.IsZero() {
		return fmt.Errorf("%w: no %s given", ErrInvalid, what)
	}
	return nil
}

func validateLease(lease time.Duration) error {
	if lease <= 0 {
		return fmt.Errorf("%w: lease %s is not positive", ErrInvalid, lease)
	}
	return nil
}

func validateEntry(e Entry, now time.Time) error {
	var bad error
	switch {
	case len(e.JobID) > MaxJobIDLen:
		bad = fmt.Errorf("%w: a job id is at most %d bytes", ErrInvalid, MaxJobIDLen)
	case len(e.Payload) > MaxPayloadLen:
		bad = fmt.Errorf("%w: a payload is at most %d bytes", ErrInvalid, MaxPayloadLen)
	}
	return firstErr(ValidateRef(e.Kind, e.Key), bad, validateTime(now, "time"))
}

// ValidateClaim checks ClaimDue's arguments.
func ValidateClaim(kind Kind, now time.Time, lease time.Duration, limit int) error {
	var bad error
	if limit < 1 || limit > MaxClaimLimit {
		bad = fmt.Errorf("%w: limit %d is out of 1..%d", ErrInvalid, limit, MaxClaimLimit)
	}
	return firstErr(ValidateRef(kind, "-"), validateTime(now, "time"), validateLease(lease), bad)
}

func validateFinish(kind Kind, key string, o Outcome, now time.Time) error {
	var bad error
	switch o.State {
	case Delivered, Failed:
	case Pending:
		if o.NextAt.IsZero() {
			bad = fmt.Errorf("%w: pending without NextAt", ErrInvalid)
		}
	default:
		bad = fmt.Errorf("%w: unknown state %q", ErrInvalid, o.State)
	}
	if bad == nil && o.Attempt != nil && o.Attempt.At.IsZero() {
		bad = fmt.Errorf("%w: an attempt without its time", ErrInvalid)
	}
	return firstErr(ValidateRef(kind, key), validateTime(now, "time"), bad)
}

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

func (c Change) Put(ctx context.Context, e Entry, at, now time.Time) (Entry, bool, error) {
	if err := firstErr(validateEntry(e, now), validateTime(at, "due time")); err != nil {
		return Entry{}, false, fmt.Errorf("put %s: %w", e.Kind, err)
	}
	got, created, err := c(ctx, e.Kind, e.Key, func(cur Entry, found bool) (Entry, bool, error) {
		d, created := applyPut(cur, found, e, at, now)
		return d, created, nil
	})
	if err != nil {
		return Entry{}, false, fmt.Errorf("put %s %s: %w", e.Kind, e.Key, err)
	}
	return got, created, nil
}

func (c Change) Begin(ctx context.Context, e Entry, now time.Time, lease time.Duration) (Entry, bool, error) {
	if err := firstErr(validateEntry(e, now), validateLease(lease)); err != nil {
		return Entry{}, false, fmt.Errorf("begin %s: %w", e.Kind, err)
	}
	got, taken, err := c(ctx, e.Kind, e.Key, func(cur Entry, found bool) (Entry, bool, error) {
		return applyBegin(cur, found, e, now, lease)
	})
	if err != nil {
		return Entry{}, false, fmt.Errorf("begin %s %s: %w", e.Kind, e.Key, err)
	}
	return got, taken, nil
}

func (c Change) Finish(ctx context.Context, kind Kind, key string, o Outcome, now time.Time) (Entry, error) {
	if err := validateFinish(kind, key, o, now); err != nil {
		return Entry{}, fmt.Errorf("finish %s: %w", kind, err)
	}
	got, _, err := c(ctx, kind, key, func(cur Entry, found bool) (Entry, bool, error) {
		e, err := applyFinish(cur, found, o, now)
		return e, true, err
	})
	if err != nil {
		return Entry{}, fmt.Errorf("finish %s %s: %w", kind, key, err)
	}
	return got, nil
}
