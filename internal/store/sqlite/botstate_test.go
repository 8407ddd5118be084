package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/botstate"
	"transcriber/internal/botstate/botstatetest"
	"transcriber/internal/clock"
	"transcriber/internal/errs"
	"transcriber/internal/store/sqlite"
)

// openBotDB opens a fresh database file for the bot state store's tests.
// The store takes the time as an argument; the clock is the job store's.
func openBotDB(t *testing.T) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "bot.db"), clock.NewFake(botstatetest.Base))
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func TestBotStateContract(t *testing.T) {
	botstatetest.Run(t, func(t *testing.T) botstate.Store { return sqlite.NewBotState(openBotDB(t)) })
}

// A closed database is a store that is down: every method that reaches it
// fails as unavailable, and a malformed request never reaches it.
func TestBotStateDownIsUnavailable(t *testing.T) {
	ctx := context.Background()
	db := openBotDB(t)
	st := sqlite.NewBotState(db)
	now := botstatetest.Base
	k := botstate.Key{ChatID: 1, MessageID: 2, Part: "result"}
	require.NoError(t, db.Close())

	_, err := st.Chat(ctx, 1)
	require.Equal(t, errs.Unavailable, errs.KindOf(err), "%v", err)
	_, err = st.UpdateChat(ctx, 1, now, func(*botstate.Chat) {})
	require.Equal(t, errs.Unavailable, errs.KindOf(err), "%v", err)
	_, _, err = st.Begin(ctx, k, "", now, time.Minute)
	require.Equal(t, errs.Unavailable, errs.KindOf(err), "%v", err)
	_, err = st.Schedule(ctx, k, "", now, now)
	require.Equal(t, errs.Unavailable, errs.KindOf(err), "%v", err)
	_, err = st.Finish(ctx, k, botstate.Outcome{State: botstate.Sent}, now)
	require.Equal(t, errs.Unavailable, errs.KindOf(err), "%v", err)
	_, err = st.Get(ctx, k)
	require.Equal(t, errs.Unavailable, errs.KindOf(err), "%v", err)
	_, err = st.ClaimDue(ctx, now, time.Minute, 10)
	require.Equal(t, errs.Unavailable, errs.KindOf(err), "%v", err)
	require.Equal(t, errs.Unavailable, errs.KindOf(st.ForgetChat(ctx, 1)))

	_, _, err = st.Begin(ctx, botstate.Key{ChatID: 1, MessageID: 2}, "", now, time.Minute)
	require.ErrorIs(t, err, botstate.ErrInvalid, "a malformed key never reaches the database")
}
