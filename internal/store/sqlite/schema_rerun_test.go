package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/clock"
)

// A migrate that applied a step's DDL but lost its record (here the
// record is deleted by hand: user_version one lower) runs it again without
// failing, keeps what the step made, and records it: step 9, the last
// step that only creates (an ALTER TABLE step cannot run again, see
// schema.go), met as the last step of a program that knew nine. The
// program that knows the steps after it then applies them to that
// database.
func TestMigrateRerunsTheLastStepWhoseRecordWasLost(t *testing.T) {
	all := steps
	t.Cleanup(func() { steps = all })
	steps = all[:9]
	require.NotContains(t, steps[8], "ALTER TABLE")

	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "rerun.db")
	w := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	db, err := Open(ctx, path, clock.NewFake(w))
	require.NoError(t, err)
	// A counter as the code of step 9's time wrote it (the counters of
	// today read a column a later step adds).
	_, err = db.sql.ExecContext(ctx, `INSERT INTO counters (counter, window_start, used, expires_at) VALUES (?, ?, ?, ?)`,
		"k", formatTime(w), 3, formatTime(w.Add(time.Hour)))
	require.NoError(t, err)
	_, err = db.sql.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", SchemaVersion()-1))
	require.NoError(t, err)
	require.NoError(t, db.Close())

	db, err = Open(ctx, path, clock.NewFake(w))
	require.NoError(t, err, "the last step runs again on a database that has it")
	var version int
	require.NoError(t, db.sql.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version))
	require.Equal(t, SchemaVersion(), version, "and is recorded")
	var n int64
	require.NoError(t, db.sql.QueryRowContext(ctx, `SELECT used FROM counters WHERE counter = 'k'`).Scan(&n))
	require.Equal(t, int64(3), n, "what the step made is kept")
	require.NoError(t, db.Close())

	steps = all
	db, err = Open(ctx, path, clock.NewFake(w))
	require.NoError(t, err, "the later steps apply to that database")
	defer db.Close()
	require.NoError(t, db.sql.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version))
	require.Equal(t, len(all), version)
	n, err = NewCounters(db).Used(ctx, "k", w)
	require.NoError(t, err)
	require.Equal(t, int64(3), n, "the counter is read by today's code")
}

// Every step that only creates tables and indexes can run again on a
// database that has it: each CREATE says IF NOT EXISTS.
func TestCreateStepsRunAgain(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "again.db"), clock.System())
	require.NoError(t, err)
	defer db.Close()
	creates := 0
	for i, step := range steps {
		if strings.Contains(step, "ALTER TABLE") || strings.Contains(step, "UPDATE ") {
			continue
		}
		creates++
		_, err := db.sql.ExecContext(ctx, step)
		require.NoError(t, err, "step %d", i+1)
	}
	require.Equal(t, 5, creates, "steps 1, 2, 5, 7 and 9 only create")
	for i, step := range steps {
		for _, stmt := range strings.Split(step, ";") {
			stmt = strings.TrimSpace(stmt)
			if strings.HasPrefix(stmt, "CREATE") {
				require.Contains(t, stmt, "IF NOT EXISTS", "step %d: %.50s", i+1, stmt)
			}
		}
	}
}
