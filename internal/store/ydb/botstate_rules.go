package ydb

import (
	"fmt"
	"time"

	"transcriber/internal/telegram/botstate"
)

// The rules of the port, applied to a delivery or chat read inside a
// transaction: the same as the embedded store's (internal/store/sqlite,
// botstate.go), which the contract suite holds both to. Times are kept as
// the store keeps them: UTC, milliseconds (truncMs).

func keyText(k botstate.Key) string { return fmt.Sprintf("%d/%d/%s", k.ChatID, k.MessageID, k.Part) }

// firstErr is the first of errs that is not nil.
func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func checkKey(k botstate.Key) error {
	switch {
	case k.ChatID == 0:
		return fmt.Errorf("%w: no chat id", botstate.ErrInvalid)
	case k.MessageID == 0:
		return fmt.Errorf("%w: no message id", botstate.ErrInvalid)
	case k.Part == "":
		return fmt.Errorf("%w: no part", botstate.ErrInvalid)
	case len(k.Part) > botstate.MaxPartLen:
		return fmt.Errorf("%w: part longer than %d bytes", botstate.ErrInvalid, botstate.MaxPartLen)
	}
	return nil
}

func checkNow(now time.Time) error {
	if now.IsZero() {
		return fmt.Errorf("%w: no time given", botstate.ErrInvalid)
	}
	return nil
}

func checkAt(at time.Time) error {
	if at.IsZero() {
		return fmt.Errorf("%w: no due time given", botstate.ErrInvalid)
	}
	return nil
}

func checkLease(lease time.Duration) error {
	if lease <= 0 {
		return fmt.Errorf("%w: lease %s is not positive", botstate.ErrInvalid, lease)
	}
	return nil
}

func checkLimit(limit int) error {
	if limit < 1 || limit > botstate.MaxClaimLimit {
		return fmt.Errorf("%w: limit %d is out of 1..%d", botstate.ErrInvalid, limit, botstate.MaxClaimLimit)
	}
	return nil
}

func checkOutcome(o botstate.Outcome) error {
	switch o.State {
	case botstate.Sent, botstate.Abandoned:
		return nil
	case botstate.Pending:
		if o.NextAt.IsZero() {
			return fmt.Errorf("%w: pending without NextAt", botstate.ErrInvalid)
		}
		return nil
	}
	return fmt.Errorf("%w: unknown state %q", botstate.ErrInvalid, o.State)
}

// changeChat is cur after change, stamped at now.
func changeChat(cur botstate.Chat, now time.Time, change func(*botstate.Chat)) (botstate.Chat, error) {
	c := cur
	change(&c)
	if c.ID != cur.ID {
		return botstate.Chat{}, fmt.Errorf("%w: the change altered the chat id", botstate.ErrInvalid)
	}
	c.BlockedAt, c.UpdatedAt = truncMs(c.BlockedAt), truncMs(now)
	return c, nil
}

// newDelivery is the delivery Begin creates: pending, taken once.
func newDelivery(k botstate.Key, jobID string, now time.Time, lease time.Duration) botstate.Delivery {
	until := truncMs(now.Add(lease))
	return botstate.Delivery{Key: k, JobID: jobID, State: botstate.Pending, Attempts: 1,
		NextAt: until, LeaseUntil: until, UpdatedAt: truncMs(now)}
}

// scheduledDelivery is the delivery Schedule creates: pending, due at at,
// not taken.
func scheduledDelivery(k botstate.Key, jobID string, at, now time.Time) botstate.Delivery {
	now = truncMs(now)
	return botstate.Delivery{Key: k, JobID: jobID, State: botstate.Pending, NextAt: truncMs(at), LeaseUntil: now, UpdatedAt: now}
}

// beginDelivery takes cur at now if it is pending and its lease has run
// out (Begin's takeover, and ClaimDue's take); taken is false otherwise,
// with cur unchanged.
func beginDelivery(cur botstate.Delivery, now time.Time, lease time.Duration) (botstate.Delivery, bool) {
	now = truncMs(now)
	if cur.State != botstate.Pending || cur.LeaseUntil.After(now) {
		return cur, false
	}
	d := cur
	d.Attempts++
	d.LeaseUntil = truncMs(now.Add(lease))
	d.UpdatedAt = now
	return d, true
}

// finishDelivery records o on cur at now. A final delivery keeps its state;
// a Sent outcome with a SentID still records it (an edit that posted anew).
func finishDelivery(cur botstate.Delivery, o botstate.Outcome, now time.Time) botstate.Delivery {
	now = truncMs(now)
	d := cur
	switch {
	case d.State == botstate.Pending:
		d.State = o.State
		if o.SentID != 0 {
			d.SentID = o.SentID
		}
		if o.State == botstate.Pending {
			d.NextAt = truncMs(o.NextAt)
		}
	case o.State == botstate.Sent && o.SentID != 0:
		d.SentID = o.SentID
	}
	d.LeaseUntil, d.UpdatedAt = now, now
	return d
}
