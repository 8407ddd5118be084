package ydb

// The YQL of the outbox (outbox.Store), under statements.go's conventions;
// statements_test.go checks it against the schema.

// createOutbox (schema step 1): keyed by kind and key, so a chat's
// Telegram messages are one key range (ForgetChat). outbox_due serves
// ClaimDue, the agenda and the status. Rows expire by TTL from updated_at.
// https://ydb.tech/docs/en/yql/reference/syntax/create_table/
const createOutbox = `CREATE TABLE outbox (
	kind        Utf8 NOT NULL,
	key         Utf8 NOT NULL,
	job_id      Utf8,
	payload     Utf8,
	state       Utf8,
	sent_id     Int64,
	attempts    Int32,
	next_at     Timestamp,
	lease_until Timestamp,
	first_at    Timestamp,
	last_at     Timestamp,
	last_status Int32,
	last_error  Utf8,
	created_at  Timestamp,
	updated_at  Timestamp,
	INDEX outbox_due GLOBAL SYNC ON (kind, state, next_at),
	PRIMARY KEY (kind, key)
)`

// outboxStruct is a row as a parameter; the times of no send are NULL.
const outboxStruct = `List<Struct<
	kind: Utf8, key: Utf8, job_id: Utf8, payload: Utf8, state: Utf8, sent_id: Int64, attempts: Int32,
	next_at: Timestamp, lease_until: Timestamp, first_at: Optional<Timestamp>, last_at: Optional<Timestamp>,
	last_status: Int32, last_error: Utf8, created_at: Timestamp, updated_at: Timestamp>>`

// outboxColumns: outboxColumnList (outbox.go) names them in order.
const outboxColumns = `kind, key, job_id, payload, state, sent_id, attempts, next_at, lease_until, first_at, last_at, last_status, last_error, created_at, updated_at`

const (
	// insertEntries fails on a key taken since the read; the store runs
	// the transaction again.
	insertEntries = `DECLARE $entries AS ` + outboxStruct + `;
INSERT INTO outbox (` + outboxColumns + `)
SELECT ` + outboxColumns + ` FROM AS_TABLE($entries)`

	upsertEntries = `DECLARE $entries AS ` + outboxStruct + `;
UPSERT INTO outbox (` + outboxColumns + `)
SELECT ` + outboxColumns + ` FROM AS_TABLE($entries)`

	selectEntry = `DECLARE $kind AS Utf8;
DECLARE $key AS Utf8;
SELECT ` + outboxColumns + `
FROM outbox WHERE kind = $kind AND key = $key`

	// selectDueEntries: a taken entry keeps its next_at, so the lease test
	// filters the range.
	// https://ydb.tech/docs/en/yql/reference/syntax/select/secondary_index
	selectDueEntries = `DECLARE $kind AS Utf8;
DECLARE $state AS Utf8;
DECLARE $now AS Timestamp;
DECLARE $limit AS Uint64;
SELECT ` + outboxColumns + `
FROM outbox VIEW outbox_due
WHERE kind = $kind AND state = $state AND next_at <= $now AND lease_until <= $now
ORDER BY kind, state, next_at, key
LIMIT $limit`

	selectEntriesInState = `DECLARE $kind AS Utf8;
DECLARE $state AS Utf8;
DECLARE $since AS Timestamp;
DECLARE $limit AS Uint64;
SELECT ` + outboxColumns + `
FROM outbox VIEW outbox_due
WHERE kind = $kind AND state = $state AND next_at >= $since
ORDER BY kind, state, next_at, key
LIMIT $limit`

	selectNextEntry = `DECLARE $kind AS Utf8;
DECLARE $state AS Utf8;
SELECT next_at
FROM outbox VIEW outbox_due
WHERE kind = $kind AND state = $state
ORDER BY kind, state, next_at, key
LIMIT 1`

	// deleteKeyRange: a chat's Telegram messages (ForgetChat).
	deleteKeyRange = `DECLARE $kind AS Utf8;
DECLARE $from AS Utf8;
DECLARE $to AS Utf8;
DELETE FROM outbox WHERE kind = $kind AND key >= $from AND key < $to`
)
