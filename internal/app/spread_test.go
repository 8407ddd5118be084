package app_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/app"
	"transcriber/internal/clock"
	"transcriber/internal/job"
	"transcriber/internal/quota"
	"transcriber/internal/speechkit"
	"transcriber/internal/store"
	"transcriber/internal/store/sqlite"
)

// The counters every instance changes are spread over rows: a job's
// submission takes its request in one of the shards, never in the single
// row, and so does a synchronous request taken through the App's
// counters; the App reads each as the sum of its rows.
func TestInstallationCountersAreSpreadOverRows(t *testing.T) {
	st := newStack(t)
	j, ev := st.upload(fixtures(t)["voice.ogg"])
	st.ingest(ev)
	require.Equal(t, job.Done, st.job(j.ID).State)

	now := st.clk.Now().UTC()
	for key, window := range map[string]time.Time{
		speechkit.SyncQuotaKey: now.Truncate(time.Second),
	} {
		_, ok, err := st.app.Counters.Reserve(st.ctx, key, window, 1, 20)
		require.NoError(t, err)
		require.True(t, ok, key)
	}

	// The store as it is, without the spreading: the same file, opened again.
	db, err := sqlite.Open(st.ctx, st.dbPath, st.clk)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	rows := sqlite.NewCounters(db)
	for key, window := range map[string]time.Time{
		"speechkit_requests":   now.Truncate(10 * time.Minute),
		speechkit.SyncQuotaKey: now.Truncate(time.Second),
	} {
		single, err := rows.Used(st.ctx, key, window)
		require.NoError(t, err)
		require.Zero(t, single, "%s: the single row is not written", key)
		var shards int64
		for i := 0; i < quota.DefaultShards; i++ {
			n, err := rows.Used(st.ctx, fmt.Sprintf("%s#%d", key, i), window)
			require.NoError(t, err)
			shards += n
		}
		require.Equal(t, int64(1), shards, "%s: one taken, in a shard", key)
		total, err := st.app.Counters.Used(st.ctx, key, window)
		require.NoError(t, err)
		require.Equal(t, int64(1), total, "%s: read as the sum of its rows", key)
	}
}

// Stores put together by hand would give the App counters nobody spread:
// New takes only a set made by store.NewSet (the backends' OpenSet).
func TestNewRefusesStoresNotMadeByNewSet(t *testing.T) {
	ctx := context.Background()
	stores, err := sqlite.OpenSet(ctx, filepath.Join(t.TempDir(), "j.db"), clock.System())
	require.NoError(t, err)
	t.Cleanup(func() { _ = stores.Close() })
	byHand := store.Set{Jobs: stores.Jobs, Tokens: stores.Tokens, Counters: stores.Counters}
	_, err = app.New(app.Config{}, app.Options{Stores: byHand})
	require.ErrorContains(t, err, "store.NewSet")
}
