package botstatetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/botstate"
)

func testChat(t *testing.T, open Opener) {
	t.Run("a chat never seen has the zero settings", func(t *testing.T) {
		e := newEnv(t, open)
		for _, id := range []int64{42, -100123, 1 << 40} {
			require.Equal(t, botstate.Chat{ID: id}, e.mustChat(t, id))
		}
	})

	t.Run("returns what UpdateChat wrote", func(t *testing.T) {
		e := newEnv(t, open)
		written := e.mustUpdate(t, 42, at(0), func(c *botstate.Chat) { c.Language = "en-US" })
		require.Equal(t, written, e.mustChat(t, 42))
	})
}

func testUpdateChat(t *testing.T, open Opener) {
	t.Run("writes every field, UpdatedAt = now", func(t *testing.T) {
		e := newEnv(t, open)
		now := at(time.Minute)
		got := e.mustUpdate(t, -100123, now, func(c *botstate.Chat) {
			c.Language = "ru-RU"
			c.Format = "srt"
			c.Auto = botstate.AutoOff
			c.UILang = "en"
			c.Mode = "deferred"
			c.Features = "speakers summary"
			c.BlockedAt = at(-time.Hour)
		})
		want := botstate.Chat{
			ID: -100123, Language: "ru-RU", Format: "srt", Auto: botstate.AutoOff, UILang: "en", Mode: "deferred",
			Features:  "speakers summary",
			BlockedAt: at(-time.Hour), UpdatedAt: now,
		}
		require.Equal(t, want, got)
		require.Equal(t, want, e.mustChat(t, -100123))
	})

	t.Run("a first update starts from the zero settings", func(t *testing.T) {
		e := newEnv(t, open)
		var seen botstate.Chat
		e.mustUpdate(t, 7, at(0), func(c *botstate.Chat) { seen = *c })
		require.Equal(t, botstate.Chat{ID: 7}, seen)
		require.Equal(t, botstate.Chat{ID: 7, UpdatedAt: at(0)}, e.mustChat(t, 7), "an update that changes nothing still records the chat")
	})

	t.Run("change sees what is stored; a cleared field is cleared", func(t *testing.T) {
		e := newEnv(t, open)
		first := e.mustUpdate(t, 42, at(0), func(c *botstate.Chat) {
			c.Language, c.Format, c.Auto, c.UILang, c.BlockedAt = "kk-KZ", "vtt", botstate.AutoOn, "ru", at(-time.Minute)
			c.Mode, c.Features = "deferred", "summary"
		})
		var seen botstate.Chat
		got := e.mustUpdate(t, 42, at(time.Hour), func(c *botstate.Chat) {
			seen = *c
			c.Format, c.Auto, c.BlockedAt, c.Mode, c.Features = "", botstate.AutoDefault, time.Time{}, "", ""
		})
		require.Equal(t, first, seen)
		want := botstate.Chat{ID: 42, Language: "kk-KZ", UILang: "ru", UpdatedAt: at(time.Hour)}
		require.Equal(t, want, got)
		require.Equal(t, want, e.mustChat(t, 42))
		require.True(t, e.mustChat(t, 42).BlockedAt.IsZero(), "not blocked any more")
	})

	t.Run("chats are apart", func(t *testing.T) {
		e := newEnv(t, open)
		a := e.mustUpdate(t, 1, at(0), func(c *botstate.Chat) { c.Language = "ru-RU" })
		b := e.mustUpdate(t, 2, at(time.Second), func(c *botstate.Chat) { c.Language = "en-US" })
		require.Equal(t, a, e.mustChat(t, 1))
		require.Equal(t, b, e.mustChat(t, 2))
		require.Equal(t, botstate.Chat{ID: 3}, e.mustChat(t, 3))
	})

	t.Run("times come back in UTC", func(t *testing.T) {
		e := newEnv(t, open)
		msk := time.FixedZone("MSK", 3*3600)
		got := e.mustUpdate(t, 42, at(0).In(msk), func(c *botstate.Chat) { c.BlockedAt = at(-time.Hour).In(msk) })
		for _, c := range []botstate.Chat{got, e.mustChat(t, 42)} {
			require.Equal(t, at(0), c.UpdatedAt)
			require.Equal(t, at(-time.Hour), c.BlockedAt)
		}
	})
}
