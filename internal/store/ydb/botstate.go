package ydb

import (
	"context"
	"fmt"
	"time"

	"github.com/ydb-platform/ydb-go-sdk/v3/query"

	"transcriber/internal/botstate"
)

// BotState keeps the Telegram bot's chats and deliveries in the
// telegram_chats and telegram_deliveries tables. Every read-check-write is
// one DoTx, as a job claim is: the row is read, the port's rule applied
// (internal/botstate, rules.go), and the row written; a concurrent writer of the same
// row invalidates the transaction's locks and the SDK runs it again.
type BotState struct{ db *DB }

var _ botstate.Store = (*BotState)(nil)

// NewBotState returns the bot state store of db.
func NewBotState(db *DB) *BotState { return &BotState{db: db} }

// Chat returns a chat's settings; a chat never seen has the zero settings.
func (s *BotState) Chat(ctx context.Context, id int64) (botstate.Chat, error) {
	var c botstate.Chat
	err := s.db.read(ctx, func(ctx context.Context, tx query.TxActor) error {
		var err error
		c, err = s.getChat(ctx, tx, id)
		return err
	})
	if err != nil {
		return botstate.Chat{}, fmt.Errorf("get chat %d: %w", id, err)
	}
	return c, nil
}

// getChat reads a chat inside tx: Chat{ID: id} when it has no row.
func (s *BotState) getChat(ctx context.Context, tx query.TxActor, id int64) (botstate.Chat, error) {
	c, found, err := readOne(ctx, s.db, tx, selectChat, chatIDParams(id), scanChat)
	if !found {
		c = botstate.Chat{ID: id}
	}
	return c, err
}

// UpdateChat applies change to a chat's settings and writes them, in one
// transaction. When the transaction is run again (its locks invalidated by
// a concurrent update of the chat), change runs again on the settings read
// anew: it must depend on nothing but its argument.
func (s *BotState) UpdateChat(ctx context.Context, id int64, now time.Time, change func(*botstate.Chat)) (botstate.Chat, error) {
	if err := botstate.ValidateChatUpdate(now); err != nil {
		return botstate.Chat{}, fmt.Errorf("update chat %d: %w", id, err)
	}
	var c botstate.Chat
	err := s.db.update(ctx, func(ctx context.Context, tx query.TxActor) error {
		c = botstate.Chat{}
		cur, err := s.getChat(ctx, tx, id)
		if err != nil {
			return err
		}
		next, err := botstate.ApplyChatUpdate(cur, now, change)
		if err != nil {
			return err
		}
		if err := s.db.exec(ctx, tx, upsertChat, chatParams(next)); err != nil {
			return err
		}
		c = next
		return nil
	})
	if err != nil {
		return botstate.Chat{}, fmt.Errorf("update chat %d: %w", id, err)
	}
	return c, nil
}

// getDelivery reads one delivery inside tx; found is false when there is
// none.
func (s *BotState) getDelivery(ctx context.Context, tx query.TxActor, k botstate.Key) (d botstate.Delivery, found bool, err error) {
	return readOne(ctx, s.db, tx, selectDelivery, deliveryKeyParams(k), scanDelivery)
}

// readOne reads the row stmt selects by its key inside tx, with scan;
// found is false when there is none.
func readOne[T any](ctx context.Context, db *DB, tx query.TxActor, stmt string, p params, scan func(query.Row) (T, error)) (v T, found bool, err error) {
	err = db.rows(ctx, tx, stmt, p, func(row query.Row) error {
		var err error
		v, err = scan(row)
		found = true
		return err
	})
	return v, found, err
}

// insert records a delivery read as absent in the same transaction. An
// INSERT that finds the key taken (a concurrent Begin or Schedule committed
// it since the read) is retried: run again, the transaction finds it.
func (s *BotState) insert(ctx context.Context, tx query.TxActor, d botstate.Delivery) error {
	return retryKeyConflict(s.db.exec(ctx, tx, insertDeliveries, deliveriesParams(d)))
}

// change is botstate.Change over one transaction: the delivery is read,
// apply decides, and what it decides is inserted (insert) or upserted. Of
// two callers that both read the delivery as free, the first to commit
// wins; the other's locks are invalidated, and run again, apply sees the
// delivery as the first wrote it. A run after this call's own commit (its
// answer lost) finds what that commit wrote (botstate.Same) and answers
// it, written.
func (s *BotState) change(ctx context.Context, k botstate.Key,
	apply func(cur botstate.Delivery, found bool) (botstate.Delivery, bool, error),
) (d botstate.Delivery, wrote bool, err error) {
	var mine *botstate.Delivery // what an earlier run wrote
	err = s.db.update(ctx, func(ctx context.Context, tx query.TxActor) error {
		d, wrote = botstate.Delivery{}, false
		cur, found, err := s.getDelivery(ctx, tx, k)
		if err != nil {
			return err
		}
		if found && mine != nil && earlierCommit(ctx) && botstate.Same(cur, *mine) {
			d, wrote = cur, true
			return nil
		}
		next, write, err := apply(cur, found)
		switch {
		case err != nil:
			return err
		case write && found:
			err = s.db.exec(ctx, tx, upsertDeliveries, deliveriesParams(next))
		case write:
			err = s.insert(ctx, tx, next)
		}
		if err != nil {
			return err
		}
		d, wrote = next, write
		if write {
			mine = &next
		}
		return nil
	})
	return d, wrote, err
}

// Begin takes a delivery for sending, creating it when not yet recorded,
// in one transaction.
func (s *BotState) Begin(ctx context.Context, k botstate.Key, jobID string, now time.Time, lease time.Duration) (botstate.Delivery, bool, error) {
	return botstate.Change(s.change).Begin(ctx, k, jobID, now, lease)
}

// Schedule records a pending delivery for later unless it is recorded, in
// one transaction.
func (s *BotState) Schedule(ctx context.Context, k botstate.Key, jobID string, at, now time.Time) (botstate.Delivery, error) {
	return botstate.Change(s.change).Schedule(ctx, k, jobID, at, now)
}

// Finish records the outcome of a send, in one transaction.
func (s *BotState) Finish(ctx context.Context, k botstate.Key, o botstate.Outcome, now time.Time) (botstate.Delivery, error) {
	return botstate.Change(s.change).Finish(ctx, k, o, now)
}

// Get returns a delivery.
func (s *BotState) Get(ctx context.Context, k botstate.Key) (botstate.Delivery, error) {
	if err := botstate.ValidateKey(k); err != nil {
		return botstate.Delivery{}, fmt.Errorf("get delivery: %w", err)
	}
	var (
		d     botstate.Delivery
		found bool
	)
	err := s.db.read(ctx, func(ctx context.Context, tx query.TxActor) error {
		var err error
		d, found, err = s.getDelivery(ctx, tx, k)
		return err
	})
	if err == nil && !found {
		err = botstate.ErrNotFound
	}
	if err != nil {
		return botstate.Delivery{}, fmt.Errorf("get delivery %d/%d/%s: %w", k.ChatID, k.MessageID, k.Part, err)
	}
	return d, nil
}

// ClaimDue takes up to limit due deliveries: the selection through
// telegram_deliveries_due, the take of each, and the writes, in one
// transaction. Two sweepers that select the same deliveries both write
// them; the first commit wins, the other's locks are invalidated and the
// SDK runs it again, when those deliveries are held.
func (s *BotState) ClaimDue(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]botstate.Delivery, error) {
	if err := botstate.ValidateClaim(now, lease, limit); err != nil {
		return nil, fmt.Errorf("claim due deliveries: %w", err)
	}
	now = truncMs(now)
	claimed, err := claimDue(ctx, s.db, limit, selectDueDeliveries, func(n int) params { return dueDeliveriesParams(now, n) }, scanDelivery,
		func(cur botstate.Delivery) (botstate.Delivery, error) { return botstate.ApplyClaim(cur, now, lease) }, upsertDeliveries, deliveriesParams,
		func(ctx context.Context, tx query.TxActor, d botstate.Delivery) (botstate.Delivery, bool, error) {
			return s.getDelivery(ctx, tx, d.Key)
		}, botstate.Same)
	if err != nil {
		return nil, fmt.Errorf("claim due deliveries: %w", err)
	}
	return claimed, nil
}

// ForgetChat removes a chat's settings and deliveries, in one transaction.
func (s *BotState) ForgetChat(ctx context.Context, chatID int64) error {
	err := s.db.update(ctx, func(ctx context.Context, tx query.TxActor) error {
		if err := s.db.exec(ctx, tx, deleteChatDeliveries, chatIDParams(chatID)); err != nil {
			return err
		}
		return s.db.exec(ctx, tx, deleteChat, chatIDParams(chatID))
	})
	if err != nil {
		return fmt.Errorf("forget chat %d: %w", chatID, err)
	}
	return nil
}
