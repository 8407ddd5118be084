package ydb

// Every YQL statement of the store, one named constant each, so the
// statements/schema agreement test (statements_test.go) can read them all.
// Each names the YDB documentation page its syntax follows. Statements name
// tables without a path; Store.text puts a PRAGMA TablePathPrefix in front
// when the store's tables live in a directory (the tests).
//
// Conventions, so the test can check them:
//   - every parameter is DECLAREd, with the type the Go code binds
//     (https://ydb.tech/docs/en/yql/reference/syntax/declare);
//   - a parameter compared with, or written to, a column has the column's
//     type (Optional<T> only for a column that may be NULL);
//   - rows are written from a List<Struct<…>> whose field names are the
//     column names, through AS_TABLE
//     (https://ydb.tech/docs/en/yql/reference/syntax/select/from_as_table).
//
// Types (https://ydb.tech/docs/en/yql/reference/types/primitive): Utf8 text,
// Int64/Int32 numbers, Bool, Timestamp (microseconds, UTC). Only key columns
// are NOT NULL: older YDB releases accept NOT NULL on key columns only
// (https://ydb.tech/docs/en/concepts/datamodel/table), and the store writes
// every column of a row when it makes it.

// Tables of schema step 1 (schema.go): CREATE TABLE with secondary
// indexes; a global index's key is its columns followed by the table's key.
// https://ydb.tech/docs/en/yql/reference/syntax/create_table/
// https://ydb.tech/docs/en/yql/reference/syntax/create_table/secondary_index
const (
	// createSchemaSteps records the steps applied; Migrate makes it first.
	createSchemaSteps = `CREATE TABLE schema_steps (
	step       Int32 NOT NULL,
	name       Utf8,
	applied_at Timestamp,
	PRIMARY KEY (step)
)`

	// createJobs: the job and its queue entry in one row. jobs_due serves
	// due selection and NextDue, jobs_owner a caller's listing,
	// jobs_unfinished a payer's unfinished jobs (their ended_at is NULL,
	// which sorts first: selectUnfinished), jobs_reuse a done job to reuse
	// (selectReusable). ended_at is NULL while the job is live, so the TTL
	// never removes a live job. charged_to is "tok:<token id>" or
	// "tgu:<user id>"; reserved_seconds, reserved_day (UTC) and
	// reserved_micros (millionths of a ruble) what spend control reserved;
	// features is job.Features as JSON; billed_seconds is NULL when the
	// recognizer said nothing.
	createJobs = `CREATE TABLE jobs (
	id               Utf8 NOT NULL,
	state            Utf8,
	source           Utf8,
	owner_id         Utf8,
	language         Utf8,
	filename         Utf8,
	size_bytes       Int64,
	content_type     Utf8,
	duration_ms      Int64,
	tg_chat_id       Int64,
	tg_message_id    Int64,
	attempts         Int32,
	next_run_at      Timestamp,
	claim_id         Utf8,
	claim_until      Timestamp,
	error_code       Utf8,
	error_message    Utf8,
	idempotency_key  Utf8,
	deleted_at       Timestamp,
	upload_by        Timestamp,
	created_at       Timestamp,
	updated_at       Timestamp,
	ended_at         Timestamp,
	charged_to       Utf8,
	reserved_seconds Int64,
	reserved_day     Timestamp,
	priority         Utf8,
	features         Utf8,
	recognition      Utf8,
	billed_seconds   Int64,
	reserved_micros  Int64,
	reuse_key        Utf8,
	INDEX jobs_due GLOBAL SYNC ON (state, next_run_at),
	INDEX jobs_owner GLOBAL SYNC ON (owner_id, id),
	INDEX jobs_unfinished GLOBAL SYNC ON (charged_to, ended_at),
	INDEX jobs_reuse GLOBAL SYNC ON (reuse_key, ended_at),
	PRIMARY KEY (id)
)`

	// createSegments: the pieces of a job's audio. ended_at is the job's,
	// so they expire with it (YDB has no cascade); counted_in is
	// job.Segment.CountedIn.
	createSegments = `CREATE TABLE segments (
	job_id       Utf8 NOT NULL,
	seq          Int32 NOT NULL,
	start_ms     Int64,
	duration_ms  Int64,
	audio_key    Utf8,
	container    Utf8,
	operation_id Utf8,
	done         Bool,
	ended_at     Timestamp,
	counted_in   Timestamp,
	PRIMARY KEY (job_id, seq)
)`

	// createTelegramMessages: one job per Telegram message. YDB has no
	// partial unique index, so the message is a key of its own; its job
	// ends after created_at, so it expires no later than its job.
	createTelegramMessages = `CREATE TABLE telegram_messages (
	chat_id    Int64 NOT NULL,
	message_id Int64 NOT NULL,
	job_id     Utf8,
	created_at Timestamp,
	PRIMARY KEY (chat_id, message_id)
)`

	// createIdempotencyKeys: one job per API caller and key, as above.
	createIdempotencyKeys = `CREATE TABLE idempotency_keys (
	owner_id        Utf8 NOT NULL,
	idempotency_key Utf8 NOT NULL,
	job_id          Utf8,
	created_at      Timestamp,
	PRIMARY KEY (owner_id, idempotency_key)
)`

	// createAPITokens: API tokens by the hash of their secret;
	// api_tokens_id finds one by id (Revoke, Create's uniqueness check).
	createAPITokens = `CREATE TABLE api_tokens (
	hash            Utf8 NOT NULL,
	id              Utf8,
	name            Utf8,
	created_at      Timestamp,
	revoked_at      Timestamp,
	callback_secret Utf8,
	INDEX api_tokens_id GLOBAL SYNC ON (id),
	PRIMARY KEY (hash)
)`
)

// Schema bookkeeping.
const (
	// selectSchemaSteps lists the applied steps, and the row that records
	// the TTLs (ttlStep).
	// https://ydb.tech/docs/en/yql/reference/syntax/select/
	selectSchemaSteps = `SELECT step, name FROM schema_steps ORDER BY step`

	// insertSchemaSteps records steps; INSERT fails if one is there.
	// https://ydb.tech/docs/en/yql/reference/syntax/insert_into
	insertSchemaSteps = `DECLARE $steps AS List<Struct<step: Int32, name: Utf8, applied_at: Timestamp>>;
INSERT INTO schema_steps (step, name, applied_at)
SELECT step, name, applied_at FROM AS_TABLE($steps)`

	// upsertSchemaTTL records the TTLs set (ttlRecord) in the row ttlStep.
	// https://ydb.tech/docs/en/yql/reference/syntax/upsert_into
	upsertSchemaTTL = `DECLARE $step AS Int32;
DECLARE $name AS Utf8;
DECLARE $applied_at AS Timestamp;
UPSERT INTO schema_steps (step, name, applied_at) VALUES ($step, $name, $applied_at)`
)

// jobsStruct is the row type of the jobs table as a parameter: one field
// per column, in the schema's order.
const jobsStruct = `List<Struct<
	id: Utf8, state: Utf8, source: Utf8, owner_id: Utf8, language: Utf8, filename: Utf8,
	size_bytes: Int64, content_type: Utf8, duration_ms: Int64,
	tg_chat_id: Optional<Int64>, tg_message_id: Optional<Int64>, attempts: Int32,
	next_run_at: Timestamp, claim_id: Optional<Utf8>, claim_until: Optional<Timestamp>,
	error_code: Utf8, error_message: Utf8, idempotency_key: Optional<Utf8>,
	deleted_at: Optional<Timestamp>, upload_by: Optional<Timestamp>, ended_at: Optional<Timestamp>,
	created_at: Timestamp, updated_at: Timestamp,
	charged_to: Optional<Utf8>, reserved_seconds: Optional<Int64>, reserved_day: Optional<Timestamp>,
	priority: Optional<Utf8>, features: Optional<Utf8>,
	recognition: Optional<Utf8>, billed_seconds: Optional<Int64>, reserved_micros: Optional<Int64>, reuse_key: Optional<Utf8>>>`

// jobColumns is the jobs table's columns as statements list them.
const jobColumns = `id, state, source, owner_id, language, filename, size_bytes, content_type,
	duration_ms, tg_chat_id, tg_message_id, attempts, next_run_at, claim_id, claim_until,
	error_code, error_message, idempotency_key, deleted_at, upload_by, ended_at, created_at, updated_at,
	charged_to, reserved_seconds, reserved_day, priority, features, recognition, billed_seconds, reserved_micros, reuse_key`

// Jobs.
const (
	// insertJobs records new jobs; INSERT fails on an id already there.
	// https://ydb.tech/docs/en/yql/reference/syntax/insert_into
	insertJobs = `DECLARE $jobs AS ` + jobsStruct + `;
INSERT INTO jobs (` + jobColumns + `)
SELECT ` + jobColumns + ` FROM AS_TABLE($jobs)`

	// upsertJobs writes whole job rows read earlier in the same transaction.
	// https://ydb.tech/docs/en/yql/reference/syntax/upsert_into
	upsertJobs = `DECLARE $jobs AS ` + jobsStruct + `;
UPSERT INTO jobs (` + jobColumns + `)
SELECT ` + jobColumns + ` FROM AS_TABLE($jobs)`

	// selectJob reads one job by its key.
	// https://ydb.tech/docs/en/yql/reference/syntax/select/
	selectJob = `DECLARE $id AS Utf8;
SELECT ` + jobColumns + `
FROM jobs WHERE id = $id`

	// selectDueJobs is the due selection of one live state through the
	// jobs_due index: the state's range up to $now, in the index's key
	// order (state, next_run_at, then the table's key id), so YDB reads
	// only $limit index rows: "To effectively limit the result of a query
	// using the LIMIT command, you must use one-way sorting in the ORDER BY
	// command" (https://ydb.tech/docs/en/dev/secondary-indexes). A claim
	// moves next_run_at to the claim's expiry (job.ApplyClaim), so a held
	// job is not in the range and claim_until, which the index lacks (a
	// filter on it would make YDB read the whole range), needs no test
	// here; ClaimDue checks it again with job.Due. ClaimDue merges the
	// states' rows.
	// https://ydb.tech/docs/en/yql/reference/syntax/select/secondary_index
	selectDueJobs = `DECLARE $state AS Utf8;
DECLARE $now AS Timestamp;
DECLARE $limit AS Uint64;
SELECT ` + jobColumns + `
FROM jobs VIEW jobs_due
WHERE state = $state AND next_run_at <= $now
ORDER BY state, next_run_at, id
LIMIT $limit`

	// selectNextDue is the earliest next_run_at of one state: the first
	// entry of the state's range in jobs_due, in the index's key order, one
	// row read.
	// https://ydb.tech/docs/en/yql/reference/syntax/select/secondary_index
	selectNextDue = `DECLARE $state AS Utf8;
SELECT next_run_at
FROM jobs VIEW jobs_due
WHERE state = $state
ORDER BY state, next_run_at, id
LIMIT 1`

	// listJobs is the first page of an owner's jobs, newest first: the
	// owner's range of jobs_owner backwards, sorted by the index's whole
	// key (owner_id, id) in one direction, so YDB reads $limit rows.
	// https://ydb.tech/docs/en/yql/reference/syntax/select/secondary_index
	listJobs = `DECLARE $owner_id AS Utf8;
DECLARE $limit AS Uint64;
SELECT ` + jobColumns + `
FROM jobs VIEW jobs_owner
WHERE owner_id = $owner_id
ORDER BY owner_id DESC, id DESC
LIMIT $limit`

	// selectUnfinished is a payer's unfinished jobs: the start of its
	// range of jobs_unfinished, where ended_at is NULL, in the index's key
	// order (charged_to, ended_at, id), so YDB reads $limit index rows.
	// https://ydb.tech/docs/en/yql/reference/syntax/select/secondary_index
	selectUnfinished = `DECLARE $charged_to AS Utf8;
DECLARE $limit AS Uint64;
SELECT ` + jobColumns + `
FROM jobs VIEW jobs_unfinished
WHERE charged_to = $charged_to AND ended_at IS NULL
ORDER BY charged_to, ended_at, id
LIMIT $limit`

	// selectReusable is the latest done, not deleted job of a reuse key
	// that ended after a moment (job.Store.Reusable).
	selectReusable = `DECLARE $reuse_key AS Utf8;
DECLARE $ended_after AS Timestamp;
DECLARE $done AS Utf8;
SELECT ` + jobColumns + `
FROM jobs VIEW jobs_reuse
WHERE reuse_key = $reuse_key AND ended_at > $ended_after AND state = $done AND deleted_at IS NULL
ORDER BY reuse_key DESC, ended_at DESC
LIMIT 1`

	// listJobsAfter is a following page: the jobs older than the cursor.
	// https://ydb.tech/docs/en/yql/reference/syntax/select/secondary_index
	listJobsAfter = `DECLARE $owner_id AS Utf8;
DECLARE $id AS Utf8;
DECLARE $limit AS Uint64;
SELECT ` + jobColumns + `
FROM jobs VIEW jobs_owner
WHERE owner_id = $owner_id AND id < $id
ORDER BY owner_id DESC, id DESC
LIMIT $limit`
)

// The claim's writes: Claim, Release and Renew rewrite only the columns
// their rule changes (job.ApplyClaim, ApplyRelease, ApplyRenew) in the row
// read earlier in the same transaction, which the rule decided on; the
// segments are neither read (but for Claim's answer) nor written. Each
// parameter has the type jobsStruct gives its column, as upsertJobs
// writes it; narrow.go lists the same columns (narrow_test.go checks). An
// UPDATE names the fields it changes, so only the index over
// them moves: jobs_due, over next_run_at
// (https://yandex.cloud/en/docs/ydb/faq: "all indexes that include the
// fields being updated").
// https://ydb.tech/docs/en/yql/reference/syntax/update
const (
	// updateClaim writes a claim (job.ApplyClaim).
	updateClaim = `DECLARE $id AS Utf8;
DECLARE $claim_id AS Optional<Utf8>;
DECLARE $claim_until AS Optional<Timestamp>;
DECLARE $next_run_at AS Timestamp;
DECLARE $attempts AS Int32;
DECLARE $updated_at AS Timestamp;
UPDATE jobs SET claim_id = $claim_id, claim_until = $claim_until, next_run_at = $next_run_at,
	attempts = $attempts, updated_at = $updated_at
WHERE id = $id`

	// updateRelease ends a claim after a failed attempt (job.ApplyRelease).
	updateRelease = `DECLARE $id AS Utf8;
DECLARE $attempts AS Int32;
DECLARE $claim_id AS Optional<Utf8>;
DECLARE $claim_until AS Optional<Timestamp>;
DECLARE $next_run_at AS Timestamp;
DECLARE $error_code AS Utf8;
DECLARE $error_message AS Utf8;
DECLARE $updated_at AS Timestamp;
UPDATE jobs SET attempts = $attempts, claim_id = $claim_id, claim_until = $claim_until, next_run_at = $next_run_at,
	error_code = $error_code, error_message = $error_message, updated_at = $updated_at
WHERE id = $id`

	// updateRenew moves a held claim's expiry on (job.ApplyRenew).
	updateRenew = `DECLARE $id AS Utf8;
DECLARE $claim_until AS Optional<Timestamp>;
DECLARE $next_run_at AS Timestamp;
UPDATE jobs SET claim_until = $claim_until, next_run_at = $next_run_at
WHERE id = $id`
)

// Segments.
const (
	// selectSegments reads the segments of some jobs.
	// https://ydb.tech/docs/en/yql/reference/syntax/select/
	selectSegments = `DECLARE $job_ids AS List<Utf8>;
SELECT job_id, seq, start_ms, duration_ms, audio_key, container, operation_id, done, counted_in
FROM segments WHERE job_id IN $job_ids
ORDER BY job_id, seq`

	// deleteSegments drops a job's segments before its new ones are written.
	// https://ydb.tech/docs/en/yql/reference/syntax/delete
	deleteSegments = `DECLARE $job_id AS Utf8;
DELETE FROM segments WHERE job_id = $job_id`

	// upsertSegments writes a job's segments.
	// https://ydb.tech/docs/en/yql/reference/syntax/upsert_into
	upsertSegments = `DECLARE $segments AS List<Struct<
	job_id: Utf8, seq: Int32, start_ms: Int64, duration_ms: Int64,
	audio_key: Utf8, container: Utf8, operation_id: Utf8, done: Bool, ended_at: Optional<Timestamp>,
	counted_in: Optional<Timestamp>>>;
UPSERT INTO segments (job_id, seq, start_ms, duration_ms, audio_key, container, operation_id, done, ended_at, counted_in)
SELECT job_id, seq, start_ms, duration_ms, audio_key, container, operation_id, done, ended_at, counted_in FROM AS_TABLE($segments)`
)

// The keys that make CreateForMessage and CreateOnce return the job made
// before: read, and inserted with the job when absent, in one transaction.
const (
	// selectMessageJob finds the job of a Telegram message.
	// https://ydb.tech/docs/en/yql/reference/syntax/select/
	selectMessageJob = `DECLARE $chat_id AS Int64;
DECLARE $message_id AS Int64;
SELECT job_id FROM telegram_messages WHERE chat_id = $chat_id AND message_id = $message_id`

	// insertMessageJob records the job of a Telegram message.
	// https://ydb.tech/docs/en/yql/reference/syntax/insert_into
	insertMessageJob = `DECLARE $chat_id AS Int64;
DECLARE $message_id AS Int64;
DECLARE $job_id AS Utf8;
DECLARE $created_at AS Timestamp;
INSERT INTO telegram_messages (chat_id, message_id, job_id, created_at) VALUES ($chat_id, $message_id, $job_id, $created_at)`

	// upsertMessageJob points a Telegram message whose job is gone (its
	// row expired) at a new job.
	// https://ydb.tech/docs/en/yql/reference/syntax/upsert_into
	upsertMessageJob = `DECLARE $chat_id AS Int64;
DECLARE $message_id AS Int64;
DECLARE $job_id AS Utf8;
DECLARE $created_at AS Timestamp;
UPSERT INTO telegram_messages (chat_id, message_id, job_id, created_at) VALUES ($chat_id, $message_id, $job_id, $created_at)`

	// deleteMessageJob frees a Telegram message from its deleted job.
	// https://ydb.tech/docs/en/yql/reference/syntax/delete
	deleteMessageJob = `DECLARE $chat_id AS Int64;
DECLARE $message_id AS Int64;
DECLARE $job_id AS Utf8;
DELETE FROM telegram_messages WHERE chat_id = $chat_id AND message_id = $message_id AND job_id = $job_id`

	// selectKeyJob finds the job of an owner's idempotency key.
	// https://ydb.tech/docs/en/yql/reference/syntax/select/
	selectKeyJob = `DECLARE $owner_id AS Utf8;
DECLARE $idempotency_key AS Utf8;
SELECT job_id FROM idempotency_keys WHERE owner_id = $owner_id AND idempotency_key = $idempotency_key`

	// insertKeyJob records the job of an owner's idempotency key.
	// https://ydb.tech/docs/en/yql/reference/syntax/insert_into
	insertKeyJob = `DECLARE $owner_id AS Utf8;
DECLARE $idempotency_key AS Utf8;
DECLARE $job_id AS Utf8;
DECLARE $created_at AS Timestamp;
INSERT INTO idempotency_keys (owner_id, idempotency_key, job_id, created_at) VALUES ($owner_id, $idempotency_key, $job_id, $created_at)`

	// upsertKeyJob points an idempotency key whose job is gone (its row
	// expired) at a new job.
	// https://ydb.tech/docs/en/yql/reference/syntax/upsert_into
	upsertKeyJob = `DECLARE $owner_id AS Utf8;
DECLARE $idempotency_key AS Utf8;
DECLARE $job_id AS Utf8;
DECLARE $created_at AS Timestamp;
UPSERT INTO idempotency_keys (owner_id, idempotency_key, job_id, created_at) VALUES ($owner_id, $idempotency_key, $job_id, $created_at)`

	// deleteKeyJob frees an idempotency key from its deleted job.
	// https://ydb.tech/docs/en/yql/reference/syntax/delete
	deleteKeyJob = `DECLARE $owner_id AS Utf8;
DECLARE $idempotency_key AS Utf8;
DECLARE $job_id AS Utf8;
DELETE FROM idempotency_keys WHERE owner_id = $owner_id AND idempotency_key = $idempotency_key AND job_id = $job_id`
)

// API tokens.
const tokenColumns = `hash, id, name, created_at, revoked_at, callback_secret`

const (
	// insertToken records a token; INSERT fails on a hash already there.
	// https://ydb.tech/docs/en/yql/reference/syntax/insert_into
	insertToken = `DECLARE $hash AS Utf8;
DECLARE $id AS Utf8;
DECLARE $name AS Utf8;
DECLARE $created_at AS Timestamp;
DECLARE $revoked_at AS Optional<Timestamp>;
DECLARE $callback_secret AS Utf8;
INSERT INTO api_tokens (` + tokenColumns + `) VALUES ($hash, $id, $name, $created_at, $revoked_at, $callback_secret)`

	// selectTokenByHash finds a token by the hash of its secret.
	// https://ydb.tech/docs/en/yql/reference/syntax/select/
	selectTokenByHash = `DECLARE $hash AS Utf8;
SELECT ` + tokenColumns + ` FROM api_tokens WHERE hash = $hash`

	// selectTokenByID finds a token by its id, through api_tokens_id.
	// https://ydb.tech/docs/en/yql/reference/syntax/select/secondary_index
	selectTokenByID = `DECLARE $id AS Utf8;
SELECT ` + tokenColumns + ` FROM api_tokens VIEW api_tokens_id WHERE id = $id`

	// selectTokens lists every token, oldest first. Tokens are made by hand,
	// so the table is small and a full read is fine.
	// https://ydb.tech/docs/en/yql/reference/syntax/select/
	selectTokens = `SELECT ` + tokenColumns + ` FROM api_tokens ORDER BY id`

	// revokeToken sets the revocation time of a token read as live in the
	// same transaction.
	// https://ydb.tech/docs/en/yql/reference/syntax/update
	revokeToken = `DECLARE $hash AS Utf8;
DECLARE $revoked_at AS Timestamp;
UPDATE api_tokens SET revoked_at = $revoked_at WHERE hash = $hash`
)
