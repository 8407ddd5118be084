package ydb

import (
	"context"
	"fmt"
	"time"

	"github.com/ydb-platform/ydb-go-sdk/v3/query"

	"transcriber/internal/botstate"
	"transcriber/internal/outbox"
)

// BotState keeps the bot's chats in telegram_chats. An update is one DoTx
// that a concurrent writer of the row makes the SDK run again.
type BotState struct{ db *DB }

var _ botstate.Store = (*BotState)(nil)

func NewBotState(db *DB) *BotState { return &BotState{db: db} }

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

func (s *BotState) getChat(ctx context.Context, tx query.TxActor, id int64) (botstate.Chat, error) {
	c, found, err := readOne(ctx, s.db, tx, selectChat, chatIDParams(id), scanChat)
	if !found {
		c = botstate.Chat{ID: id}
	}
	return c, err
}

func (s *BotState) UpdateChat(ctx context.Context, id int64, now time.Time, change func(*botstate.Chat)) (botstate.Chat, error) {
	if err := botstate.ValidateChatUpdate(now); err != nil {
		return botstate.Chat{}, fmt.Errorf("update chat %d: %w", id, err)
	}
	var c botstate.Chat
	err := s.db.update(ctx, func(ctx context.Context, tx query.TxActor) error {
		cur, err := s.getChat(ctx, tx, id)
		if err == nil {
			c, err = botstate.ApplyChatUpdate(cur, now, change)
		}
		if err == nil {
			err = s.db.exec(ctx, tx, upsertChat, chatParams(c))
		}
		return err
	})
	if err != nil {
		return botstate.Chat{}, fmt.Errorf("update chat %d: %w", id, err)
	}
	return c, nil
}

// readOne reads the row stmt selects by its key; found is false for none.
func readOne[T any](ctx context.Context, db *DB, tx query.TxActor, stmt string, p params, scan func(query.Row) (T, error)) (v T, found bool, err error) {
	err = db.rows(ctx, tx, stmt, p, func(row query.Row) error {
		var err error
		v, err = scan(row)
		found = true
		return err
	})
	return v, found, err
}

// ForgetChat deletes the chat's outbox keys from its prefix up to the
// prefix with "/" made "0", the next byte.
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
