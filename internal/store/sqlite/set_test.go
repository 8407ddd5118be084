package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/clock/clocktest"
	"transcriber/internal/pipeline/admission"
	"transcriber/internal/speechkit"
	"transcriber/internal/store/sqlite"
)

// OpenSet gives the stores of one file with the counters every instance
// changes spread over rows (other counters one row each), and its Close
// closes the file.
func TestOpenSetSpreadsTheCountersAndCloses(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "set.db")
	clk := clocktest.NewFake(time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC))
	stores, err := sqlite.OpenSet(ctx, path, clk)
	require.NoError(t, err)
	require.True(t, stores.Made())
	w := clk.Now()
	spread := []string{admission.RequestsKey, speechkit.SyncQuotaKey}
	for _, key := range append(spread, "plain") {
		_, ok, err := stores.Counters.Reserve(ctx, key, w, 1, 16)
		require.NoError(t, err)
		require.True(t, ok, key)
	}

	db, err := sqlite.Open(ctx, path, clk) // the rows as they are
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	rows := sqlite.NewCounters(db)
	for _, key := range spread {
		n, err := rows.Used(ctx, key, w)
		require.NoError(t, err)
		require.Zero(t, n, "%s: taken in a shard, not in its single row", key)
	}
	n, err := rows.Used(ctx, "plain", w)
	require.NoError(t, err)
	require.Equal(t, int64(1), n, "a counter no instance shares stays one row")

	require.NoError(t, stores.Close())
	_, err = stores.Tokens.List(ctx)
	require.Error(t, err, "the set's file is closed")
}
