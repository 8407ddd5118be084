package sqlite

import "sync/atomic"

// LoseAnswers loses the answers of db's next n commits: each of those
// transactions runs again after its commit, as YDB's SDK runs an
// idempotent transaction whose commit's answer it did not get (DB.lose).
// It returns how many answers were lost so far.
func LoseAnswers(db *DB, n int) func() int {
	var left, lost atomic.Int64
	left.Store(int64(n))
	db.lose = func() bool {
		if left.Add(-1) < 0 {
			return false
		}
		lost.Add(1)
		return true
	}
	return func() int { return int(lost.Load()) }
}
