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

// Schema steps: CREATE TABLE with secondary indexes.
// https://ydb.tech/docs/en/yql/reference/syntax/create_table/
// https://ydb.tech/docs/en/yql/reference/syntax/create_table/secondary_index
const (
	// createSchemaSteps records the schema steps applied; Migrate makes it
	// before the first step.
	createSchemaSteps = `CREATE TABLE schema_steps (
	step       Int32 NOT NULL,
	name       Utf8,
	applied_at Timestamp,
	PRIMARY KEY (step)
)`

	// createJobs (step 1): the job and its queue entry in one row. jobs_due
	// serves due selection and NextDue, jobs_owner a caller's listing; a
	// global index's key is its columns followed by the table's key (id).
	createJobs = `CREATE TABLE jobs (
	id              Utf8 NOT NULL,
	state           Utf8,
	source          Utf8,
	owner_id        Utf8,
	language        Utf8,
	filename        Utf8,
	size_bytes      Int64,
	content_type    Utf8,
	duration_ms     Int64,
	tg_chat_id      Int64,
	tg_message_id   Int64,
	attempts        Int32,
	next_run_at     Timestamp,
	claim_id        Utf8,
	claim_until     Timestamp,
	error_code      Utf8,
	error_message   Utf8,
	idempotency_key Utf8,
	deleted_at      Timestamp,
	upload_by       Timestamp,
	created_at      Timestamp,
	updated_at      Timestamp,
	INDEX jobs_due GLOBAL SYNC ON (state, next_run_at),
	INDEX jobs_owner GLOBAL SYNC ON (owner_id, id),
	PRIMARY KEY (id)
)`

	// createSegments (step 2): the pieces of a job's audio.
	createSegments = `CREATE TABLE segments (
	job_id       Utf8 NOT NULL,
	seq          Int32 NOT NULL,
	start_ms     Int64,
	duration_ms  Int64,
	audio_key    Utf8,
	container    Utf8,
	operation_id Utf8,
	done         Bool,
	PRIMARY KEY (job_id, seq)
)`

	// createTelegramMessages (step 3): one job per Telegram message. YDB has
	// no partial unique index to lean on, so the message is a key of its own.
	createTelegramMessages = `CREATE TABLE telegram_messages (
	chat_id    Int64 NOT NULL,
	message_id Int64 NOT NULL,
	job_id     Utf8,
	PRIMARY KEY (chat_id, message_id)
)`

	// createIdempotencyKeys (step 4): one job per API caller and key.
	createIdempotencyKeys = `CREATE TABLE idempotency_keys (
	owner_id        Utf8 NOT NULL,
	idempotency_key Utf8 NOT NULL,
	job_id          Utf8,
	PRIMARY KEY (owner_id, idempotency_key)
)`

	// createAPITokens (step 5): API tokens by the hash of their secret;
	// api_tokens_id finds one by id (Revoke, and Create's uniqueness check).
	createAPITokens = `CREATE TABLE api_tokens (
	hash       Utf8 NOT NULL,
	id         Utf8,
	name       Utf8,
	created_at Timestamp,
	revoked_at Timestamp,
	INDEX api_tokens_id GLOBAL SYNC ON (id),
	PRIMARY KEY (hash)
)`
)

// Schema steps 8 to 11: the columns a row's expiry is counted from.
// https://ydb.tech/docs/en/yql/reference/syntax/alter_table/columns
const (
	// alterJobsEndedAt (step 8): when the job reached a terminal state;
	// NULL while it is live, so the TTL never removes a live job.
	alterJobsEndedAt = `ALTER TABLE jobs ADD COLUMN ended_at Timestamp`

	// alterSegmentsEndedAt (step 9): the job's ended_at, written with the
	// segments, so they expire with their job (YDB has no cascade).
	alterSegmentsEndedAt = `ALTER TABLE segments ADD COLUMN ended_at Timestamp`

	// alterTelegramMessagesCreatedAt (step 10): when the key row was made;
	// its job ends after that, so it expires no later than its job.
	alterTelegramMessagesCreatedAt = `ALTER TABLE telegram_messages ADD COLUMN created_at Timestamp`

	// alterIdempotencyKeysCreatedAt (step 11): as for telegram_messages.
	alterIdempotencyKeysCreatedAt = `ALTER TABLE idempotency_keys ADD COLUMN created_at Timestamp`
)

// Schema steps 13 to 16: spend control (package spend): who pays for a
// job, the audio reserved for it and the day it was counted in, and the
// index that finds a payer's unfinished jobs.
// https://ydb.tech/docs/en/yql/reference/syntax/alter_table/columns
// https://ydb.tech/docs/en/yql/reference/syntax/alter_table/indexes
const (
	// alterJobsChargedTo (step 13): "tok:<token id>" or "tgu:<user id>";
	// NULL for a job made before it.
	alterJobsChargedTo = `ALTER TABLE jobs ADD COLUMN charged_to Utf8`

	// alterJobsReservedSeconds (step 14): the audio reserved for the job.
	alterJobsReservedSeconds = `ALTER TABLE jobs ADD COLUMN reserved_seconds Int64`

	// alterJobsReservedDay (step 15): the UTC day the reservation was
	// counted in.
	alterJobsReservedDay = `ALTER TABLE jobs ADD COLUMN reserved_day Timestamp`

	// alterJobsUnfinishedIndex (step 16): a payer's jobs by their end; an
	// unfinished job's ended_at is NULL, which sorts first, so a payer's
	// unfinished jobs are the start of its range (selectUnfinished).
	alterJobsUnfinishedIndex = `ALTER TABLE jobs ADD INDEX jobs_unfinished GLOBAL SYNC ON (charged_to, ended_at)`
)

// Schema step 17: a job's priority (step 18, a Telegram chat's choice of
// it, is in botstate_statements.go).
// https://ydb.tech/docs/en/yql/reference/syntax/alter_table/columns
const (
	// alterJobsPriority (step 17): "normal" or "deferred" (job.Priority);
	// NULL for a job made before it, which is normal.
	alterJobsPriority = `ALTER TABLE jobs ADD COLUMN priority Utf8`
)

// Schema step 23: the window of the installation's count of recognitions
// in flight that a segment's recognition was last counted in
// (job.Segment.CountedIn); NULL when it is counted in none.
// https://ydb.tech/docs/en/yql/reference/syntax/alter_table/columns
const alterSegmentsCountedIn = `ALTER TABLE segments ADD COLUMN counted_in Timestamp`

// Schema step 19: a job's features (step 20, a Telegram chat's choice of
// them, is in botstate_statements.go).
// https://ydb.tech/docs/en/yql/reference/syntax/alter_table/columns
const (
	// alterJobsFeatures (step 19): job.Features as a small JSON object
	// (speakers, a summary, the audio's channels, why a summary is
	// missing); NULL for a job made without options or before them.
	alterJobsFeatures = `ALTER TABLE jobs ADD COLUMN features Utf8`
)

// Schema steps 24 and 25: how a job was recognized and what the
// recognizer said it billed for it.
// https://ydb.tech/docs/en/yql/reference/syntax/alter_table/columns
const (
	// alterJobsRecognition (step 24): "sync" or "async"
	// (job.Recognition); NULL until it is known, and for a job that ended
	// before it was kept.
	alterJobsRecognition = `ALTER TABLE jobs ADD COLUMN recognition Utf8`

	// alterJobsBilledSeconds (step 25): what the recognizer said it
	// billed (job.BilledSeconds); NULL when it said nothing, and the bill
	// is reckoned from the segments.
	alterJobsBilledSeconds = `ALTER TABLE jobs ADD COLUMN billed_seconds Int64`
)

// Schema step 27: the price reserved for a job, in millionths of a
// ruble (job.ReservedMicros), against the month's budget; NULL before a
// reservation.
const alterJobsReservedMicros = `ALTER TABLE jobs ADD COLUMN reserved_micros Int64`

// Schema steps 28 and 29: a job's reuse key (job.ReuseKey), NULL when it
// has none, and the index that finds a done job to reuse by it
// (selectReusable).
// https://ydb.tech/docs/en/yql/reference/syntax/alter_table/secondary_index
const (
	alterJobsReuseKey   = `ALTER TABLE jobs ADD COLUMN reuse_key Utf8`
	alterJobsReuseIndex = `ALTER TABLE jobs ADD INDEX jobs_reuse GLOBAL SYNC ON (reuse_key, ended_at)`
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
