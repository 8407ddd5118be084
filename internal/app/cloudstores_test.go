package app

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"transcriber/internal/errs"
)

func TestCloudStores(t *testing.T) {
	env := envOf
	ctx := context.Background()
	t.Run("YDB is the default and needs its connection string", func(t *testing.T) {
		_, err := CloudStores(ctx, env())
		require.ErrorIs(t, err, ErrNoCloudStore)
		require.Contains(t, errs.MessageOf(err), "YDB_CONNECTION_STRING")
		_, err = CloudStores(ctx, env("STORE", "ydb"))
		require.ErrorIs(t, err, ErrNoCloudStore)
	})
	t.Run("sqlite is for the local stack", func(t *testing.T) {
		_, err := CloudStores(ctx, env("STORE", "sqlite", "YDB_CONNECTION_STRING", "grpc://localhost:2136/local"))
		require.ErrorIs(t, err, ErrSQLiteInCloud)
	})
	t.Run("an unknown store is refused", func(t *testing.T) {
		_, err := CloudStores(ctx, env("STORE", "postgres"))
		require.Equal(t, errs.Invalid, errs.KindOf(err))
	})
}
