package ydb

// The YQL of the Telegram bot's chats (botstate.Store): their table and
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
