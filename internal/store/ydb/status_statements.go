package ydb

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
