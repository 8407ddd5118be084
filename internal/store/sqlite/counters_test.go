package sqlite_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/clock"
	"transcriber/internal/errs"
	"transcriber/internal/quota"
	"transcriber/internal/quota/quotatest"
	"transcriber/internal/store/sqlite"
)

func TestCountersContract(t *testing.T) {
	quotatest.Run(t, func(t *testing.T) quota.Counters {
		return sqlite.NewCounters(openDB(t, clock.NewFake(quotatest.Window)))
	})
}

// A closed database is a store that is down: every call is unavailable.
func TestCountersDownIsUnavailable(t *testing.T) {
	ctx := context.Background()
	db := openDB(t, clock.NewFake(quotatest.Window))
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
