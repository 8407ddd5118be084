package sqlite_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/clock/clocktest"
	"transcriber/internal/errs"
	"transcriber/internal/quota"
	"transcriber/internal/quota/quotatest"
	"transcriber/internal/racetest"
	"transcriber/internal/store/sqlite"
)

func TestCountersContract(t *testing.T) {
	quotatest.Run(t, func(t *testing.T) quota.Counters {
		return sqlite.NewCounters(openDB(t, clocktest.NewFake(quotatest.Window)))
	})
}

// A closed database is a store that is down: every call is unavailable.
func TestCountersDownIsUnavailable(t *testing.T) {
	ctx := context.Background()
	db := openDB(t, clocktest.NewFake(quotatest.Window))
	c := sqlite.NewCounters(db)
	require.NoError(t, db.Close())

	_, _, err := c.Reserve(ctx, "k", quotatest.Window, 1, 1)
	require.Equal(t, errs.Unavailable, errs.KindOf(err))
	require.Equal(t, errs.Unavailable, errs.KindOf(c.Release(ctx, "k", quotatest.Window, 1)))
	_, err = c.Used(ctx, "k", quotatest.Window)
	require.Equal(t, errs.Unavailable, errs.KindOf(err))
	_, err = c.ExpireCounters(ctx, quotatest.Window.Add(time.Hour))
	require.Equal(t, errs.Unavailable, errs.KindOf(err))
}

// A counter spread over rows (quota.Spread) in this store: racers against
// one limit, exactly limit of them win, and the rows sum to it.
func TestSpreadCountersKeepTheLimit(t *testing.T) {
	ctx := context.Background()
	c := quota.Spread(sqlite.NewCounters(openDB(t, clocktest.NewFake(quotatest.Window))), quota.DefaultShards, []string{"hot"})
	for round := 0; round < 5; round++ {
		w := quotatest.Window.Add(time.Duration(round) * time.Hour)
		var won atomic.Int64
		racetest.Run(quotatest.Racers, func(int) {
			_, ok, err := c.Reserve(ctx, "hot", w, 1, 11)
			if err == nil && ok {
				won.Add(1)
			}
		})
		require.Equal(t, int64(11), won.Load(), "round %d", round)
		used, err := c.Used(ctx, "hot", w)
		require.NoError(t, err)
		require.Equal(t, int64(11), used, "round %d", round)
	}
}
