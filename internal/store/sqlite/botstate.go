package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"transcriber/internal/botstate"
	"transcriber/internal/outbox"
)

// BotState keeps the bot's chats in telegram_chats; every
// read-check-write is one write transaction (DB.tx).
type BotState struct{ db *DB }

var _ botstate.Store = (*BotState)(nil)

func NewBotState(db *DB) *BotState { return &BotState{db: db} }

// chatColumns in the order scanChat reads and chatValues writes them.
const chatColumns = `chat_id, language, format, auto, ui_lang, blocked_at, updated_at, mode, features`

const (
	selectChat = `SELECT ` + chatColumns + ` FROM telegram_chats WHERE chat_id = ?`
	upsertChat = `INSERT OR REPLACE INTO telegram_chats (` + chatColumns + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`
)

func scanChat(r scanner) (c botstate.Chat, err error) {
	err = r.Scan(&c.ID, &c.Language, &c.Format, &c.Auto, &c.UILang, timeText(&c.BlockedAt), timeText(&c.UpdatedAt), &c.Mode, &c.Features)
	return c, err
}

func chatValues(c botstate.Chat) []any {
	return []any{c.ID, c.Language, c.Format, string(c.Auto), c.UILang, nullTime(c.BlockedAt), formatTime(c.UpdatedAt), c.Mode, c.Features}
}

// getChat reads a chat: Chat{ID: id} when it has no row.
func getChat(ctx context.Context, q queryer, id int64) (botstate.Chat, error) {
	c, err := scanRow(q.QueryRowContext(ctx, selectChat, id), scanChat, nil)
	c.ID = id
	return c, err
}

func (s *BotState) Chat(ctx context.Context, id int64) (botstate.Chat, error) {
	c, err := getChat(ctx, s.db.sql, id)
	if err != nil {
		return botstate.Chat{}, fmt.Errorf("get chat %d: %w", id, err)
	}
	return c, nil
}

func (s *BotState) UpdateChat(ctx context.Context, id int64, now time.Time, change func(*botstate.Chat)) (botstate.Chat, error) {
	if err := botstate.ValidateChatUpdate(now); err != nil {
		return botstate.Chat{}, fmt.Errorf("update chat %d: %w", id, err)
	}
	var c botstate.Chat
	err := s.db.tx(ctx, func(tx *sql.Tx) error {
		cur, err := getChat(ctx, tx, id)
		if err == nil {
			c, err = botstate.ApplyChatUpdate(cur, now, change)
		}
		if err == nil {
			err = exec(ctx, tx, upsertChat, chatValues(c)...)
		}
		return err
	})
	if err != nil {
		return botstate.Chat{}, fmt.Errorf("update chat %d: %w", id, err)
	}
	return c, nil
}

// ForgetChat deletes the chat's outbox keys from its prefix up to the
// prefix with "/" made "0", the next byte.
func (s *BotState) ForgetChat(ctx context.Context, chatID int64) error {
	p := botstate.ChatPrefix(chatID)
	err := s.db.tx(ctx, func(tx *sql.Tx) error {
		err := exec(ctx, tx, `DELETE FROM outbox WHERE kind = ? AND key >= ? AND key < ?`, string(outbox.Telegram), p, p[:len(p)-1]+"0")
		if err != nil {
			return err
		}
		return exec(ctx, tx, `DELETE FROM telegram_chats WHERE chat_id = ?`, chatID)
	})
	if err != nil {
		return fmt.Errorf("forget chat %d: %w", chatID, err)
	}
	return nil
}
