package ydb

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
