package ydb

import (
	"fmt"
	"time"

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

// deliveryRow holds one telegram_deliveries row as it is read.
type deliveryRow struct {
	botstate.Delivery
	state    string
	attempts int32
}

// deliveryColumn is one column of telegram_deliveries, as jobColumn is of
// jobs. deliveryColumnList is the one list; botstate_statements.go's
// deliveryColumns and deliveriesStruct name the same columns in the same
// order.
type deliveryColumn struct {
	name  string
	value func(d *botstate.Delivery) types.Value
	ref   func(r *deliveryRow) any
}

var deliveryColumnList = []deliveryColumn{
	{"chat_id", func(d *botstate.Delivery) types.Value { return i64(d.ChatID) }, func(r *deliveryRow) any { return &r.ChatID }},
	{"message_id", func(d *botstate.Delivery) types.Value { return i64(d.MessageID) }, func(r *deliveryRow) any { return &r.MessageID }},
	{"part", func(d *botstate.Delivery) types.Value { return utf8(d.Part) }, func(r *deliveryRow) any { return &r.Part }},
	{"job_id", func(d *botstate.Delivery) types.Value { return utf8(d.JobID) }, func(r *deliveryRow) any { return &r.JobID }},
	{"state", func(d *botstate.Delivery) types.Value { return utf8(string(d.State)) }, func(r *deliveryRow) any { return &r.state }},
	{"sent_id", func(d *botstate.Delivery) types.Value { return i64(d.SentID) }, func(r *deliveryRow) any { return &r.SentID }},
	{"attempts", func(d *botstate.Delivery) types.Value { return types.Int32Value(int32(d.Attempts)) }, func(r *deliveryRow) any { return &r.attempts }}, //nolint:gosec // attempts stay far below 2^31
	{"next_at", func(d *botstate.Delivery) types.Value { return ts(d.NextAt) }, func(r *deliveryRow) any { return &r.NextAt }},
	{"lease_until", func(d *botstate.Delivery) types.Value { return ts(d.LeaseUntil) }, func(r *deliveryRow) any { return &r.LeaseUntil }},
	{"updated_at", func(d *botstate.Delivery) types.Value { return ts(d.UpdatedAt) }, func(r *deliveryRow) any { return &r.UpdatedAt }},
}

// deliveryStruct is d as one element of the $deliveries parameter.
func deliveryStruct(d botstate.Delivery) types.Value {
	fields := make([]types.StructValueOption, len(deliveryColumnList))
	for i, c := range deliveryColumnList {
		fields[i] = types.StructFieldValue(c.name, c.value(&d))
	}
	return types.StructValue(fields...)
}

// deliveriesParams is the $deliveries parameter of insertDeliveries and
// upsertDeliveries.
func deliveriesParams(ds ...botstate.Delivery) params {
	vs := make([]types.Value, len(ds))
	for i, d := range ds {
		vs[i] = deliveryStruct(d)
	}
	return params{{"$deliveries", types.ListValue(vs...)}}
}

func deliveryDests(r *deliveryRow) []query.NamedDestination {
	d := make([]query.NamedDestination, len(deliveryColumnList))
	for i, c := range deliveryColumnList {
		d[i] = query.Named(c.name, c.ref(r))
	}
	return d
}

// finish turns a scanned row into its delivery: the typed columns, and
// times in UTC.
func (r *deliveryRow) finish() botstate.Delivery {
	d := r.Delivery
	d.State, d.Attempts = botstate.DeliveryState(r.state), int(r.attempts)
	d.NextAt, d.LeaseUntil, d.UpdatedAt = d.NextAt.UTC(), d.LeaseUntil.UTC(), d.UpdatedAt.UTC()
	return d
}

func scanDelivery(row query.Row) (botstate.Delivery, error) {
	var r deliveryRow
	if err := row.ScanNamed(deliveryDests(&r)...); err != nil {
		return botstate.Delivery{}, fmt.Errorf("read delivery row: %w", err)
	}
	return r.finish(), nil
}

// The parameters of the other statements, one function each, so the
// statements/schema agreement test checks what the store binds.

func chatIDParams(id int64) params { return params{{"$chat_id", i64(id)}} } // selectChat, deleteChat, deleteChatDeliveries

func deliveryKeyParams(k botstate.Key) params { // selectDelivery
	return params{{"$chat_id", i64(k.ChatID)}, {"$message_id", i64(k.MessageID)}, {"$part", utf8(k.Part)}}
}

func dueDeliveriesParams(now time.Time, n int) params { // selectDueDeliveries
	return params{{"$state", utf8(string(botstate.Pending))}, {"$now", ts(now)}, {"$limit", uint64Param(n)}}
}
