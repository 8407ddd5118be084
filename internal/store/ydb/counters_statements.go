package ydb

// The usage counters' table and statements (quota.Counters), checked with
// the rest by statements_test.go.

// createCounters (step 12): one row per counter and window. A row expires
// by the table's TTL at expires_at, which the store writes as the window's
// start plus quota.Retention.
// https://ydb.tech/docs/en/yql/reference/syntax/create_table/with
// https://ydb.tech/docs/en/concepts/ttl
const createCounters = `CREATE TABLE counters (
	counter      Utf8 NOT NULL,
	window_start Timestamp NOT NULL,
	used         Int64,
	expires_at   Timestamp,
	PRIMARY KEY (counter, window_start)
)
WITH (TTL = Interval("PT0S") ON expires_at)`

// alterCountersOps (step 26): the ids of a counter's last changes
// (quota.Row.Ops, as quota.EncodeOps writes them), so a change whose
// transaction runs twice for one call counts once; NULL in a row written
// before it, read as none.
// https://ydb.tech/docs/en/yql/reference/syntax/alter_table/columns
const alterCountersOps = `ALTER TABLE counters ADD COLUMN ops Utf8`

const (
	// selectCounter reads one counter by its key.
	// https://ydb.tech/docs/en/yql/reference/syntax/select/
	selectCounter = `DECLARE $counter AS Utf8;
DECLARE $window_start AS Timestamp;
SELECT used, ops FROM counters WHERE counter = $counter AND window_start = $window_start`

	// selectCounters reads several counters of one window in one
	// statement: each key a point read of the table's key, the keys given
	// as a list (https://ydb.tech/docs/en/faq/yql, "How do I select table
	// rows by a list of keys?"). A key with no row is absent from the
	// result.
	selectCounters = `DECLARE $counters AS List<Utf8>;
DECLARE $window_start AS Timestamp;
SELECT counter, used FROM counters WHERE counter IN $counters AND window_start = $window_start`

	// upsertCounter writes a counter read earlier in the same transaction.
	// https://ydb.tech/docs/en/yql/reference/syntax/upsert_into
	upsertCounter = `DECLARE $counter AS Utf8;
DECLARE $window_start AS Timestamp;
DECLARE $used AS Int64;
DECLARE $expires_at AS Timestamp;
DECLARE $ops AS Utf8;
UPSERT INTO counters (counter, window_start, used, expires_at, ops) VALUES ($counter, $window_start, $used, $expires_at, $ops)`
)
