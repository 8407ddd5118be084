package ydb

// The YQL of the Telegram bot's state (botstate.Store): its two tables and
// every statement BotState runs, one named constant each, under the
// conventions statements.go states (every parameter DECLAREd with the type
// the Go code binds; a parameter compared with or written to a column has
// the column's type; rows written from a List<Struct<…>> through AS_TABLE,
// or a single row from VALUES). statements_test.go reads this file with
// statements.go and checks both against the schema.

// Tables of schema step 1 (schema.go): CREATE TABLE with a secondary index.
// https://ydb.tech/docs/en/yql/reference/syntax/create_table/
// https://ydb.tech/docs/en/yql/reference/syntax/create_table/secondary_index
const (
	// createTelegramChats: one chat's settings; a chat never seen has no
	// row. mode is job.Priority (/mode), features botstate.Chat.Features;
	// NULL or empty is normal and none.
	createTelegramChats = `CREATE TABLE telegram_chats (
	chat_id    Int64 NOT NULL,
	language   Utf8,
	format     Utf8,
	auto       Utf8,
	ui_lang    Utf8,
	blocked_at Timestamp,
	updated_at Timestamp,
	mode       Utf8,
	features   Utf8,
	PRIMARY KEY (chat_id)
)`

	// createTelegramDeliveries: the messages the bot posts, keyed
	// by the Telegram message they answer and the part, so a chat's rows are
	// one key range (ForgetChat). telegram_deliveries_due serves ClaimDue;
	// its key is (state, next_at) followed by the table's key.
	createTelegramDeliveries = `CREATE TABLE telegram_deliveries (
	chat_id     Int64 NOT NULL,
	message_id  Int64 NOT NULL,
	part        Utf8 NOT NULL,
	job_id      Utf8,
	state       Utf8,
	sent_id     Int64,
	attempts    Int32,
	next_at     Timestamp,
	lease_until Timestamp,
	updated_at  Timestamp,
	INDEX telegram_deliveries_due GLOBAL SYNC ON (state, next_at),
	PRIMARY KEY (chat_id, message_id, part)
)`
)

// chatColumns is the telegram_chats table's columns as statements list
// them; chatColumnList (botstate_rows.go) names the same in the same order.
const chatColumns = `chat_id, language, format, auto, ui_lang, blocked_at, updated_at, mode, features`

// Chats.
const (
	// selectChat reads one chat's settings by its key.
	// https://ydb.tech/docs/en/yql/reference/syntax/select/
	selectChat = `DECLARE $chat_id AS Int64;
SELECT ` + chatColumns + `
FROM telegram_chats WHERE chat_id = $chat_id`

	// upsertChat writes a chat's settings read earlier in the same
	// transaction, or its first ones.
	// https://ydb.tech/docs/en/yql/reference/syntax/upsert_into
	upsertChat = `DECLARE $chat_id AS Int64;
DECLARE $language AS Utf8;
DECLARE $format AS Utf8;
DECLARE $auto AS Utf8;
DECLARE $ui_lang AS Utf8;
DECLARE $blocked_at AS Optional<Timestamp>;
DECLARE $updated_at AS Timestamp;
DECLARE $mode AS Utf8;
DECLARE $features AS Utf8;
UPSERT INTO telegram_chats (` + chatColumns + `)
VALUES ($chat_id, $language, $format, $auto, $ui_lang, $blocked_at, $updated_at, $mode, $features)`

	// deleteChat removes a chat's settings (ForgetChat).
	// https://ydb.tech/docs/en/yql/reference/syntax/delete
	deleteChat = `DECLARE $chat_id AS Int64;
DELETE FROM telegram_chats WHERE chat_id = $chat_id`
)

// deliveriesStruct is the row type of the telegram_deliveries table as a
// parameter: one field per column, in the schema's order. Every field is
// non-optional: the store writes every column of a row.
const deliveriesStruct = `List<Struct<
	chat_id: Int64, message_id: Int64, part: Utf8, job_id: Utf8, state: Utf8, sent_id: Int64,
	attempts: Int32, next_at: Timestamp, lease_until: Timestamp, updated_at: Timestamp>>`

// deliveryColumns is the telegram_deliveries table's columns as statements
// list them; deliveryColumnList (botstate_rows.go) names the same in the
// same order.
const deliveryColumns = `chat_id, message_id, part, job_id, state, sent_id, attempts, next_at, lease_until, updated_at`

// Deliveries.
const (
	// insertDeliveries records new deliveries (Begin, Schedule); INSERT
	// fails on a key already there, which the store retries.
	// https://ydb.tech/docs/en/yql/reference/syntax/insert_into
	insertDeliveries = `DECLARE $deliveries AS ` + deliveriesStruct + `;
INSERT INTO telegram_deliveries (` + deliveryColumns + `)
SELECT ` + deliveryColumns + ` FROM AS_TABLE($deliveries)`

	// upsertDeliveries writes whole delivery rows read earlier in the same
	// transaction (Begin's takeover, Finish, ClaimDue).
	// https://ydb.tech/docs/en/yql/reference/syntax/upsert_into
	upsertDeliveries = `DECLARE $deliveries AS ` + deliveriesStruct + `;
UPSERT INTO telegram_deliveries (` + deliveryColumns + `)
SELECT ` + deliveryColumns + ` FROM AS_TABLE($deliveries)`

	// selectDelivery reads one delivery by its key.
	// https://ydb.tech/docs/en/yql/reference/syntax/select/
	selectDelivery = `DECLARE $chat_id AS Int64;
DECLARE $message_id AS Int64;
DECLARE $part AS Utf8;
SELECT ` + deliveryColumns + `
FROM telegram_deliveries WHERE chat_id = $chat_id AND message_id = $message_id AND part = $part`

	// selectDueDeliveries is ClaimDue's selection through the
	// telegram_deliveries_due index: pending, due, lease run out, sorted
	// by the index's key. A taken delivery keeps its next_at, so the lease
	// test filters the range: lease_until is not in the index, and YDB
	// reads every held delivery of the range before the LIMIT applies.
	// https://ydb.tech/docs/en/yql/reference/syntax/select/secondary_index
	selectDueDeliveries = `DECLARE $state AS Utf8;
DECLARE $now AS Timestamp;
DECLARE $limit AS Uint64;
SELECT ` + deliveryColumns + `
FROM telegram_deliveries VIEW telegram_deliveries_due
WHERE state = $state AND next_at <= $now AND lease_until <= $now
ORDER BY state, next_at, chat_id, message_id, part
LIMIT $limit`

	// deleteChatDeliveries removes a chat's deliveries (ForgetChat): the
	// key range of chat_id.
	// https://ydb.tech/docs/en/yql/reference/syntax/delete
	deleteChatDeliveries = `DECLARE $chat_id AS Int64;
DELETE FROM telegram_deliveries WHERE chat_id = $chat_id`
)
