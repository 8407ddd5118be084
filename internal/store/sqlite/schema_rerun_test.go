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

// A migrate that applied the last step's DDL but lost its record (here the
// record is deleted by hand: user_version one lower) runs it again without
// failing, keeps what the step made, and records it.
func TestMigrateRerunsTheLastStepWhoseRecordWasLost(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "rerun.db")
	w := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	db, err := Open(ctx, path, clock.NewFake(w))
	require.NoError(t, err)
	_, _, err = NewCounters(db).Reserve(ctx, "k", w, 3, 0)
	require.NoError(t, err)
	_, err = db.sql.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", SchemaVersion()-1))
	require.NoError(t, err)
	require.NoError(t, db.Close())

	db, err = Open(ctx, path, clock.NewFake(w))
	require.NoError(t, err, "the last step runs again on a database that has it")
	defer db.Close()
	var version int
	require.NoError(t, db.sql.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version))
	require.Equal(t, SchemaVersion(), version, "and is recorded")
	n, err := NewCounters(db).Used(ctx, "k", w)
	require.NoError(t, err)
	require.Equal(t, int64(3), n, "what the step made is kept")
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
