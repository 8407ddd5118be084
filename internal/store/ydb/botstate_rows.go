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

// rowCol is one column of a row type T, read through R: its name, the
// value T gives it (the parameter of that name), and where R takes it.
type rowCol[T, R any] struct {
	name  string
	value func(*T) types.Value
	ref   func(*R) any
}

func structOf[T, R any](cols []rowCol[T, R], v *T) types.Value {
	fields := make([]types.StructValueOption, len(cols))
	for i, c := range cols {
		fields[i] = types.StructFieldValue(c.name, c.value(v))
	}
	return types.StructValue(fields...)
}

func destsOf[T, R any](cols []rowCol[T, R], r *R) []query.NamedDestination {
	d := make([]query.NamedDestination, len(cols))
	for i, c := range cols {
		d[i] = query.Named(c.name, c.ref(r))
	}
	return d
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

func chatDests(r *chatRow) []query.NamedDestination { return destsOf(chatColumnList, r) }

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

func chatIDParams(id int64) params { return params{{"$chat_id", i64(id)}} } // selectChat, deleteChat
