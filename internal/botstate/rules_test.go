package botstate_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/botstate"
	"transcriber/internal/errs"
)

// The rules' edge cases that the contract suite (botstatetest) does not
// reach through a store: arguments the stores refuse before a rule runs,
// times finer than the stores keep, rows no store call produces.

var (
	base  = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	k     = botstate.Key{ChatID: -100123, MessageID: 7, Part: "result"}
	lease = 30 * time.Second
)

const jobID = "01jd0m3y8k9q2r5t7v4w6x8z0a"

func at(d time.Duration) time.Time { return base.Add(d) }

func requireInvalid(t *testing.T, err error, msgAndArgs ...any) {
	t.Helper()
	require.ErrorIs(t, err, botstate.ErrInvalid, msgAndArgs...)
	require.Equal(t, errs.Invalid, errs.KindOf(err), msgAndArgs...)
}

// pending is a delivery taken at 0 and held until Lease.
func pending() botstate.Delivery {
	return botstate.Delivery{Key: k, JobID: jobID, State: botstate.Pending, Attempts: 1,
		NextAt: at(lease), LeaseUntil: at(lease), UpdatedAt: at(0)}
}

func TestValidateKey(t *testing.T) {
	require.NoError(t, botstate.ValidateKey(botstate.Key{ChatID: -1, MessageID: 1, Part: strings.Repeat("p", botstate.MaxPartLen)}))
	for _, bad := range []botstate.Key{
		{MessageID: 1, Part: "result"},
		{ChatID: 1, Part: "result"},
		{ChatID: 1, MessageID: 1},
		{ChatID: 1, MessageID: 1, Part: strings.Repeat("p", botstate.MaxPartLen+1)},
	} {
		requireInvalid(t, botstate.ValidateKey(bad), "%+v", bad)
	}
}

func TestValidateClaim(t *testing.T) {
	for _, limit := range []int{1, botstate.MaxClaimLimit} {
		require.NoError(t, botstate.ValidateClaim(at(0), lease, limit))
	}
	requireInvalid(t, botstate.ValidateClaim(at(0), lease, 0))
	requireInvalid(t, botstate.ValidateClaim(at(0), lease, botstate.MaxClaimLimit+1))
	requireInvalid(t, botstate.ValidateClaim(at(0), 0, 10))
	requireInvalid(t, botstate.ValidateClaim(time.Time{}, lease, 10), "zero now")

	err := botstate.ValidateClaim(time.Time{}, 0, 0)
	requireInvalid(t, err)
	require.Contains(t, err.Error(), "no time given", "the first argument refused is named")
	require.NotContains(t, err.Error(), "lease")
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

func TestApplyBegin(t *testing.T) {
	t.Run("refuses its arguments whether or not the delivery is recorded", func(t *testing.T) {
		for _, found := range []bool{false, true} {
			_, _, err := botstate.ApplyBegin(pending(), found, k, jobID, time.Time{}, lease)
			requireInvalid(t, err, "zero now, found %v", found)
			_, _, err = botstate.ApplyBegin(pending(), found, k, jobID, at(time.Hour), -lease)
			requireInvalid(t, err, "negative lease, found %v", found)
			_, _, err = botstate.ApplyBegin(pending(), found, botstate.Key{ChatID: 1, MessageID: 1}, jobID, at(time.Hour), lease)
			requireInvalid(t, err, "no part, found %v", found)
		}
	})

	t.Run("a new delivery is in UTC milliseconds", func(t *testing.T) {
		msk := time.FixedZone("MSK", 3*3600)
		d, taken, err := botstate.ApplyBegin(botstate.Delivery{}, false, k, "", at(2500*time.Microsecond).In(msk), lease)
		require.NoError(t, err)
		require.True(t, taken)
		want := botstate.Delivery{Key: k, State: botstate.Pending, Attempts: 1,
			NextAt: at(lease + 2*time.Millisecond), LeaseUntil: at(lease + 2*time.Millisecond), UpdatedAt: at(2 * time.Millisecond)}
		require.Equal(t, want, d)
	})

	t.Run("a lease that ends at now is over", func(t *testing.T) {
		d, taken, err := botstate.ApplyBegin(pending(), true, k, "other", at(lease), lease)
		require.NoError(t, err)
		require.True(t, taken)
		want := pending()
		want.Attempts, want.LeaseUntil, want.UpdatedAt = 2, at(2*lease), at(lease)
		require.Equal(t, want, d, "the job recorded first is kept")

		d, taken, err = botstate.ApplyBegin(pending(), true, k, jobID, at(lease-time.Nanosecond), lease)
		require.NoError(t, err)
		require.False(t, taken, "held a nanosecond more")
		require.Equal(t, pending(), d)
	})

	t.Run("a final delivery is returned as stored, even with an expired lease", func(t *testing.T) {
		for _, state := range []botstate.DeliveryState{botstate.Sent, botstate.Abandoned, "unknown"} {
			cur := pending()
			cur.State = state
			d, taken, err := botstate.ApplyBegin(cur, true, k, jobID, at(time.Hour), lease)
			require.NoError(t, err)
			require.False(t, taken, "%s", state)
			require.Equal(t, cur, d, "%s", state)
		}
	})
}

func TestApplySchedule(t *testing.T) {
	t.Run("refuses a zero due time or now, for a recorded delivery too", func(t *testing.T) {
		for _, found := range []bool{false, true} {
			_, _, err := botstate.ApplySchedule(pending(), found, k, jobID, time.Time{}, at(0))
			requireInvalid(t, err, "zero at, found %v", found)
			_, _, err = botstate.ApplySchedule(pending(), found, k, jobID, at(time.Minute), time.Time{})
			requireInvalid(t, err, "zero now, found %v", found)
		}
	})

	t.Run("a recorded delivery is not written", func(t *testing.T) {
		d, created, err := botstate.ApplySchedule(pending(), true, k, "other", at(-time.Hour), at(time.Hour))
		require.NoError(t, err)
		require.False(t, created)
		require.Equal(t, pending(), d)
	})

	t.Run("a new one is not held, and in UTC milliseconds", func(t *testing.T) {
		d, created, err := botstate.ApplySchedule(botstate.Delivery{}, false, k, jobID, at(time.Minute+time.Microsecond), at(time.Microsecond))
		require.NoError(t, err)
		require.True(t, created)
		require.Equal(t, botstate.Delivery{Key: k, JobID: jobID, State: botstate.Pending,
			NextAt: at(time.Minute), LeaseUntil: at(0), UpdatedAt: at(0)}, d)
	})

	t.Run("a due time in the past is due at once", func(t *testing.T) {
		d, _, err := botstate.ApplySchedule(botstate.Delivery{}, false, k, jobID, at(-time.Hour), at(0))
		require.NoError(t, err)
		require.True(t, botstate.Due(d, at(0)))
	})
}

func TestApplyFinish(t *testing.T) {
	t.Run("refuses its arguments before it looks for the delivery", func(t *testing.T) {
		for what, o := range map[string]botstate.Outcome{
			"no state":               {},
			"an unknown state":       {State: "delivered"},
			"pending without NextAt": {State: botstate.Pending, SentID: 5},
		} {
			_, err := botstate.ApplyFinish(botstate.Delivery{}, false, k, o, at(0))
			requireInvalid(t, err, what)
		}
		_, err := botstate.ApplyFinish(botstate.Delivery{}, false, k, botstate.Outcome{State: botstate.Sent}, time.Time{})
		requireInvalid(t, err, "zero now")

		_, err = botstate.ApplyFinish(botstate.Delivery{}, false, k, botstate.Outcome{State: botstate.Sent}, at(0))
		require.ErrorIs(t, err, botstate.ErrNotFound)
	})

	t.Run("Sent on an abandoned delivery keeps it abandoned and records the message", func(t *testing.T) {
		cur := pending()
		cur.State, cur.LeaseUntil = botstate.Abandoned, at(time.Second)
		d, err := botstate.ApplyFinish(cur, true, k, botstate.Outcome{State: botstate.Sent, SentID: 77}, at(time.Minute))
		require.NoError(t, err)
		want := cur
		want.SentID, want.LeaseUntil, want.UpdatedAt = 77, at(time.Minute), at(time.Minute)
		require.Equal(t, want, d, "a sender that posted after all: the message exists")

		d, err = botstate.ApplyFinish(cur, true, k, botstate.Outcome{State: botstate.Pending, SentID: 78, NextAt: at(time.Hour)}, at(time.Minute))
		require.NoError(t, err)
		require.Equal(t, botstate.Abandoned, d.State)
		require.Zero(t, d.SentID, "only Sent records a SentID on a final delivery")
		require.Equal(t, cur.NextAt, d.NextAt, "a final delivery is never due again")
	})

	t.Run("Abandoned with a SentID on a pending delivery records it", func(t *testing.T) {
		d, err := botstate.ApplyFinish(pending(), true, k, botstate.Outcome{State: botstate.Abandoned, SentID: 9}, at(time.Second))
		require.NoError(t, err)
		require.Equal(t, botstate.Abandoned, d.State)
		require.Equal(t, int64(9), d.SentID)
		require.Equal(t, pending().NextAt, d.NextAt, "NextAt is only moved by Pending")
	})

	t.Run("finishing ends a lease not yet run out, in UTC milliseconds", func(t *testing.T) {
		msk := time.FixedZone("MSK", 3*3600)
		o := botstate.Outcome{State: botstate.Pending, NextAt: at(time.Minute + time.Microsecond).In(msk)}
		d, err := botstate.ApplyFinish(pending(), true, k, o, at(time.Second+time.Microsecond).In(msk))
		require.NoError(t, err)
		want := pending()
		want.NextAt, want.LeaseUntil, want.UpdatedAt = at(time.Minute), at(time.Second), at(time.Second)
		require.Equal(t, want, d)
	})
}

func TestDue(t *testing.T) {
	d := pending() // NextAt = LeaseUntil = Lease
	require.False(t, botstate.Due(d, at(lease-time.Millisecond)))
	require.True(t, botstate.Due(d, at(lease)), "NextAt and LeaseUntil at now")

	d.NextAt = at(time.Hour)
	require.False(t, botstate.Due(d, at(lease)), "not held, but not due")
	d.NextAt, d.LeaseUntil = at(0), at(time.Hour)
	require.False(t, botstate.Due(d, at(lease)), "due, but held")
	d.LeaseUntil = at(0)
	for _, state := range []botstate.DeliveryState{botstate.Sent, botstate.Abandoned} {
		d.State = state
		require.False(t, botstate.Due(d, at(time.Hour)), "%s", state)
	}
}

func TestApplyClaim(t *testing.T) {
	t.Run("takes a due delivery as Begin takes it over", func(t *testing.T) {
		d, err := botstate.ApplyClaim(pending(), at(time.Minute), lease)
		require.NoError(t, err)
		begun, taken, err := botstate.ApplyBegin(pending(), true, k, "", at(time.Minute), lease)
		require.NoError(t, err)
		require.True(t, taken)
		require.Equal(t, begun, d)
		require.Equal(t, pending().NextAt, d.NextAt)
	})

	t.Run("refuses a zero now or a lease not positive", func(t *testing.T) {
		_, err := botstate.ApplyClaim(pending(), time.Time{}, lease)
		requireInvalid(t, err)
		_, err = botstate.ApplyClaim(pending(), at(time.Minute), 0)
		requireInvalid(t, err)
	})

	t.Run("a delivery not due is a bug of the store's selection, not a caller's error", func(t *testing.T) {
		held := pending()
		notYet := pending()
		notYet.LeaseUntil, notYet.NextAt = at(0), at(time.Hour)
		sent := pending()
		sent.State = botstate.Sent
		for what, cur := range map[string]botstate.Delivery{"held": held, "not yet due": notYet, "sent": sent} {
			_, err := botstate.ApplyClaim(cur, at(time.Second), lease)
			require.Error(t, err, what)
			require.Equal(t, errs.Internal, errs.KindOf(err), what)
			require.Contains(t, err.Error(), "-100123/7/result", what)
		}
	})
}

// memChange is a botstate.Change over a map, which records whether it ran.
type memChange struct {
	rows map[botstate.Key]botstate.Delivery
	ran  int
	fail error
}

func (m *memChange) change(_ context.Context, k botstate.Key, apply func(botstate.Delivery, bool) (botstate.Delivery, bool, error)) (botstate.Delivery, bool, error) {
	m.ran++
	if m.fail != nil {
		return botstate.Delivery{}, false, m.fail
	}
	cur, found := m.rows[k]
	d, write, err := apply(cur, found)
	if err != nil {
		return botstate.Delivery{}, false, err
	}
	if write {
		m.rows[k] = d
	}
	return d, write, nil
}

func TestChange(t *testing.T) {
	ctx := context.Background()

	t.Run("a malformed request never reaches the store", func(t *testing.T) {
		m := &memChange{rows: map[botstate.Key]botstate.Delivery{}}
		c := botstate.Change(m.change)
		bad := botstate.Key{ChatID: 1, MessageID: 1}
		_, _, err := c.Begin(ctx, bad, jobID, at(0), lease)
		requireInvalid(t, err)
		_, _, err = c.Begin(ctx, k, jobID, at(0), 0)
		requireInvalid(t, err)
		_, err = c.Schedule(ctx, k, jobID, time.Time{}, at(0))
		requireInvalid(t, err)
		_, err = c.Finish(ctx, k, botstate.Outcome{State: botstate.Pending}, at(0))
		requireInvalid(t, err)
		require.Zero(t, m.ran)
	})

	t.Run("Begin, Schedule and Finish write what the rules decide", func(t *testing.T) {
		m := &memChange{rows: map[botstate.Key]botstate.Delivery{}}
		c := botstate.Change(m.change)
		d, taken, err := c.Begin(ctx, k, jobID, at(0), lease)
		require.NoError(t, err)
		require.True(t, taken)
		require.Equal(t, pending(), d)

		_, taken, err = c.Begin(ctx, k, jobID, at(time.Second), lease)
		require.NoError(t, err)
		require.False(t, taken)

		got, err := c.Schedule(ctx, k, "other", at(time.Hour), at(time.Second))
		require.NoError(t, err)
		require.Equal(t, pending(), got, "a recorded delivery as stored")

		d, err = c.Finish(ctx, k, botstate.Outcome{State: botstate.Sent, SentID: 5}, at(time.Second))
		require.NoError(t, err)
		require.Equal(t, botstate.Sent, d.State)
		require.Equal(t, d, m.rows[k])
	})

	t.Run("the store's errors keep their kind, and name the delivery", func(t *testing.T) {
		down := errs.New(errs.Unavailable, "store_unavailable", "down")
		c := botstate.Change((&memChange{fail: down}).change)
		_, _, err := c.Begin(ctx, k, jobID, at(0), lease)
		require.ErrorIs(t, err, down)
		require.Contains(t, err.Error(), "begin delivery -100123/7/result")
		_, err = c.Schedule(ctx, k, jobID, at(0), at(0))
		require.Equal(t, errs.Unavailable, errs.KindOf(err))

		_, err = botstate.Change((&memChange{rows: map[botstate.Key]botstate.Delivery{}}).change).Finish(ctx, k, botstate.Outcome{State: botstate.Abandoned}, at(0))
		require.ErrorIs(t, err, botstate.ErrNotFound)
		require.Equal(t, errs.NotFound, errs.KindOf(err))
		require.Contains(t, err.Error(), "finish delivery -100123/7/result")
	})
}
