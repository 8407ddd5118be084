package ydb

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/clock"
	"transcriber/internal/errs"
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
