package botstate

import (
	"context"
	"fmt"
	"time"
)

// The rules of Store, as pure functions, the way the job package has them
// (job.ApplyClaim and the rest): a store reads the row inside its
// transaction, calls the rule with it and the call's arguments, and writes
// what the rule returns in the same transaction. So every store decides
// alike, and the contract suite (botstatetest) checks the reads and writes
// around the rules. Begin, Schedule and Finish go through Change, as a
// job's writes go through job.Change: a store supplies only its
// transaction.
//
// Each Apply function checks its arguments itself. A store checks them
// before it opens a transaction as well (Change's methods, ValidateKey,
// ValidateClaim, ValidateChatUpdate), so a malformed request never reaches
// its database.
//
// Every time a rule writes is in UTC and whole milliseconds, the precision
// the stores keep, so what a store returns equals what it reads back.

// keyText is k in an error message.
func keyText(k Key) string { return fmt.Sprintf("%d/%d/%s", k.ChatID, k.MessageID, k.Part) }

// stored is t as the stores keep it: UTC, whole milliseconds; the zero
// time stays zero.
func stored(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.UTC().Truncate(time.Millisecond)
}

// ValidateKey is the rule of every key a Store method takes: a chat and a
// message id, both non-zero, and a part of 1..MaxPartLen bytes. Errors:
// ErrInvalid.
func ValidateKey(k Key) error {
	switch {
	case k.ChatID == 0:
		return fmt.Errorf("%w: no chat id", ErrInvalid)
	case k.MessageID == 0:
		return fmt.Errorf("%w: no message id", ErrInvalid)
	case k.Part == "":
		return fmt.Errorf("%w: no part", ErrInvalid)
	case len(k.Part) > MaxPartLen:
		return fmt.Errorf("%w: part longer than %d bytes", ErrInvalid, MaxPartLen)
	}
	return nil
}

// firstErr is the first of errs that is not nil: a refused call names one
// reason.
func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func validateNow(now time.Time) error {
	if now.IsZero() {
		return fmt.Errorf("%w: no time given", ErrInvalid)
	}
	return nil
}

func validateAt(at time.Time) error {
	if at.IsZero() {
		return fmt.Errorf("%w: no due time given", ErrInvalid)
	}
	return nil
}

func validateLease(lease time.Duration) error {
	if lease <= 0 {
		return fmt.Errorf("%w: lease %s is not positive", ErrInvalid, lease)
	}
	return nil
}

func validateOutcome(o Outcome) error {
	switch o.State {
	case Sent, Abandoned:
		return nil
	case Pending:
		if o.NextAt.IsZero() {
			return fmt.Errorf("%w: pending without NextAt", ErrInvalid)
		}
		return nil
	}
	return fmt.Errorf("%w: unknown state %q", ErrInvalid, o.State)
}

func validateLimit(limit int) error {
	if limit < 1 || limit > MaxClaimLimit {
		return fmt.Errorf("%w: limit %d is out of 1..%d", ErrInvalid, limit, MaxClaimLimit)
	}
	return nil
}

// ValidateChatUpdate is the argument rule of Store.UpdateChat: a time is
// given. Errors: ErrInvalid.
func ValidateChatUpdate(now time.Time) error { return validateNow(now) }

// validateBegin is the argument rule of Store.Begin: a well-formed key
// (ValidateKey), a time and a positive lease. Like each argument rule
// here, it names the first argument it refuses.
func validateBegin(k Key, now time.Time, lease time.Duration) error {
	return firstErr(ValidateKey(k), validateNow(now), validateLease(lease))
}

// validateSchedule is the argument rule of Store.Schedule: a well-formed
// key, a time and a due time.
func validateSchedule(k Key, at, now time.Time) error {
	return firstErr(ValidateKey(k), validateNow(now), validateAt(at))
}

// validateFinish is the argument rule of Store.Finish: a well-formed key,
// a time, and an outcome of a known state, with NextAt when it is Pending.
func validateFinish(k Key, o Outcome, now time.Time) error {
	return firstErr(ValidateKey(k), validateNow(now), validateOutcome(o))
}

// ValidateClaim is the argument rule of Store.ClaimDue: a time, a
// positive lease and a limit in 1..MaxClaimLimit. Errors: ErrInvalid.
func ValidateClaim(now time.Time, lease time.Duration, limit int) error {
	return firstErr(validateNow(now), validateLease(lease), validateLimit(limit))
}

// ApplyChatUpdate is the rule of Store.UpdateChat: cur is the chat as
// stored (Chat{ID: id} when it has no row). It returns what to write: cur
// after change, with UpdatedAt = now. Errors: ErrInvalid, for a zero now
// (change is not called) or a change that altered the chat id.
func ApplyChatUpdate(cur Chat, now time.Time, change func(*Chat)) (Chat, error) {
	if err := ValidateChatUpdate(now); err != nil {
		return Chat{}, err
	}
	c := cur
	change(&c)
	if c.ID != cur.ID {
		return Chat{}, fmt.Errorf("%w: the change altered the chat id %d to %d", ErrInvalid, cur.ID, c.ID)
	}
	c.BlockedAt, c.UpdatedAt = stored(c.BlockedAt), stored(now)
	return c, nil
}

// takeable reports whether a sender may take d at now: it is pending and
// no unexpired lease holds it.
func takeable(d Delivery, now time.Time) bool {
	return d.State == Pending && !d.LeaseUntil.After(now)
}

// take is d taken at now for lease: one attempt more, a new lease, NextAt
// kept.
func take(d Delivery, now time.Time, lease time.Duration) Delivery {
	d.Attempts++
	d.LeaseUntil = stored(now.Add(lease))
	d.UpdatedAt = stored(now)
	return d
}

// ApplyBegin is the rule of Store.Begin: cur is the delivery stored under
// k, found false when there is none. A delivery not recorded is created
// pending for jobID and taken (Attempts 1, NextAt = LeaseUntil = now +
// lease); a takeable one (pending, its lease run out) is taken over. taken
// says whether to write d: it is false, with cur as stored, when cur is
// sent, abandoned or held. Errors: ErrInvalid, for the arguments Begin
// refuses (a malformed key, a zero now, a lease not positive).
func ApplyBegin(cur Delivery, found bool, k Key, jobID string, now time.Time, lease time.Duration) (d Delivery, taken bool, err error) {
	if err := validateBegin(k, now, lease); err != nil {
		return Delivery{}, false, err
	}
	switch {
	case !found:
		until := stored(now.Add(lease))
		return Delivery{Key: k, JobID: jobID, State: Pending, Attempts: 1,
			NextAt: until, LeaseUntil: until, UpdatedAt: stored(now)}, true, nil
	case takeable(cur, now):
		return take(cur, now, lease), true, nil
	}
	return cur, false, nil
}

// ApplySchedule is the rule of Store.Schedule: cur is the delivery stored
// under k, found false when there is none. A delivery not recorded is
// created pending for jobID, due at at and not taken (Attempts 0, no
// lease: LeaseUntil = now); created says whether to write d. A recorded
// one is returned as stored. Errors: ErrInvalid, for the arguments
// Schedule refuses (a malformed key, a zero now or at), whether or not the
// delivery is recorded.
func ApplySchedule(cur Delivery, found bool, k Key, jobID string, at, now time.Time) (d Delivery, created bool, err error) {
	if err := validateSchedule(k, at, now); err != nil {
		return Delivery{}, false, err
	}
	if found {
		return cur, false, nil
	}
	now = stored(now)
	return Delivery{Key: k, JobID: jobID, State: Pending, NextAt: stored(at), LeaseUntil: now, UpdatedAt: now}, true, nil
}

// ApplyFinish is the rule of Store.Finish: cur is the delivery stored
// under k, found false when there is none. It returns what to write: cur
// with o recorded and the lease ended (LeaseUntil = now). A pending
// delivery takes o's state, its SentID when non-zero and, for Pending, its
// NextAt; a sent or abandoned one keeps its state, except that Sent with a
// SentID records it (an edit that posted anew). Errors: ErrInvalid, for
// the arguments Finish refuses (a malformed key, a zero now, an unknown
// state, Pending without NextAt), before ErrNotFound.
func ApplyFinish(cur Delivery, found bool, k Key, o Outcome, now time.Time) (Delivery, error) {
	if err := validateFinish(k, o, now); err != nil {
		return Delivery{}, err
	}
	if !found {
		return Delivery{}, ErrNotFound
	}
	d := cur
	switch {
	case d.State == Pending:
		d.State = o.State
		if o.SentID != 0 {
			d.SentID = o.SentID
		}
		if o.State == Pending {
			d.NextAt = stored(o.NextAt)
		}
	case o.State == Sent && o.SentID != 0:
		d.SentID = o.SentID
	}
	d.LeaseUntil, d.UpdatedAt = stored(now), stored(now)
	return d, nil
}

// Due reports whether ClaimDue may take d at now: it is pending, due
// (NextAt <= now) and not held (LeaseUntil <= now). A store's selection
// for ClaimDue is this condition, ordered by NextAt.
func Due(d Delivery, now time.Time) bool {
	return takeable(d, now) && !d.NextAt.After(now)
}

// ApplyClaim is the rule of ClaimDue's take of one delivery, cur, that
// the store selected as due at now: it returns what to write, cur taken as
// Begin takes it (Attempts one higher, LeaseUntil = now + lease, NextAt
// kept). Errors: ErrInvalid, for a zero now or a lease not positive; and
// an error of no kind when cur is not Due, which is a bug: the store's
// selection and the rule disagree.
func ApplyClaim(cur Delivery, now time.Time, lease time.Duration) (Delivery, error) {
	if err := firstErr(validateNow(now), validateLease(lease)); err != nil {
		return Delivery{}, err
	}
	if !Due(cur, now) {
		return Delivery{}, fmt.Errorf("delivery %s (%s, due at %s, held until %s) is not due at %s", keyText(cur.Key),
			cur.State, cur.NextAt.Format(time.RFC3339Nano), cur.LeaseUntil.Format(time.RFC3339Nano), now.Format(time.RFC3339Nano))
	}
	return take(cur, now, lease), nil
}

// Change is the one primitive a store supplies for the writes of a
// delivery: read the delivery k (found false when there is none), let
// apply decide what it becomes and whether to write it, and write that (an
// insert when it was not found, an update otherwise), all in one
// transaction that no concurrent writer of k interleaves with. It returns
// what apply returned; apply may run more than once when the store retries
// its transaction, and a run again after the store's own commit (its
// answer lost) returns, without apply, what that commit wrote, as written
// (Same). The store's Begin, Schedule and Finish are Change's
// methods, so each store writes the transaction once and the rules and
// error wording live here.
type Change func(ctx context.Context, k Key, apply func(cur Delivery, found bool) (d Delivery, write bool, err error)) (Delivery, bool, error)

// Same reports whether cur, a delivery as read back, is wrote, what a
// write made of it: every field, times at whole milliseconds. A store
// whose transaction runs again after a commit whose answer was lost uses
// it to find what that commit wrote: a Begin run again finds its own take
// (and sends), not a delivery held by someone. Only after such a commit:
// two takes at the same millisecond with the same lease are the same
// delivery, and a run again after a take that lost to another (its locks
// broken) must not take the other's for its own.
func Same(cur, wrote Delivery) bool {
	return cur.Key == wrote.Key && cur.JobID == wrote.JobID && cur.State == wrote.State &&
		cur.SentID == wrote.SentID && cur.Attempts == wrote.Attempts &&
		stored(cur.NextAt).Equal(stored(wrote.NextAt)) && stored(cur.LeaseUntil).Equal(stored(wrote.LeaseUntil)) &&
		stored(cur.UpdatedAt).Equal(stored(wrote.UpdatedAt))
}

// Begin is Store.Begin over c: ApplyBegin, after its argument rule.
func (c Change) Begin(ctx context.Context, k Key, jobID string, now time.Time, lease time.Duration) (Delivery, bool, error) {
	if err := validateBegin(k, now, lease); err != nil {
		return Delivery{}, false, fmt.Errorf("begin delivery: %w", err)
	}
	d, taken, err := c(ctx, k, func(cur Delivery, found bool) (Delivery, bool, error) {
		return ApplyBegin(cur, found, k, jobID, now, lease)
	})
	if err != nil {
		return Delivery{}, false, fmt.Errorf("begin delivery %s: %w", keyText(k), err)
	}
	return d, taken, nil
}

// Schedule is Store.Schedule over c: ApplySchedule, after its argument
// rule.
func (c Change) Schedule(ctx context.Context, k Key, jobID string, at, now time.Time) (Delivery, error) {
	if err := validateSchedule(k, at, now); err != nil {
		return Delivery{}, fmt.Errorf("schedule delivery: %w", err)
	}
	d, _, err := c(ctx, k, func(cur Delivery, found bool) (Delivery, bool, error) {
		return ApplySchedule(cur, found, k, jobID, at, now)
	})
	if err != nil {
		return Delivery{}, fmt.Errorf("schedule delivery %s: %w", keyText(k), err)
	}
	return d, nil
}

// Finish is Store.Finish over c: ApplyFinish, after its argument rule.
func (c Change) Finish(ctx context.Context, k Key, o Outcome, now time.Time) (Delivery, error) {
	if err := validateFinish(k, o, now); err != nil {
		return Delivery{}, fmt.Errorf("finish delivery: %w", err)
	}
	d, _, err := c(ctx, k, func(cur Delivery, found bool) (Delivery, bool, error) {
		d, err := ApplyFinish(cur, found, k, o, now)
		return d, true, err
	})
	if err != nil {
		return Delivery{}, fmt.Errorf("finish delivery %s: %w", keyText(k), err)
	}
	return d, nil
}
