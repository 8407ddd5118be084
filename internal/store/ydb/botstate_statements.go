package ydb

// The YQL of the bot's chats (botstate.Store), under statements.go's
// conventions; statements_test.go checks it against the schema.

// createTelegramChats (schema step 1): a chat never seen has no row; NULL
// or empty is the default.
// https://ydb.tech/docs/en/yql/reference/syntax/create_table/
const createTelegramChats = `CREATE TABLE telegram_chats (
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

// chatColumns: chatColumnList (botstate.go) names them in order.
const chatColumns = `chat_id, language, format, auto, ui_lang, blocked_at, updated_at, mode, features`

const (
	selectChat = `DECLARE $chat_id AS Int64;
SELECT ` + chatColumns + `
FROM telegram_chats WHERE chat_id = $chat_id`

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

	deleteChat = `DECLARE $chat_id AS Int64;
DELETE FROM telegram_chats WHERE chat_id = $chat_id`
)
