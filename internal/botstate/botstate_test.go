package botstate_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/botstate"
	"transcriber/internal/errs"
)

var base = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func at(d time.Duration) time.Time { return base.Add(d) }

func requireInvalid(t *testing.T, err error, msgAndArgs ...any) {
	t.Helper()
	require.ErrorIs(t, err, botstate.ErrInvalid, msgAndArgs...)
	require.Equal(t, errs.Invalid, errs.KindOf(err), msgAndArgs...)
}

func TestApplyChatUpdate(t *testing.T) {
	t.Run("a zero now is refused before change runs", func(t *testing.T) {
		require.NoError(t, botstate.ValidateChatUpdate(at(0)))
		requireInvalid(t, botstate.ValidateChatUpdate(time.Time{}))
		called := false
		_, err := botstate.ApplyChatUpdate(botstate.Chat{ID: 1}, time.Time{}, func(*botstate.Chat) { called = true })
		requireInvalid(t, err)
		require.False(t, called)
	})

	t.Run("a change that alters the chat id is refused", func(t *testing.T) {
		for _, id := range []int64{0, 2, -1} {
			_, err := botstate.ApplyChatUpdate(botstate.Chat{ID: 1, Language: "ru-RU"}, at(0), func(c *botstate.Chat) {
				c.Language = "en-US"
				c.ID = id
			})
			requireInvalid(t, err, "id %d", id)
		}
	})

	t.Run("the result is in UTC milliseconds; cur is not changed", func(t *testing.T) {
		msk := time.FixedZone("MSK", 3*3600)
		cur := botstate.Chat{ID: 1, Format: "srt"}
		got, err := botstate.ApplyChatUpdate(cur, at(1500*time.Microsecond).In(msk), func(c *botstate.Chat) {
			c.BlockedAt = at(-time.Hour + 999*time.Microsecond).In(msk)
		})
		require.NoError(t, err)
		require.Equal(t, botstate.Chat{ID: 1, Format: "srt", BlockedAt: at(-time.Hour), UpdatedAt: at(time.Millisecond)}, got)
		require.Equal(t, botstate.Chat{ID: 1, Format: "srt"}, cur)
	})

	t.Run("a cleared BlockedAt stays zero", func(t *testing.T) {
		got, err := botstate.ApplyChatUpdate(botstate.Chat{ID: 1, BlockedAt: at(0)}, at(time.Second), func(c *botstate.Chat) {
			c.BlockedAt = time.Time{}
		})
		require.NoError(t, err)
		require.True(t, got.BlockedAt.IsZero())
	})
}
