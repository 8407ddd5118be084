package ydb

import (
	"context"
	"fmt"
	"time"

	"github.com/ydb-platform/ydb-go-sdk/v3/query"

	"transcriber/internal/botstate"
	"transcriber/internal/outbox"
)

// BotState keeps the Telegram bot's chats in the telegram_chats table. An
// update is one DoTx: the row is read, botstate.ApplyChatUpdate applied,
// and the row written; a concurrent writer of the same row invalidates the
// transaction's locks and the SDK runs it again.
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

// ForgetChat removes a chat's settings and outbox entries, in one
// transaction: the entries are the key range from the chat's prefix to the
// prefix with its "/" made "0", the next byte.
func (s *BotState) ForgetChat(ctx context.Context, chatID int64) error {
	p := botstate.ChatPrefix(chatID)
	err := s.db.update(ctx, func(ctx context.Context, tx query.TxActor) error {
		if err := s.db.exec(ctx, tx, deleteKeyRange, keyRangeParams(outbox.Telegram, p, p[:len(p)-1]+"0")); err != nil {
			return err
		}
		return s.db.exec(ctx, tx, deleteChat, chatIDParams(chatID))
	})
	if err != nil {
		return fmt.Errorf("forget chat %d: %w", chatID, err)
	}
	return nil
}
