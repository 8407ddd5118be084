package ydb

// Every YQL statement is a constant in a *statements.go file, which
// statements_test.go checks against the schema: every parameter DECLAREd
// with the type bound, the column's type where compared or written
// (Optional<T> only where NULL may be), rows written from a
// List<Struct<…>> through AS_TABLE. Tables are named without a path (DB.text
// adds a TablePathPrefix). Syntax: https://ydb.tech/docs/en/yql/reference/syntax/.
// Only key columns are NOT NULL: older YDB releases accept no more
// (https://ydb.tech/docs/en/concepts/datamodel/table).

// Tables of schema step 1 (schema.go); a global index's key is its columns
// followed by the table's key.
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
	// so they expire with it (YDB has no cascade).
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

// Schema bookkeeping; row ttlStep records the TTLs.
const (
	selectSchemaSteps = `SELECT step, name FROM schema_steps ORDER BY step`

	insertSchemaStep = stepDecl + `INSERT` + stepValues
	upsertSchemaTTL  = stepDecl + `UPSERT` + stepValues

	stepDecl = `DECLARE $step AS Int32;
DECLARE $name AS Utf8;
DECLARE $applied_at AS Timestamp;
`
	stepValues = ` INTO schema_steps (step, name, applied_at) VALUES ($step, $name, $applied_at)`
)

// jobsStruct is a jobs row as a parameter.
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

const jobColumns = `id, state, source, owner_id, language, filename, size_bytes, content_type,
	duration_ms, tg_chat_id, tg_message_id, attempts, next_run_at, claim_id, claim_until,
	error_code, error_message, idempotency_key, deleted_at, upload_by, ended_at, created_at, updated_at,
	charged_to, reserved_seconds, reserved_day, priority, features, recognition, billed_seconds, reserved_micros, reuse_key`

// Jobs.
const (
	// insertJobs fails on an id already there.
	insertJobs = `DECLARE $jobs AS ` + jobsStruct + `;
INSERT INTO jobs (` + jobColumns + `)
SELECT ` + jobColumns + ` FROM AS_TABLE($jobs)`

	upsertJobs = `DECLARE $jobs AS ` + jobsStruct + `;
UPSERT INTO jobs (` + jobColumns + `)
SELECT ` + jobColumns + ` FROM AS_TABLE($jobs)`

	selectJob = `DECLARE $id AS Utf8;
SELECT ` + jobColumns + `
FROM jobs WHERE id = $id`

	// selectDueJobs is one live state's range of jobs_due up to $now,
	// sorted by the index's whole key in one direction so YDB reads only
	// $limit index rows (https://ydb.tech/docs/en/dev/secondary-indexes).
	// A claim moves next_run_at to its expiry, so held jobs are not in the
	// range; a filter on claim_until, not in the index, would read it all.
	selectDueJobs = `DECLARE $state AS Utf8;
DECLARE $now AS Timestamp;
DECLARE $limit AS Uint64;
SELECT ` + jobColumns + `
FROM jobs VIEW jobs_due
WHERE state = $state AND next_run_at <= $now
ORDER BY state, next_run_at, id
LIMIT $limit`

	// selectNextDue reads one index row: a state's earliest next_run_at.
	selectNextDue = `DECLARE $state AS Utf8;
SELECT next_run_at
FROM jobs VIEW jobs_due
WHERE state = $state
ORDER BY state, next_run_at, id
LIMIT 1`

	// listJobs is an owner's first page, newest first: jobs_owner
	// backwards, $limit rows read.
	listJobs = `DECLARE $owner_id AS Utf8;
DECLARE $limit AS Uint64;
SELECT ` + jobColumns + `
FROM jobs VIEW jobs_owner
WHERE owner_id = $owner_id` + listOrder

	listOrder = `
ORDER BY owner_id DESC, id DESC
LIMIT $limit`

	// selectUnfinished: a payer's jobs with ended_at NULL, which sorts
	// first in jobs_unfinished; $limit index rows read.
	selectUnfinished = `DECLARE $charged_to AS Utf8;
DECLARE $limit AS Uint64;
SELECT ` + jobColumns + `
FROM jobs VIEW jobs_unfinished
WHERE charged_to = $charged_to AND ended_at IS NULL
ORDER BY charged_to, ended_at, id
LIMIT $limit`

	// selectReusable: job.Store.Reusable.
	selectReusable = `DECLARE $reuse_key AS Utf8;
DECLARE $ended_after AS Timestamp;
DECLARE $done AS Utf8;
SELECT ` + jobColumns + `
FROM jobs VIEW jobs_reuse
WHERE reuse_key = $reuse_key AND ended_at > $ended_after AND state = $done AND deleted_at IS NULL
ORDER BY reuse_key DESC, ended_at DESC
LIMIT 1`

	// listJobsAfter is a following page, older than the cursor.
	listJobsAfter = `DECLARE $owner_id AS Utf8;
DECLARE $id AS Utf8;
DECLARE $limit AS Uint64;
SELECT ` + jobColumns + `
FROM jobs VIEW jobs_owner
WHERE owner_id = $owner_id AND id < $id` + listOrder
)

// The narrow writes of Claim, Release and Renew: only the columns their
// rule changes (narrow.go lists them; narrow_test.go checks), so only
// jobs_due moves ("all indexes that include the fields being updated",
// https://yandex.cloud/en/docs/ydb/faq).
const (
	updateClaim = `DECLARE $id AS Utf8;
DECLARE $claim_id AS Optional<Utf8>;
DECLARE $claim_until AS Optional<Timestamp>;
DECLARE $next_run_at AS Timestamp;
DECLARE $attempts AS Int32;
DECLARE $updated_at AS Timestamp;
UPDATE jobs SET claim_id = $claim_id, claim_until = $claim_until, next_run_at = $next_run_at,
	attempts = $attempts, updated_at = $updated_at
WHERE id = $id`

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

	updateRenew = `DECLARE $id AS Utf8;
DECLARE $claim_until AS Optional<Timestamp>;
DECLARE $next_run_at AS Timestamp;
UPDATE jobs SET claim_until = $claim_until, next_run_at = $next_run_at
WHERE id = $id`
)

// Segments.
const (
	selectSegments = `DECLARE $job_ids AS List<Utf8>;
SELECT job_id, seq, start_ms, duration_ms, audio_key, container, operation_id, done
FROM segments WHERE job_id IN $job_ids
ORDER BY job_id, seq`

	deleteSegments = `DECLARE $job_id AS Utf8;
DELETE FROM segments WHERE job_id = $job_id`

	upsertSegments = `DECLARE $segments AS List<Struct<
	job_id: Utf8, seq: Int32, start_ms: Int64, duration_ms: Int64,
	audio_key: Utf8, container: Utf8, operation_id: Utf8, done: Bool, ended_at: Optional<Timestamp>>>;
UPSERT INTO segments (job_id, seq, start_ms, duration_ms, audio_key, container, operation_id, done, ended_at)
SELECT job_id, seq, start_ms, duration_ms, audio_key, container, operation_id, done, ended_at FROM AS_TABLE($segments)`
)

// The keys that make CreateForMessage and CreateOnce return the job made
// before. An upsert points a key whose job expired at a new job; a delete
// frees it from its deleted job.
const (
	selectMessageJob = messageDecl + `SELECT job_id FROM telegram_messages WHERE ` + messageWhere
	insertMessageJob = messageDecl + jobDecl + `INSERT` + messageValues
	upsertMessageJob = messageDecl + jobDecl + `UPSERT` + messageValues
	deleteMessageJob = messageDecl + `DECLARE $job_id AS Utf8;
DELETE FROM telegram_messages WHERE ` + messageWhere + ` AND job_id = $job_id`

	messageDecl = `DECLARE $chat_id AS Int64;
DECLARE $message_id AS Int64;
`
	messageWhere  = `chat_id = $chat_id AND message_id = $message_id`
	messageValues = ` INTO telegram_messages (chat_id, message_id, job_id, created_at) VALUES ($chat_id, $message_id, $job_id, $created_at)`

	selectKeyJob = keyDecl + `SELECT job_id FROM idempotency_keys WHERE ` + keyWhere
	insertKeyJob = keyDecl + jobDecl + `INSERT` + keyValues
	upsertKeyJob = keyDecl + jobDecl + `UPSERT` + keyValues
	deleteKeyJob = keyDecl + `DECLARE $job_id AS Utf8;
DELETE FROM idempotency_keys WHERE ` + keyWhere + ` AND job_id = $job_id`

	keyDecl = `DECLARE $owner_id AS Utf8;
DECLARE $idempotency_key AS Utf8;
`
	keyWhere  = `owner_id = $owner_id AND idempotency_key = $idempotency_key`
	keyValues = ` INTO idempotency_keys (owner_id, idempotency_key, job_id, created_at) VALUES ($owner_id, $idempotency_key, $job_id, $created_at)`

	// jobDecl declares the key row's job and time.
	jobDecl = `DECLARE $job_id AS Utf8;
DECLARE $created_at AS Timestamp;
`
)

// API tokens.
const tokenColumns = `hash, id, name, created_at, revoked_at, callback_secret`

const (
	insertToken = `DECLARE $hash AS Utf8;
DECLARE $id AS Utf8;
DECLARE $name AS Utf8;
DECLARE $created_at AS Timestamp;
DECLARE $revoked_at AS Optional<Timestamp>;
DECLARE $callback_secret AS Utf8;
INSERT INTO api_tokens (` + tokenColumns + `) VALUES ($hash, $id, $name, $created_at, $revoked_at, $callback_secret)`

	selectTokenByHash = `DECLARE $hash AS Utf8;
SELECT ` + tokenColumns + ` FROM api_tokens WHERE hash = $hash`

	selectTokenByID = `DECLARE $id AS Utf8;
SELECT ` + tokenColumns + ` FROM api_tokens VIEW api_tokens_id WHERE id = $id`

	// selectTokens reads the whole table: tokens are made by hand, few.
	selectTokens = `SELECT ` + tokenColumns + ` FROM api_tokens ORDER BY id`

	revokeToken = `DECLARE $hash AS Utf8;
DECLARE $revoked_at AS Timestamp;
UPDATE api_tokens SET revoked_at = $revoked_at WHERE hash = $hash`
)

// The status's reads: each one range of an index sorted by its whole key
// in one direction, so YDB reads at most $limit index rows
// (TestIndexReadsFollowTheIndex).
const (
	// selectStateEntries reads the index alone.
	selectStateEntries = `DECLARE $state AS Utf8;
DECLARE $since AS Timestamp;
DECLARE $limit AS Uint64;
SELECT id, next_run_at
FROM jobs VIEW jobs_due
WHERE state = $state AND next_run_at >= $since
ORDER BY state, next_run_at, id
LIMIT $limit`

	// selectLatestInState is the same range backwards, with the rows.
	selectLatestInState = `DECLARE $state AS Utf8;
DECLARE $since AS Timestamp;
DECLARE $limit AS Uint64;
SELECT ` + jobColumns + `
FROM jobs VIEW jobs_due
WHERE state = $state AND next_run_at >= $since
ORDER BY state DESC, next_run_at DESC, id DESC
LIMIT $limit`
)

// The usage counters' table and statements (quota.Counters).

// createCounters: one row per counter and window, expiring by the table's
// TTL at expires_at (the window's start plus quota.Retention). ops are the
// ids of the counter's last changes (quota.EncodeOps), so a change run
// twice for one call counts once.
// https://ydb.tech/docs/en/concepts/ttl
const createCounters = `CREATE TABLE counters (
	counter      Utf8 NOT NULL,
	window_start Timestamp NOT NULL,
	used         Int64,
	expires_at   Timestamp,
	ops          Utf8,
	PRIMARY KEY (counter, window_start)
)
WITH (TTL = Interval("PT0S") ON expires_at)`

const (
	selectCounter = `DECLARE $counter AS Utf8;
DECLARE $window_start AS Timestamp;
SELECT used, ops FROM counters WHERE counter = $counter AND window_start = $window_start`

	// selectCounters reads several keys of one window, each a point read
	// (https://ydb.tech/docs/en/faq/yql, "How do I select table rows by a
	// list of keys?"); a key with no row is absent.
	selectCounters = `DECLARE $counters AS List<Utf8>;
DECLARE $window_start AS Timestamp;
SELECT counter, used FROM counters WHERE counter IN $counters AND window_start = $window_start`

	upsertCounter = `DECLARE $counter AS Utf8;
DECLARE $window_start AS Timestamp;
DECLARE $used AS Int64;
DECLARE $expires_at AS Timestamp;
DECLARE $ops AS Utf8;
UPSERT INTO counters (counter, window_start, used, expires_at, ops) VALUES ($counter, $window_start, $used, $expires_at, $ops)`
)
