package ydb

// The first due entries of the deliveries' and callbacks' due indexes.
const (
	selectNextDelivery = `DECLARE $state AS Utf8;
SELECT next_at
FROM telegram_deliveries VIEW telegram_deliveries_due
WHERE state = $state
ORDER BY state, next_at, chat_id, message_id, part
LIMIT 1`

	selectNextCallback = `DECLARE $state AS Utf8;
SELECT next_at
FROM callbacks VIEW callbacks_due
WHERE state = $state
ORDER BY state, next_at, job_id
LIMIT 1`
)
