package ydb

import (
	"fmt"

	"github.com/ydb-platform/ydb-go-sdk/v3/query"
	"github.com/ydb-platform/ydb-go-sdk/v3/table/types"

	"transcriber/internal/botstate"
)

// chatRow holds one telegram_chats row as it is read.
type chatRow struct {
	botstate.Chat
	auto string
}

// chatColumn is one column of telegram_chats: its name, the value a chat
// gives it (the parameter of the same name in upsertChat), and where a read
// row puts it. chatColumnList is the one list; botstate_statements.go's
// chatColumns names the same columns in the same order.
type chatColumn struct {
	name  string
	value func(c *botstate.Chat) types.Value
	ref   func(r *chatRow) any
}

var chatColumnList = []chatColumn{
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

// chatParams are the parameters of upsertChat.
func chatParams(c botstate.Chat) params {
	p := make(params, len(chatColumnList))
	for i, col := range chatColumnList {
		p[i] = param{"$" + col.name, col.value(&c)}
	}
	return p
}

func chatDests(r *chatRow) []query.NamedDestination {
	d := make([]query.NamedDestination, len(chatColumnList))
	for i, c := range chatColumnList {
		d[i] = query.Named(c.name, c.ref(r))
	}
	return d
}

// finish turns a scanned row into its chat, times in UTC.
func (r *chatRow) finish() botstate.Chat {
	c := r.Chat
	c.Auto = botstate.Auto(r.auto)
	c.UpdatedAt = c.UpdatedAt.UTC()
	if !c.BlockedAt.IsZero() {
		c.BlockedAt = c.BlockedAt.UTC()
	}
	return c
}

func scanChat(row query.Row) (botstate.Chat, error) {
	var r chatRow
	if err := row.ScanNamed(chatDests(&r)...); err != nil {
		return botstate.Chat{}, fmt.Errorf("read chat row: %w", err)
	}
	return r.finish(), nil
}

// The parameters of the other statements, one function each, so the
// statements/schema agreement test checks what the store binds.

func chatIDParams(id int64) params { return params{{"$chat_id", i64(id)}} } // selectChat, deleteChat
