package speechkit_test

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/clock"
	"transcriber/internal/quota"
	"transcriber/internal/racetest"
	"transcriber/internal/speechkit"
	"transcriber/internal/store/sqlite"
)

func counters(t *testing.T) quota.Counters {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "c.db"), clock.System())
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	return sqlite.NewCounters(db)
}

// Twenty places a second, counted in the shared counters under the UTC
// second; the twenty-first waits for the next second, which starts empty.
func TestTakeSyncPlaceKeepsTwentyASecond(t *testing.T) {
	ctx := context.Background()
	c := counters(t)
	second := time.Date(2026, 12, 1, 12, 0, 7, 0, time.UTC)
	for i := 0; i < speechkit.SyncRequestsPerSecond; i++ {
		// anywhere inside the second, in any zone
		at := second.Add(time.Duration(i) * 49 * time.Millisecond).In(time.FixedZone("MSK", 3*3600))
		ok, err := speechkit.TakeSyncPlace(ctx, c, at)
		require.NoError(t, err)
		require.True(t, ok, "place %d", i+1)
	}
	ok, err := speechkit.TakeSyncPlace(ctx, c, second.Add(999*time.Millisecond))
	require.NoError(t, err)
	require.False(t, ok, "the twenty-first in the second")
	used, err := c.Used(ctx, speechkit.SyncQuotaKey, second)
	require.NoError(t, err)
	require.Equal(t, int64(20), used, "a refused call takes nothing")

	ok, err = speechkit.TakeSyncPlace(ctx, c, second.Add(time.Second))
	require.NoError(t, err)
	require.True(t, ok, "the next second starts empty")
	used, err = c.Used(ctx, speechkit.SyncQuotaKey, second.Add(time.Second))
	require.NoError(t, err)
	require.Equal(t, int64(1), used)
}

// Many instances at once never take more than twenty places of a second
// between them.
func TestTakeSyncPlaceUnderARace(t *testing.T) {
	ctx := context.Background()
	c := counters(t)
	now := time.Date(2026, 12, 1, 12, 0, 7, 500_000_000, time.UTC)
	var taken, refused atomic.Int32
	racetest.Run(50, func(int) {
		ok, err := speechkit.TakeSyncPlace(ctx, c, now)
		if err != nil {
			t.Error(err)
			return
		}
		if ok {
			taken.Add(1)
		} else {
			refused.Add(1)
		}
	})
	require.Equal(t, int32(speechkit.SyncRequestsPerSecond), taken.Load())
	require.Equal(t, int32(30), refused.Load())
}

// Without counters nothing is paced.
func TestTakeSyncPlaceWithoutCounters(t *testing.T) {
	for i := 0; i < 100; i++ {
		ok, err := speechkit.TakeSyncPlace(context.Background(), nil, time.Unix(0, 0))
		require.NoError(t, err)
		require.True(t, ok)
	}
}

// A store that fails says so, and gives no place.
func TestTakeSyncPlaceWhenTheStoreFails(t *testing.T) {
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "c.db"), clock.System())
	require.NoError(t, err)
	c := sqlite.NewCounters(db)
	require.NoError(t, db.Close())
	ok, err := speechkit.TakeSyncPlace(context.Background(), c, time.Unix(0, 0))
	require.Error(t, err)
	require.False(t, ok)
}
