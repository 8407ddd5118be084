package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/callback"
	"transcriber/internal/callback/callbacktest"
	"transcriber/internal/clock"
	"transcriber/internal/errs"
	"transcriber/internal/store/sqlite"
)

func openCallbackDB(t *testing.T) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "callbacks.db"), clock.NewFake(callbacktest.Base))
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func TestCallbackContract(t *testing.T) {
	callbacktest.Run(t, func(t *testing.T) callback.Store { return sqlite.NewCallbacks(openCallbackDB(t)) })
}

// A closed database is a store that is down: unavailable, and a malformed
// request never reaches it.
func TestCallbacksDownIsUnavailable(t *testing.T) {
	ctx := context.Background()
	db := openCallbackDB(t)
	st := sqlite.NewCallbacks(db)
	now := callbacktest.Base
	require.NoError(t, db.Close())
	d := callback.Delivery{JobID: "j", URL: "https://x.example.com/", TokenHash: "h", WebhookID: "msg_j"}
	_, _, err := st.Register(ctx, d, now, now)
	require.Equal(t, errs.Unavailable, errs.KindOf(err), "%v", err)
	_, _, err = st.Begin(ctx, "j", now, time.Minute)
	require.Equal(t, errs.Unavailable, errs.KindOf(err), "%v", err)
	_, err = st.Finish(ctx, "j", callback.Outcome{State: callback.Failed}, now)
	require.Equal(t, errs.Unavailable, errs.KindOf(err), "%v", err)
	_, err = st.Get(ctx, "j")
	require.Equal(t, errs.Unavailable, errs.KindOf(err), "%v", err)
	_, err = st.ClaimDue(ctx, now, time.Minute, 1)
	require.Equal(t, errs.Unavailable, errs.KindOf(err), "%v", err)
	_, err = st.Get(ctx, "")
	require.ErrorIs(t, err, callback.ErrInvalid, "a malformed request never reaches the database")
}
