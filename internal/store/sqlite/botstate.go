package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"transcriber/internal/telegram/botstate"
)

// BotState keeps the Telegram bot's chats and deliveries in the
// telegram_chats and telegram_deliveries tables. Every read-check-write is
// one write transaction (DB.tx), as a job claim is.
type BotState struct{ db *DB }

var _ botstate.Store = (*BotState)(nil)

// NewBotState returns the bot state store of db.
func NewBotState(db *DB) *BotState { return &BotState{db: db} }

// chatColumns is the one list of the telegram_chats table's columns:
// scanChat reads them and upsertChat writes them in this order.
const chatColumns = `chat_id, language, format, auto, ui_lang, blocked_at, updated_at`

const (
	selectChat = `SELECT ` + chatColumns + ` FROM telegram_chats WHERE chat_id = ?`
	upsertChat = `INSERT INTO telegram_chats (` + chatColumns + `) VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (chat_id) DO UPDATE SET (` + chatColumns + `) =
		(excluded.chat_id, excluded.language, excluded.format, excluded.auto, excluded.ui_lang, excluded.blocked_at, excluded.updated_at)`
)

// deliveryColumns is the one list of the telegram_deliveries table's
// columns: scanDelivery reads them and deliveryValues writes them in this
// order.
const deliveryColumns = `chat_id, message_id, part, job_id, state, sent_id, attempts, next_at, lease_until, updated_at`

const (
	selectDelivery = `SELECT ` + deliveryColumns + ` FROM telegram_deliveries`
	whereDelivery  = ` WHERE chat_id = ? AND message_id = ? AND part = ?`
	insertDelivery = `INSERT INTO telegram_deliveries (` + deliveryColumns + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	updateDelivery = `UPDATE telegram_deliveries SET (` + deliveryColumns + `) = (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)` + whereDelivery
	// selectDueDeliveries is ClaimDue's selection, a range of the
	// telegram_deliveries_due index in its order.
	selectDueDeliveries = selectDelivery + ` WHERE state = ? AND next_at <= ? AND lease_until <= ?
		ORDER BY next_at, chat_id, message_id, part LIMIT ?`
)

func scanChat(r scanner) (botstate.Chat, error) {
	var (
		c       botstate.Chat
		auto    string
		blocked sql.NullString
		updated string
	)
	if err := r.Scan(&c.ID, &c.Language, &c.Format, &auto, &c.UILang, &blocked, &updated); err != nil {
		return botstate.Chat{}, err
	}
	c.Auto = botstate.Auto(auto)
	var errT [2]error
	c.BlockedAt, errT[0] = parseNullTime(blocked)
	c.UpdatedAt, errT[1] = parseTime(updated)
	if err := errors.Join(errT[:]...); err != nil {
		return botstate.Chat{}, fmt.Errorf("chat %d: %w", c.ID, err)
	}
	return c, nil
}

func chatValues(c botstate.Chat) []any {
	return []any{c.ID, c.Language, c.Format, string(c.Auto), c.UILang, nullTime(c.BlockedAt), formatTime(c.UpdatedAt)}
}

func scanDelivery(r scanner) (botstate.Delivery, error) {
	var (
		d                    botstate.Delivery
		state                string
		next, lease, updated string
	)
	err := r.Scan(&d.ChatID, &d.MessageID, &d.Part, &d.JobID, &state, &d.SentID, &d.Attempts, &next, &lease, &updated)
	if err != nil {
		return botstate.Delivery{}, err
	}
	d.State = botstate.DeliveryState(state)
	var errT [3]error
	d.NextAt, errT[0] = parseTime(next)
	d.LeaseUntil, errT[1] = parseTime(lease)
	d.UpdatedAt, errT[2] = parseTime(updated)
	if err := errors.Join(errT[:]...); err != nil {
		return botstate.Delivery{}, fmt.Errorf("delivery %d/%d/%s: %w", d.ChatID, d.MessageID, d.Part, err)
	}
	return d, nil
}

func deliveryValues(d botstate.Delivery) []any {
	return []any{d.ChatID, d.MessageID, d.Part, d.JobID, string(d.State), d.SentID, d.Attempts,
		formatTime(d.NextAt), formatTime(d.LeaseUntil), formatTime(d.UpdatedAt)}
}

func keyArgs(k botstate.Key) []any { return []any{k.ChatID, k.MessageID, k.Part} }

// Chat returns a chat's settings; a chat never seen has the zero settings.
func (s *BotState) Chat(ctx context.Context, id int64) (botstate.Chat, error) {
	c, err := scanChat(s.db.sql.QueryRowContext(ctx, selectChat, id))
	if errors.Is(err, sql.ErrNoRows) {
		return botstate.Chat{ID: id}, nil
	}
	if err != nil {
		return botstate.Chat{}, fmt.Errorf("get chat %d: %w", id, translate(err))
	}
	return c, nil
}

// UpdateChat applies change to a chat's settings and writes them, in one
// write transaction.
func (s *BotState) UpdateChat(ctx context.Context, id int64, now time.Time, change func(*botstate.Chat)) (botstate.Chat, error) {
	if err := checkNow(now); err != nil {
		return botstate.Chat{}, fmt.Errorf("update chat %d: %w", id, err)
	}
	var c botstate.Chat
	err := s.db.tx(ctx, func(tx *sql.Tx) error {
		cur, err := scanChat(tx.QueryRowContext(ctx, selectChat, id))
		if errors.Is(err, sql.ErrNoRows) {
			cur, err = botstate.Chat{ID: id}, nil
		}
		if err != nil {
			return translate(err)
		}
		if c, err = changeChat(cur, now, change); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, upsertChat, chatValues(c)...)
		return translate(err)
	})
	if err != nil {
		return botstate.Chat{}, fmt.Errorf("update chat %d: %w", id, err)
	}
	return c, nil
}

// getDelivery reads one delivery; ok is false when there is none.
func getDelivery(ctx context.Context, q queryer, k botstate.Key) (d botstate.Delivery, ok bool, err error) {
	d, err = scanDelivery(q.QueryRowContext(ctx, selectDelivery+whereDelivery, keyArgs(k)...))
	if errors.Is(err, sql.ErrNoRows) {
		return botstate.Delivery{}, false, nil
	}
	if err != nil {
		return botstate.Delivery{}, false, translate(err)
	}
	return d, true, nil
}

// Begin takes a delivery for sending, creating it when not yet recorded,
// in one write transaction.
func (s *BotState) Begin(ctx context.Context, k botstate.Key, jobID string, now time.Time, lease time.Duration) (botstate.Delivery, bool, error) {
	if err := firstErr(checkKey(k), checkNow(now), checkLease(lease)); err != nil {
		return botstate.Delivery{}, false, fmt.Errorf("begin delivery: %w", err)
	}
	var (
		d     botstate.Delivery
		taken bool
	)
	err := s.db.tx(ctx, func(tx *sql.Tx) error {
		cur, found, err := getDelivery(ctx, tx, k)
		if err != nil {
			return err
		}
		if !found {
			d, taken = newDelivery(k, jobID, now, lease), true
			_, err := tx.ExecContext(ctx, insertDelivery, deliveryValues(d)...)
			return translate(err)
		}
		if d, taken = beginDelivery(cur, now, lease); !taken {
			return nil
		}
		_, err = tx.ExecContext(ctx, updateDelivery, append(deliveryValues(d), keyArgs(k)...)...)
		return translate(err)
	})
	if err != nil {
		return botstate.Delivery{}, false, fmt.Errorf("begin delivery %s: %w", keyText(k), err)
	}
	return d, taken, nil
}

// Schedule records a pending delivery for later unless it is recorded, in
// one write transaction.
func (s *BotState) Schedule(ctx context.Context, k botstate.Key, jobID string, at, now time.Time) (botstate.Delivery, error) {
	if err := firstErr(checkKey(k), checkNow(now), checkAt(at)); err != nil {
		return botstate.Delivery{}, fmt.Errorf("schedule delivery: %w", err)
	}
	var d botstate.Delivery
	err := s.db.tx(ctx, func(tx *sql.Tx) error {
		cur, found, err := getDelivery(ctx, tx, k)
		if err != nil || found {
			d = cur
			return err
		}
		d = scheduledDelivery(k, jobID, at, now)
		_, err = tx.ExecContext(ctx, insertDelivery, deliveryValues(d)...)
		return translate(err)
	})
	if err != nil {
		return botstate.Delivery{}, fmt.Errorf("schedule delivery %s: %w", keyText(k), err)
	}
	return d, nil
}

// Finish records the outcome of a send, in one write transaction.
func (s *BotState) Finish(ctx context.Context, k botstate.Key, o botstate.Outcome, now time.Time) (botstate.Delivery, error) {
	if err := firstErr(checkKey(k), checkNow(now), checkOutcome(o)); err != nil {
		return botstate.Delivery{}, fmt.Errorf("finish delivery: %w", err)
	}
	var d botstate.Delivery
	err := s.db.tx(ctx, func(tx *sql.Tx) error {
		cur, found, err := getDelivery(ctx, tx, k)
		if err != nil {
			return err
		}
		if !found {
			return botstate.ErrNotFound
		}
		d = finishDelivery(cur, o, now)
		_, err = tx.ExecContext(ctx, updateDelivery, append(deliveryValues(d), keyArgs(k)...)...)
		return translate(err)
	})
	if err != nil {
		return botstate.Delivery{}, fmt.Errorf("finish delivery %s: %w", keyText(k), err)
	}
	return d, nil
}

// Get returns a delivery.
func (s *BotState) Get(ctx context.Context, k botstate.Key) (botstate.Delivery, error) {
	if err := checkKey(k); err != nil {
		return botstate.Delivery{}, fmt.Errorf("get delivery: %w", err)
	}
	d, found, err := getDelivery(ctx, s.db.sql, k)
	if err == nil && !found {
		err = botstate.ErrNotFound
	}
	if err != nil {
		return botstate.Delivery{}, fmt.Errorf("get delivery %s: %w", keyText(k), err)
	}
	return d, nil
}

// ClaimDue takes up to limit due deliveries: the selection through
// telegram_deliveries_due and the writes, in one write transaction, so no
// other caller selects them meanwhile.
func (s *BotState) ClaimDue(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]botstate.Delivery, error) {
	if err := firstErr(checkNow(now), checkLease(lease), checkLimit(limit)); err != nil {
		return nil, fmt.Errorf("claim due deliveries: %w", err)
	}
	claimed := make([]botstate.Delivery, 0, limit)
	err := s.db.tx(ctx, func(tx *sql.Tx) error {
		at := formatTime(now)
		rows, err := tx.QueryContext(ctx, selectDueDeliveries, string(botstate.Pending), at, at, limit)
		if err != nil {
			return translate(err)
		}
		var due []botstate.Delivery
		for rows.Next() {
			d, err := scanDelivery(rows)
			if err != nil {
				_ = rows.Close()
				return translate(err)
			}
			due = append(due, d)
		}
		if err := rows.Close(); err != nil {
			return translate(err)
		}
		if err := rows.Err(); err != nil {
			return translate(err)
		}
		for _, cur := range due {
			d, taken := beginDelivery(cur, now, lease)
			if !taken {
				return fmt.Errorf("due delivery %s is not takeable", keyText(cur.Key)) // the query and the rule disagree: a bug
			}
			if _, err := tx.ExecContext(ctx, updateDelivery, append(deliveryValues(d), keyArgs(d.Key)...)...); err != nil {
				return translate(err)
			}
			claimed = append(claimed, d)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("claim due deliveries: %w", err)
	}
	return claimed, nil
}

// ForgetChat removes a chat's settings and deliveries, in one write
// transaction.
func (s *BotState) ForgetChat(ctx context.Context, chatID int64) error {
	err := s.db.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM telegram_deliveries WHERE chat_id = ?`, chatID); err != nil {
			return translate(err)
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM telegram_chats WHERE chat_id = ?`, chatID)
		return translate(err)
	})
	if err != nil {
		return fmt.Errorf("forget chat %d: %w", chatID, err)
	}
	return nil
}

// The rules of the port, applied to a delivery or chat read inside a write
// transaction. The cloud store has the same (internal/store/ydb,
// botstate_rules.go); the contract suite holds both to them. Times are kept
// as the store keeps them: UTC, milliseconds.

// ms is t as this store keeps it.
func ms(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.UTC().Truncate(time.Millisecond)
}

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
	c.BlockedAt, c.UpdatedAt = ms(c.BlockedAt), ms(now)
	return c, nil
}

// newDelivery is the delivery Begin creates: pending, taken once.
func newDelivery(k botstate.Key, jobID string, now time.Time, lease time.Duration) botstate.Delivery {
	until := ms(now.Add(lease))
	return botstate.Delivery{Key: k, JobID: jobID, State: botstate.Pending, Attempts: 1,
		NextAt: until, LeaseUntil: until, UpdatedAt: ms(now)}
}

// scheduledDelivery is the delivery Schedule creates: pending, due at at,
// not taken.
func scheduledDelivery(k botstate.Key, jobID string, at, now time.Time) botstate.Delivery {
	now = ms(now)
	return botstate.Delivery{Key: k, JobID: jobID, State: botstate.Pending, NextAt: ms(at), LeaseUntil: now, UpdatedAt: now}
}

// beginDelivery takes cur at now if it is pending and its lease has run
// out (Begin's takeover, and ClaimDue's take); taken is false otherwise,
// with cur unchanged.
func beginDelivery(cur botstate.Delivery, now time.Time, lease time.Duration) (botstate.Delivery, bool) {
	now = ms(now)
	if cur.State != botstate.Pending || cur.LeaseUntil.After(now) {
		return cur, false
	}
	d := cur
	d.Attempts++
	d.LeaseUntil = ms(now.Add(lease))
	d.UpdatedAt = now
	return d, true
}

// finishDelivery records o on cur at now. A final delivery keeps its state;
// a Sent outcome with a SentID still records it (an edit that posted anew).
func finishDelivery(cur botstate.Delivery, o botstate.Outcome, now time.Time) botstate.Delivery {
	now = ms(now)
	d := cur
	switch {
	case d.State == botstate.Pending:
		d.State = o.State
		if o.SentID != 0 {
			d.SentID = o.SentID
		}
		if o.State == botstate.Pending {
			d.NextAt = ms(o.NextAt)
		}
	case o.State == botstate.Sent && o.SentID != 0:
		d.SentID = o.SentID
	}
	d.LeaseUntil, d.UpdatedAt = now, now
	return d
}
