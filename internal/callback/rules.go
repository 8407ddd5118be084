package callback

import (
	"context"
	"fmt"
	"time"
)

// The rules of Store, as pure functions, the way botstate has them: a
// store reads the row inside its transaction, calls the rule with it, and
// writes what the rule returns in the same transaction. Register, Begin
// and Finish go through Change: a store supplies only its transaction.
// Every time a rule writes is UTC at whole milliseconds, the precision the
// stores keep.

// maxIDLen bounds a job id or a webhook id, in bytes.
const maxIDLen = 64

// stored is t as the stores keep it: UTC, whole milliseconds; the zero
// time stays zero.
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

// ValidateJobID is the rule of every job id a Store method takes: 1 to 64
// bytes. Errors: ErrInvalid.
func ValidateJobID(id string) error {
	if id == "" || len(id) > maxIDLen {
		return fmt.Errorf("%w: a job id must be 1 to %d bytes", ErrInvalid, maxIDLen)
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

// ValidateRegister is the argument rule of Store.Register.
func ValidateRegister(d Delivery, at, now time.Time) error {
	var missing error
	switch {
	case d.URL == "" || len(d.URL) > MaxURLLen:
		missing = fmt.Errorf("%w: a URL of 1 to %d bytes is needed", ErrInvalid, MaxURLLen)
	case d.TokenHash == "" || len(d.TokenHash) > maxIDLen:
		missing = fmt.Errorf("%w: the token's hash is needed", ErrInvalid)
	case d.WebhookID == "" || len(d.WebhookID) > maxIDLen:
		missing = fmt.Errorf("%w: a webhook id of 1 to %d bytes is needed", ErrInvalid, maxIDLen)
	}
	return firstErr(ValidateJobID(d.JobID), missing, validateTime(now, "time"), validateTime(at, "due time"))
}

// ValidateBegin is the argument rule of Store.Begin.
func ValidateBegin(jobID string, now time.Time, lease time.Duration) error {
	return firstErr(ValidateJobID(jobID), validateTime(now, "time"), validateLease(lease))
}

// ValidateClaim is the argument rule of Store.ClaimDue.
func ValidateClaim(now time.Time, lease time.Duration, limit int) error {
	var bad error
	if limit < 1 || limit > MaxClaimLimit {
		bad = fmt.Errorf("%w: limit %d is out of 1..%d", ErrInvalid, limit, MaxClaimLimit)
	}
	return firstErr(validateTime(now, "time"), validateLease(lease), bad)
}

// ValidateFinish is the argument rule of Store.Finish.
func ValidateFinish(jobID string, o Outcome, now time.Time) error {
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
	return firstErr(ValidateJobID(jobID), validateTime(now, "time"), bad)
}

// ApplyRegister is the rule of Store.Register: cur is the delivery stored
// for d's job, found false when there is none.
func ApplyRegister(cur Delivery, found bool, d Delivery, at, now time.Time) (Delivery, bool, error) {
	if err := ValidateRegister(d, at, now); err != nil {
		return Delivery{}, false, err
	}
	if found {
		return cur, false, nil
	}
	now = stored(now)
	return Delivery{JobID: d.JobID, URL: d.URL, TokenHash: d.TokenHash, WebhookID: d.WebhookID, State: Pending,
		NextAt: stored(at), LeaseUntil: now, CreatedAt: now, UpdatedAt: now}, true, nil
}

// takeable reports whether a sender may take d at now.
func takeable(d Delivery, now time.Time) bool {
	return d.State == Pending && !d.LeaseUntil.After(now)
}

func take(d Delivery, now time.Time, lease time.Duration) Delivery {
	d.LeaseUntil = stored(now.Add(lease))
	d.UpdatedAt = stored(now)
	return d
}

// ApplyBegin is the rule of Store.Begin: taken says whether to write d.
func ApplyBegin(cur Delivery, found bool, jobID string, now time.Time, lease time.Duration) (Delivery, bool, error) {
	if err := ValidateBegin(jobID, now, lease); err != nil {
		return Delivery{}, false, err
	}
	if !found {
		return Delivery{}, false, ErrNotFound
	}
	if !takeable(cur, now) {
		return cur, false, nil
	}
	return take(cur, now, lease), true, nil
}

// Due reports whether ClaimDue may take d at now: pending, due and not
// held. A store's selection for ClaimDue is this condition, by NextAt.
func Due(d Delivery, now time.Time) bool { return takeable(d, now) && !d.NextAt.After(now) }

// ApplyClaim is the rule of ClaimDue's take of one delivery the store
// selected as due. An error of no kind when cur is not Due: the store's
// selection and the rule disagree, a bug.
func ApplyClaim(cur Delivery, now time.Time, lease time.Duration) (Delivery, error) {
	if err := firstErr(validateTime(now, "time"), validateLease(lease)); err != nil {
		return Delivery{}, err
	}
	if !Due(cur, now) {
		return Delivery{}, fmt.Errorf("callback of job %s (%s, due at %s, held until %s) is not due at %s", cur.JobID,
			cur.State, cur.NextAt.Format(time.RFC3339Nano), cur.LeaseUntil.Format(time.RFC3339Nano), now.Format(time.RFC3339Nano))
	}
	return take(cur, now, lease), nil
}

// ApplyFinish is the rule of Store.Finish.
func ApplyFinish(cur Delivery, found bool, jobID string, o Outcome, now time.Time) (Delivery, error) {
	if err := ValidateFinish(jobID, o, now); err != nil {
		return Delivery{}, err
	}
	if !found {
		return Delivery{}, ErrNotFound
	}
	d := cur
	if d.State == Pending {
		d.State = o.State
		if o.State == Pending {
			d.NextAt = stored(o.NextAt)
		}
		if a := o.Attempt; a != nil {
			d.Attempts++
			d.LastAt, d.LastStatus, d.LastError = stored(a.At), a.Status, a.Error
			if d.FirstAt.IsZero() {
				d.FirstAt = d.LastAt
			}
		}
	}
	d.LeaseUntil, d.UpdatedAt = stored(now), stored(now)
	return d, nil
}

// Change is the one primitive a store supplies: read the delivery of
// jobID (found false when there is none), let apply decide what it
// becomes and whether to write it, and write that (an insert when it was
// not found, an update otherwise) in one transaction no concurrent writer
// of the row interleaves with. apply may run more than once, and a run
// again after the store's own commit (its answer lost) returns, without
// apply, what that commit wrote (Same).
type Change func(ctx context.Context, jobID string, apply func(cur Delivery, found bool) (d Delivery, write bool, err error)) (Delivery, bool, error)

// Same reports whether cur, a delivery as read back, is wrote, what a
// write made of it: every field, times at whole milliseconds. A store
// whose transaction runs again after a commit whose answer was lost uses
// it to find what that commit wrote (see botstate.Same): a Register run
// again says it registered, a Begin finds its own take, a Finish counts
// its attempt once.
func Same(cur, wrote Delivery) bool {
	a, b := cur, wrote
	for _, t := range []*time.Time{&a.NextAt, &a.LeaseUntil, &a.FirstAt, &a.LastAt, &a.CreatedAt, &a.UpdatedAt,
		&b.NextAt, &b.LeaseUntil, &b.FirstAt, &b.LastAt, &b.CreatedAt, &b.UpdatedAt} {
		*t = stored(*t)
	}
	return a == b
}

// Register is Store.Register over c.
func (c Change) Register(ctx context.Context, d Delivery, at, now time.Time) (Delivery, bool, error) {
	if err := ValidateRegister(d, at, now); err != nil {
		return Delivery{}, false, fmt.Errorf("register callback: %w", err)
	}
	got, created, err := c(ctx, d.JobID, func(cur Delivery, found bool) (Delivery, bool, error) {
		return ApplyRegister(cur, found, d, at, now)
	})
	if err != nil {
		return Delivery{}, false, fmt.Errorf("register callback of job %s: %w", d.JobID, err)
	}
	return got, created, nil
}

// Begin is Store.Begin over c.
func (c Change) Begin(ctx context.Context, jobID string, now time.Time, lease time.Duration) (Delivery, bool, error) {
	if err := ValidateBegin(jobID, now, lease); err != nil {
		return Delivery{}, false, fmt.Errorf("begin callback: %w", err)
	}
	d, taken, err := c(ctx, jobID, func(cur Delivery, found bool) (Delivery, bool, error) {
		return ApplyBegin(cur, found, jobID, now, lease)
	})
	if err != nil {
		return Delivery{}, false, fmt.Errorf("begin callback of job %s: %w", jobID, err)
	}
	return d, taken, nil
}

// Finish is Store.Finish over c.
func (c Change) Finish(ctx context.Context, jobID string, o Outcome, now time.Time) (Delivery, error) {
	if err := ValidateFinish(jobID, o, now); err != nil {
		return Delivery{}, fmt.Errorf("finish callback: %w", err)
	}
	d, _, err := c(ctx, jobID, func(cur Delivery, found bool) (Delivery, bool, error) {
		d, err := ApplyFinish(cur, found, jobID, o, now)
		return d, true, err
	})
	if err != nil {
		return Delivery{}, fmt.Errorf("finish callback of job %s: %w", jobID, err)
	}
	return d, nil
}
