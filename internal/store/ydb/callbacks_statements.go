package ydb

// The YQL of job callbacks (callback.Store): their table, and every
// statement Callbacks runs, one named constant each, under the conventions
// statements.go states.
// statements_test.go reads this file with the other statement files and
// checks them all against the schema.

// createCallbacks (schema step 1): the callback of a job made with a
// callback_url, keyed by the job. callbacks_due serves ClaimDue; its key
// is (state, next_at) followed by the table's key. Rows expire by TTL from
// created_at (expiring, schema.go).
// https://ydb.tech/docs/en/yql/reference/syntax/create_table/
const createCallbacks = `CREATE TABLE callbacks (
	job_id      Utf8 NOT NULL,
	url         Utf8,
	token_hash  Utf8,
	webhook_id  Utf8,
	state       Utf8,
	attempts    Int32,
	next_at     Timestamp,
	lease_until Timestamp,
	first_at    Timestamp,
	last_at     Timestamp,
	last_status Int32,
	last_error  Utf8,
	created_at  Timestamp,
	updated_at  Timestamp,
	INDEX callbacks_due GLOBAL SYNC ON (state, next_at),
	PRIMARY KEY (job_id)
)`

// callbacksStruct is the row type of the callbacks table as a parameter:
// one field per column, in the schema's order; the times of an attempt
// not yet made are NULL.
const callbacksStruct = `List<Struct<
	job_id: Utf8, url: Utf8, token_hash: Utf8, webhook_id: Utf8, state: Utf8, attempts: Int32,
	next_at: Timestamp, lease_until: Timestamp, first_at: Optional<Timestamp>, last_at: Optional<Timestamp>,
	last_status: Int32, last_error: Utf8, created_at: Timestamp, updated_at: Timestamp>>`

// callbackColumns is the callbacks table's columns as statements list
// them; callbackColumnList (callbacks.go) names the same in the same order.
const callbackColumns = `job_id, url, token_hash, webhook_id, state, attempts, next_at, lease_until, first_at, last_at, last_status, last_error, created_at, updated_at`

const (
	// insertCallbacks records a new callback (Register); INSERT fails on
	// a key already there, which the store retries.
	// https://ydb.tech/docs/en/yql/reference/syntax/insert_into
	insertCallbacks = `DECLARE $callbacks AS ` + callbacksStruct + `;
INSERT INTO callbacks (` + callbackColumns + `)
SELECT ` + callbackColumns + ` FROM AS_TABLE($callbacks)`

	// upsertCallbacks writes whole callback rows read earlier in the same
	// transaction (Begin, Finish, ClaimDue).
	// https://ydb.tech/docs/en/yql/reference/syntax/upsert_into
	upsertCallbacks = `DECLARE $callbacks AS ` + callbacksStruct + `;
UPSERT INTO callbacks (` + callbackColumns + `)
SELECT ` + callbackColumns + ` FROM AS_TABLE($callbacks)`

	// selectCallback reads one job's callback by its key.
	// https://ydb.tech/docs/en/yql/reference/syntax/select/
	selectCallback = `DECLARE $job_id AS Utf8;
SELECT ` + callbackColumns + `
FROM callbacks WHERE job_id = $job_id`

	// selectDueCallbacks is ClaimDue's selection through callbacks_due:
	// pending, due, lease run out, in the index's order.
	// https://ydb.tech/docs/en/yql/reference/syntax/select/secondary_index
	selectDueCallbacks = `DECLARE $state AS Utf8;
DECLARE $now AS Timestamp;
DECLARE $limit AS Uint64;
SELECT ` + callbackColumns + `
FROM callbacks VIEW callbacks_due
WHERE state = $state AND next_at <= $now AND lease_until <= $now
ORDER BY state, next_at, job_id
LIMIT $limit`
)
