package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/clock/clocktest"
	"transcriber/internal/errs"
	"transcriber/internal/outbox"
	"transcriber/internal/outbox/outboxtest"
	"transcriber/internal/store/sqlite"
)

func openOutboxDB(t *testing.T) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "outbox.db"), clocktest.NewFake(outboxtest.Base))
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func TestOutboxContract(t *testing.T) {
	outboxtest.Run(t, func(t *testing.T) outbox.Store { return sqlite.NewOutbox(openOutboxDB(t)) })
}

// A closed database is a store that is down: unavailable, and a malformed
// request never reaches it.
func TestOutboxDownIsUnavailable(t *testing.T) {
	ctx := context.Background()
	db := openOutboxDB(t)
	st := sqlite.NewOutbox(db)
	now := outboxtest.Base
	require.NoError(t, db.Close())
	e := outbox.Entry{Kind: outbox.Telegram, Key: "1/2/result"}
	_, _, err := st.Put(ctx, e, now, now)
	require.Equal(t, errs.Unavailable, errs.KindOf(err), "%v", err)
	_, _, err = st.Begin(ctx, e, now, time.Minute)
	require.Equal(t, errs.Unavailable, errs.KindOf(err), "%v", err)
	_, err = st.Finish(ctx, e.Kind, e.Key, outbox.Outcome{State: outbox.Failed}, now)
	require.Equal(t, errs.Unavailable, errs.KindOf(err), "%v", err)
	_, err = st.Get(ctx, e.Kind, e.Key)
	require.Equal(t, errs.Unavailable, errs.KindOf(err), "%v", err)
	_, err = st.ClaimDue(ctx, e.Kind, now, time.Minute, 1)
	require.Equal(t, errs.Unavailable, errs.KindOf(err), "%v", err)
	_, err = st.InState(ctx, e.Kind, outbox.Pending, now, 1)
	require.Equal(t, errs.Unavailable, errs.KindOf(err), "%v", err)
	_, err = st.Expire(ctx, now, 1)
	require.Equal(t, errs.Unavailable, errs.KindOf(err), "%v", err)
	_, err = st.Get(ctx, e.Kind, "")
	require.ErrorIs(t, err, outbox.ErrInvalid, "a malformed request never reaches the database")
}

// Expire deletes the Telegram entries last written before the cut, as
// YDB's TTL does, and keeps the rest, at most limit a call.
func TestOutboxExpire(t *testing.T) {
	ctx := context.Background()
	st := sqlite.NewOutbox(openOutboxDB(t))
	t0 := outboxtest.Base
	msg := func(i int) outbox.Entry {
		return outbox.Entry{Kind: outbox.Telegram, Key: "1/" + string(rune('0'+i)) + "/reply"}
	}
	for i := range 3 {
		_, _, err := st.Begin(ctx, msg(i), t0, time.Minute)
		require.NoError(t, err)
	}
	_, err := st.Finish(ctx, outbox.Telegram, msg(1).Key, outbox.Outcome{State: outbox.Delivered, SentID: 7}, t0.Add(48*time.Hour))
	require.NoError(t, err)
	_, _, err = st.Put(ctx, outbox.Entry{Kind: outbox.Callback, Key: "j"}, t0, t0.Add(47*time.Hour))
	require.NoError(t, err)
	// A callback goes with its job (the trigger), however old: a stack
	// stopped past the retention still sends a running job's callback.
	_, _, err = st.Put(ctx, outbox.Entry{Kind: outbox.Callback, Key: "old"}, t0, t0)
	require.NoError(t, err)

	cut := t0.Add(24 * time.Hour)
	n, err := st.Expire(ctx, cut, 1)
	require.NoError(t, err)
	require.Equal(t, 1, n, "at most limit")
	n, err = st.Expire(ctx, cut, 10)
	require.NoError(t, err)
	require.Equal(t, 1, n, "the next call takes the rest")
	for _, e := range []outbox.Entry{msg(0), msg(2)} {
		_, err = st.Get(ctx, e.Kind, e.Key)
		require.ErrorIs(t, err, outbox.ErrNotFound, "last written before the cut")
	}
	for _, e := range []outbox.Entry{msg(1), {Kind: outbox.Callback, Key: "j"}, {Kind: outbox.Callback, Key: "old"}} {
		_, err := st.Get(ctx, e.Kind, e.Key)
		require.NoError(t, err, "%s was written after the cut", e.Key)
	}
}
