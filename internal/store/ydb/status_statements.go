package ydb

// The reads of the owner's status (package status), one named constant
// each, under the conventions statements.go states: each is one range of
// an index the tables already have, sorted by the index's whole key in
// one direction, so YDB reads at most $limit index rows
// (https://ydb.tech/docs/en/dev/secondary-indexes; TestIndexReadsFollowTheIndex
// checks it). statements_test.go reads this file with the other
// statement files and checks them all against the schema.
// https://ydb.tech/docs/en/yql/reference/syntax/select/secondary_index
const (
	// selectStateEntries is a state's range of jobs_due from $since, in the
	// index's order: id and next_run_at are both in the index's key, so
	// no table row is read.
	selectStateEntries = `DECLARE $state AS Utf8;
DECLARE $since AS Timestamp;
DECLARE $limit AS Uint64;
SELECT id, next_run_at
FROM jobs VIEW jobs_due
WHERE state = $state AND next_run_at >= $since
ORDER BY state, next_run_at, id
LIMIT $limit`

	// selectLatestInState is the same range backwards (the index read in
	// one direction), with each job's row.
	selectLatestInState = `DECLARE $state AS Utf8;
DECLARE $since AS Timestamp;
DECLARE $limit AS Uint64;
SELECT ` + jobColumns + `
FROM jobs VIEW jobs_due
WHERE state = $state AND next_run_at >= $since
ORDER BY state DESC, next_run_at DESC, id DESC
LIMIT $limit`
)
