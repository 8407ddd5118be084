package ydb

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/clock"
	"transcriber/internal/errs"
	"transcriber/internal/pipeline/admission"
)

func TestOpen(t *testing.T) {
	t.Run("no connection string is invalid", func(t *testing.T) {
		_, err := Open(context.Background(), "", clock.System())
		require.Equal(t, errs.Invalid, errs.KindOf(err))
	})
	t.Run("a database nobody serves is unavailable", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err := Open(ctx, "grpc://127.0.0.1:1/local", clock.System())
		require.Error(t, err)
		require.Equal(t, errs.Unavailable, errs.KindOf(err), "%v", err)
	})
}

func TestOpenSet(t *testing.T) {
	t.Run("no connection string is invalid", func(t *testing.T) {
		_, err := OpenSet(context.Background(), "", clock.System())
		require.Equal(t, errs.Invalid, errs.KindOf(err))
	})
	t.Run("the counters every instance changes are spread", func(t *testing.T) {
		db := testDB(t, clock.System())
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		stores, err := OpenSet(ctx, os.Getenv("YDB_CONNECTION_STRING"), clock.System(), WithDirectory(db.dir))
		require.NoError(t, err)
		defer func() { require.NoError(t, stores.Close()) }()
		w := clock.System().Now().UTC().Truncate(time.Hour)
		_, ok, err := stores.Counters.Reserve(ctx, admission.RequestsKey, w, 1, 16)
		require.NoError(t, err)
		require.True(t, ok)
		n, err := NewCounters(db).Used(ctx, admission.RequestsKey, w)
		require.NoError(t, err)
		require.Zero(t, n, "taken in a shard, not in the single row")
		total, err := stores.Counters.Used(ctx, admission.RequestsKey, w)
		require.NoError(t, err)
		require.Equal(t, int64(1), total)
	})
}
