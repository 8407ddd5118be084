package ydb

import (
	"context"
	"fmt"
	"time"

	"github.com/ydb-platform/ydb-go-sdk/v3/query"
	"github.com/ydb-platform/ydb-go-sdk/v3/table/types"

	"transcriber/internal/botstate"
	"transcriber/internal/outbox"
)

// BotState keeps the bot's chats in telegram_chats. An update is one DoTx
// that a concurrent writer of the row makes the SDK run again.
type BotState struct{ db *DB }

var _ botstate.Store = (*BotState)(nil)

func NewBotState(db *DB) *BotState { return &BotState{db: db} }

func (s *BotState) Chat(ctx context.Context, id int64) (botstate.Chat, error) {
	c, err := inTx(ctx, s.db.read, func(ctx context.Context, tx query.TxActor) (botstate.Chat, error) { return s.getChat(ctx, tx, id) })
	if err != nil {
		return botstate.Chat{}, fmt.Errorf("get chat %d: %w", id, err)
	}
	return c, nil
}

func (s *BotState) getChat(ctx context.Context, tx query.TxActor, id int64) (botstate.Chat, error) {
	c, found, err := scanOne(ctx, s.db, tx, selectChat, chatIDParams(id), scanChat)
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

// chatRow holds one telegram_chats row as it is read.
type chatRow struct {
	botstate.Chat
	auto string
}

// chatColumnList names chatColumns (botstate_statements.go) in order.
var chatColumnList = []rowCol[botstate.Chat, chatRow]{
	{"chat_id", func(c *botstate.Chat) types.Value { return i64(c.ID) }, func(r *chatRow) any { return &r.ID }},
	{"language", func(c *botstate.Chat) types.Value { return utf8(c.Language) }, func(r *chatRow) any { return &r.Language }},
	{"format", func(c *botstate.Chat) types.Value { return utf8(c.Format) }, func(r *chatRow) any { return &r.Format }},
	{"auto", func(c *botstate.Chat) types.Value { return utf8(string(c.Auto)) }, func(r *chatRow) any { return &r.auto }},
	{"ui_lang", func(c *botstate.Chat) types.Value { return utf8(c.UILang) }, func(r *chatRow) any { return &r.UILang }},
	{"blocked_at", func(c *botstate.Chat) types.Value { return optTS(c.BlockedAt) }, func(r *chatRow) any { return &r.BlockedAt }},
	{"updated_at", func(c *botstate.Chat) types.Value { return ts(c.UpdatedAt) }, func(r *chatRow) any { return &r.UpdatedAt }},
	{"mode", func(c *botstate.Chat) types.Value { return utf8(c.Mode) }, func(r *chatRow) any { return &r.Mode }},
	{"features", func(c *botstate.Chat) types.Value { return utf8(c.Features) }, func(r *chatRow) any { return &r.Features }},
}

func chatParams(c botstate.Chat) params {
	p := make(params, len(chatColumnList))
	for i, col := range chatColumnList {
		p[i] = param{"$" + col.name, col.value(&c)}
	}
	return p
}

// finish turns a scanned row into its chat, times in UTC.
func (r *chatRow) finish() botstate.Chat {
	c := r.Chat
	c.Auto = botstate.Auto(r.auto)
	inUTC(&c.UpdatedAt, &c.BlockedAt)
	return c
}

func scanChat(row query.Row) (botstate.Chat, error) {
	var r chatRow
	if err := row.ScanNamed(destsOf(chatColumnList, &r)...); err != nil {
		return botstate.Chat{}, fmt.Errorf("read chat row: %w", err)
	}
	return r.finish(), nil
}

func chatIDParams(id int64) params { return params{{"$chat_id", i64(id)}} } // selectChat, deleteChat
