package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"transcriber/internal/clock"
	"transcriber/internal/job"
	"transcriber/internal/job/jobstoretest"
	"transcriber/internal/store/sqlite"
)

func openDB(t testing.TB, clk clock.Clock) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "jobs.db"), clk)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func TestJobStoreContract(t *testing.T) {
	jobstoretest.Run(t, func(t *testing.T, clk clock.Clock) (job.Store, func()) {
		db := openDB(t, clk)
		return sqlite.NewJobStore(db), func() { require.NoError(t, db.Close()) }
	})
}
