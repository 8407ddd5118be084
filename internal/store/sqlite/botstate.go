package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"transcriber/internal/botstate"
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
const chatColumns = `chat_id, language, format, auto, ui_lang, blocked_at, updated_at, mode, features`

const (
	selectChat = `SELECT ` + chatColumns + ` FROM telegram_chats WHERE chat_id = ?`
	upsertChat = `INSERT INTO telegram_chats (` + chatColumns + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (chat_id) DO UPDATE SET (` + chatColumns + `) =
		(excluded.chat_id, excluded.language, excluded.format, excluded.auto, excluded.ui_lang, excluded.blocked_at, excluded.updated_at,
		excluded.mode, excluded.features)`
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
	if err := r.Scan(&c.ID, &c.Language, &c.Format, &auto, &c.UILang, &blocked, &updated, &c.Mode, &c.Features); err != nil {
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
	return []any{c.ID, c.Language, c.Format, string(c.Auto), c.UILang, nullTime(c.BlockedAt), formatTime(c.UpdatedAt), c.Mode, c.Features}
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
	if err := botstate.ValidateChatUpdate(now); err != nil {
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
		if c, err = botstate.ApplyChatUpdate(cur, now, change); err != nil {
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

// change is botstate.Change over one write transaction: the delivery is
// read, apply decides, and what it decides is inserted or updated.
func (s *BotState) change(ctx context.Context, k botstate.Key,
	apply func(cur botstate.Delivery, found bool) (botstate.Delivery, bool, error),
) (d botstate.Delivery, wrote bool, err error) {
	var mine *botstate.Delivery // what an earlier run wrote, committed (DB.lose)
	err = s.db.tx(ctx, func(tx *sql.Tx) error {
		cur, found, err := getDelivery(ctx, tx, k)
		if err != nil {
			return err
		}
		if found && mine != nil && botstate.Same(cur, *mine) {
			d, wrote = cur, true
			return nil
		}
		if d, wrote, err = apply(cur, found); err != nil || !wrote {
			return err
		}
		w := d
		mine = &w
		if found {
			_, err = tx.ExecContext(ctx, updateDelivery, append(deliveryValues(d), keyArgs(k)...)...)
		} else {
			_, err = tx.ExecContext(ctx, insertDelivery, deliveryValues(d)...)
		}
		return translate(err)
	})
	return d, wrote, err
}

// Begin takes a delivery for sending, creating it when not yet recorded,
// in one write transaction.
func (s *BotState) Begin(ctx context.Context, k botstate.Key, jobID string, now time.Time, lease time.Duration) (botstate.Delivery, bool, error) {
	return botstate.Change(s.change).Begin(ctx, k, jobID, now, lease)
}

// Schedule records a pending delivery for later unless it is recorded, in
// one write transaction.
func (s *BotState) Schedule(ctx context.Context, k botstate.Key, jobID string, at, now time.Time) (botstate.Delivery, error) {
	return botstate.Change(s.change).Schedule(ctx, k, jobID, at, now)
}

// Finish records the outcome of a send, in one write transaction.
func (s *BotState) Finish(ctx context.Context, k botstate.Key, o botstate.Outcome, now time.Time) (botstate.Delivery, error) {
	return botstate.Change(s.change).Finish(ctx, k, o, now)
}

// Get returns a delivery.
func (s *BotState) Get(ctx context.Context, k botstate.Key) (botstate.Delivery, error) {
	if err := botstate.ValidateKey(k); err != nil {
		return botstate.Delivery{}, fmt.Errorf("get delivery: %w", err)
	}
	d, found, err := getDelivery(ctx, s.db.sql, k)
	if err == nil && !found {
		err = botstate.ErrNotFound
	}
	if err != nil {
		return botstate.Delivery{}, fmt.Errorf("get delivery %d/%d/%s: %w", k.ChatID, k.MessageID, k.Part, err)
	}
	return d, nil
}

// ClaimDue takes up to limit due deliveries: the selection through
// telegram_deliveries_due and the writes, in one write transaction, so no
// other caller selects them meanwhile.
func (s *BotState) ClaimDue(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]botstate.Delivery, error) {
	if err := botstate.ValidateClaim(now, lease, limit); err != nil {
		return nil, fmt.Errorf("claim due deliveries: %w", err)
	}
	at := formatTime(now)
	claimed, err := claimDue(ctx, s.db, limit, selectDueDeliveries, []any{string(botstate.Pending), at, at, limit}, scanDelivery,
		func(cur botstate.Delivery) (botstate.Delivery, error) { return botstate.ApplyClaim(cur, now, lease) },
		func(tx *sql.Tx, d botstate.Delivery) error {
			_, err := tx.ExecContext(ctx, updateDelivery, append(deliveryValues(d), keyArgs(d.Key)...)...)
			return err
		},
		func(tx *sql.Tx, d botstate.Delivery) (botstate.Delivery, bool, error) {
			return getDelivery(ctx, tx, d.Key)
		},
		botstate.Same)
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
