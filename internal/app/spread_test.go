package app_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/app"
	"transcriber/internal/job"
	"transcriber/internal/quota"
	"transcriber/internal/speechkit"
	"transcriber/internal/store/sqlite"
)

// The counters every instance changes are spread over rows: a job's
// submission takes its request in one of the shards, never in the single
// row, and so does a place in flight or a synchronous request taken
// through the App's counters; the App reads each as the sum of its rows.
func TestInstallationCountersAreSpreadOverRows(t *testing.T) {
	var db *sqlite.DB
	st := newStackWith(t, func(_ *app.Options, d *sqlite.DB) { db = d })
	j, ev := st.upload(fixtures(t)["voice.ogg"])
	st.ingest(ev)
	require.Equal(t, job.Done, st.job(j.ID).State)

	now := st.clk.Now().UTC()
	for key, window := range map[string]time.Time{
		"recognitions_in_flight": now.Truncate(30 * time.Minute),
		speechkit.SyncQuotaKey:   now.Truncate(time.Second),
	} {
		_, ok, err := st.app.Counters.Reserve(st.ctx, key, window, 1, 20)
		require.NoError(t, err)
		require.True(t, ok, key)
	}

	rows := sqlite.NewCounters(db) // the store as it is, without the spreading
	for key, window := range map[string]time.Time{
		"speechkit_requests":     now.Truncate(10 * time.Minute),
		"recognitions_in_flight": now.Truncate(30 * time.Minute),
		speechkit.SyncQuotaKey:   now.Truncate(time.Second),
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
