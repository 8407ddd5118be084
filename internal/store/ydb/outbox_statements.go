package ydb

// The YQL of the outbox (outbox.Store): its table and every statement
// Outbox runs, under the conventions statements.go states.
// statements_test.go checks them against the schema.

// createOutbox (schema step 1): every delivery sent once and retried,
// keyed by kind and key, so a chat's Telegram messages are one key range
// (ForgetChat). outbox_due serves ClaimDue, the agenda and the status;
// its key is (kind, state, next_at) followed by the table's key. Rows
// expire by TTL from updated_at (expiring, schema.go).
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

// outboxStruct is the row type of the outbox table as a parameter, in the
// schema's order; the times of a send not yet made are NULL.
const outboxStruct = `List<Struct<
	kind: Utf8, key: Utf8, job_id: Utf8, payload: Utf8, state: Utf8, sent_id: Int64, attempts: Int32,
	next_at: Timestamp, lease_until: Timestamp, first_at: Optional<Timestamp>, last_at: Optional<Timestamp>,
	last_status: Int32, last_error: Utf8, created_at: Timestamp, updated_at: Timestamp>>`

// outboxColumns: outboxColumnList (outbox.go) names the same in the same
// order.
const outboxColumns = `kind, key, job_id, payload, state, sent_id, attempts, next_at, lease_until, first_at, last_at, last_status, last_error, created_at, updated_at`

const (
	// insertEntries: INSERT fails on a key taken since the read, and the
	// store runs the transaction again.
	// https://ydb.tech/docs/en/yql/reference/syntax/insert_into
	insertEntries = `DECLARE $entries AS ` + outboxStruct + `;
INSERT INTO outbox (` + outboxColumns + `)
SELECT ` + outboxColumns + ` FROM AS_TABLE($entries)`

	// https://ydb.tech/docs/en/yql/reference/syntax/upsert_into
	upsertEntries = `DECLARE $entries AS ` + outboxStruct + `;
UPSERT INTO outbox (` + outboxColumns + `)
SELECT ` + outboxColumns + ` FROM AS_TABLE($entries)`

	selectEntry = `DECLARE $kind AS Utf8;
DECLARE $key AS Utf8;
SELECT ` + outboxColumns + `
FROM outbox WHERE kind = $kind AND key = $key`

	// selectDueEntries is ClaimDue's selection through outbox_due:
	// pending, due, lease run out, in the index's order. A taken entry
	// keeps its next_at, so the lease test filters the range.
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

	// selectEntriesInState is a kind's state's range of outbox_due from
	// $since (the status).
	selectEntriesInState = `DECLARE $kind AS Utf8;
DECLARE $state AS Utf8;
DECLARE $since AS Timestamp;
DECLARE $limit AS Uint64;
SELECT ` + outboxColumns + `
FROM outbox VIEW outbox_due
WHERE kind = $kind AND state = $state AND next_at >= $since
ORDER BY kind, state, next_at, key
LIMIT $limit`

	// selectNextEntry is the first pending entry of a kind (the agenda).
	selectNextEntry = `DECLARE $kind AS Utf8;
DECLARE $state AS Utf8;
SELECT next_at
FROM outbox VIEW outbox_due
WHERE kind = $kind AND state = $state
ORDER BY kind, state, next_at, key
LIMIT 1`

	// deleteKeyRange removes a kind's entries with $from <= key < $to: a
	// chat's Telegram messages (ForgetChat).
	// https://ydb.tech/docs/en/yql/reference/syntax/delete
	deleteKeyRange = `DECLARE $kind AS Utf8;
DECLARE $from AS Utf8;
DECLARE $to AS Utf8;
DELETE FROM outbox WHERE kind = $kind AND key >= $from AND key < $to`
)
