// Package botstatetest is the contract every botstate.Store must keep.
//
// Run it from an implementation's tests:
//
//	func TestBotStateContract(t *testing.T) {
//		botstatetest.Run(t, func(t *testing.T) (botstate.Store, outbox.Store) { … })
//	}
//
// Each test opens a fresh, empty store; the suite moves the time by hand
// from Base. Its race, many goroutines updating one chat, must lose no
// update. Run it with -race.
package botstatetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/botstate"
	"transcriber/internal/outbox"
)

// Opener opens a fresh, empty store, and the outbox of its database: nil
// leaves out the check that ForgetChat removes the chat's messages.
type Opener func(t *testing.T) (botstate.Store, outbox.Store)

// Base is the suite's first moment: UTC, whole milliseconds (the precision
// the stores keep), so what a store returns equals what the suite expects.
var Base = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// Racers is how many goroutines the race tests run at once, and Rounds how
// many times each race is repeated.
const (
	Racers = 16
	Rounds = 20
)

// Run runs the whole contract against stores made by open.
func Run(t *testing.T, open Opener) {
	t.Run("Chat", func(t *testing.T) { testChat(t, open) })
	t.Run("UpdateChat", func(t *testing.T) { testUpdateChat(t, open) })
	t.Run("ForgetChat", func(t *testing.T) { testForgetChat(t, open) })
	t.Run("Races", func(t *testing.T) { testRaces(t, open) })
}

// env is one fresh store.
type env struct {
	st  botstate.Store
	box outbox.Store
	ctx context.Context
}

func newEnv(t *testing.T, open Opener) *env {
	t.Helper()
	st, box := open(t)
	return &env{st: st, box: box, ctx: context.Background()}
}

// at is the moment d after Base.
func at(d time.Duration) time.Time { return Base.Add(d) }

func (e *env) mustChat(t *testing.T, id int64) botstate.Chat {
	t.Helper()
	c, err := e.st.Chat(e.ctx, id)
	require.NoError(t, err)
	return c
}

func (e *env) mustUpdate(t *testing.T, id int64, now time.Time, change func(*botstate.Chat)) botstate.Chat {
	t.Helper()
	c, err := e.st.UpdateChat(e.ctx, id, now, change)
	require.NoError(t, err)
	return c
}

func testForgetChat(t *testing.T, open Opener) {
	t.Run("removes the chat's settings and messages, and no other chat's", func(t *testing.T) {
		e := newEnv(t, open)
		const gone, kept = int64(-100123), int64(-10012)
		e.mustUpdate(t, gone, at(0), func(c *botstate.Chat) { c.Language = "ru-RU" })
		keptChat := e.mustUpdate(t, kept, at(0), func(c *botstate.Chat) { c.Language = "en-US" })
		msg := func(chat int64, rest string) outbox.Entry {
			return outbox.Entry{Kind: outbox.Telegram, Key: botstate.ChatPrefix(chat) + rest}
		}
		var keptEntries []outbox.Entry
		if e.box != nil {
			for _, m := range []outbox.Entry{msg(gone, "1/status"), msg(gone, "1/result"), msg(gone, "2/refusal")} {
				_, _, err := e.box.Begin(e.ctx, m, at(0), time.Minute)
				require.NoError(t, err)
			}
			for _, m := range []outbox.Entry{msg(kept, "1/status"), {Kind: outbox.Callback, Key: botstate.ChatPrefix(gone) + "x"}} {
				d, _, err := e.box.Put(e.ctx, m, at(0), at(0))
				require.NoError(t, err)
				keptEntries = append(keptEntries, d)
			}
		}

		require.NoError(t, e.st.ForgetChat(e.ctx, gone))

		require.Equal(t, botstate.Chat{ID: gone}, e.mustChat(t, gone))
		require.Equal(t, keptChat, e.mustChat(t, kept))
		if e.box == nil {
			return
		}
		for _, rest := range []string{"1/status", "1/result", "2/refusal"} {
			_, err := e.box.Get(e.ctx, outbox.Telegram, botstate.ChatPrefix(gone)+rest)
			require.ErrorIs(t, err, outbox.ErrNotFound, rest)
		}
		for _, d := range keptEntries {
			got, err := e.box.Get(e.ctx, d.Kind, d.Key)
			require.NoError(t, err)
			require.Equal(t, d, got, "another chat's, or another kind's")
		}
	})

	t.Run("a chat never seen is no error", func(t *testing.T) {
		e := newEnv(t, open)
		require.NoError(t, e.st.ForgetChat(e.ctx, 42))
		require.NoError(t, e.st.ForgetChat(e.ctx, 42))
	})
}
