package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/botstate"
	"transcriber/internal/botstate/botstatetest"
	"transcriber/internal/clock/clocktest"
	"transcriber/internal/errs"
	"transcriber/internal/outbox"
	"transcriber/internal/store/sqlite"
)

// openBotDB opens a fresh database file for the bot state store's tests.
// The store takes the time as an argument; the clock is the job store's.
func openBotDB(t *testing.T) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "bot.db"), clocktest.NewFake(botstatetest.Base))
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func TestBotStateContract(t *testing.T) {
	botstatetest.Run(t, func(t *testing.T) (botstate.Store, outbox.Store) {
		db := openBotDB(t)
		return sqlite.NewBotState(db), sqlite.NewOutbox(db)
	})
}

// A closed database is a store that is down: every method that reaches it
// fails as unavailable, and a malformed request never reaches it.
func TestBotStateDownIsUnavailable(t *testing.T) {
	ctx := context.Background()
	db := openBotDB(t)
	st := sqlite.NewBotState(db)
	now := botstatetest.Base
	require.NoError(t, db.Close())

	_, err := st.Chat(ctx, 1)
	require.Equal(t, errs.Unavailable, errs.KindOf(err), "%v", err)
	_, err = st.UpdateChat(ctx, 1, now, func(*botstate.Chat) {})
	require.Equal(t, errs.Unavailable, errs.KindOf(err), "%v", err)
	require.Equal(t, errs.Unavailable, errs.KindOf(st.ForgetChat(ctx, 1)))

	_, err = st.UpdateChat(ctx, 1, time.Time{}, func(*botstate.Chat) {})
	require.ErrorIs(t, err, botstate.ErrInvalid, "a malformed request never reaches the database")
}
