package outbox

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/errs"
)

// The rules' edge cases the contract suite (outboxtest) does not reach
// through a store: times finer than the stores keep, rows no store call
// produces, requests refused before a store is asked.

var base = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

const (
	lease = 30 * time.Second
	key   = "-100123/7/result"
)

func at(d time.Duration) time.Time { return base.Add(d) }

func requireInvalid(t *testing.T, err error, msgAndArgs ...any) {
	t.Helper()
	require.ErrorIs(t, err, ErrInvalid, msgAndArgs...)
	require.Equal(t, errs.Invalid, errs.KindOf(err), msgAndArgs...)
}

func message() Entry { return Entry{Kind: Telegram, Key: key, JobID: "j"} }

// pending is a message taken at 0 and held until lease.
func pending() Entry {
	e := message()
	e.State, e.NextAt, e.LeaseUntil, e.CreatedAt, e.UpdatedAt = Pending, at(lease), at(lease), at(0), at(0)
	return e
}

func TestApplyBegin(t *testing.T) {
	t.Run("a new entry is in UTC milliseconds", func(t *testing.T) {
		msk := time.FixedZone("MSK", 3*3600)
		e, taken, err := applyBegin(Entry{}, false, message(), at(2500*time.Microsecond).In(msk), lease)
		require.NoError(t, err)
		require.True(t, taken)
		want := message()
		want.State, want.NextAt, want.LeaseUntil = Pending, at(lease+2*time.Millisecond), at(lease+2*time.Millisecond)
		want.CreatedAt, want.UpdatedAt = at(2*time.Millisecond), at(2*time.Millisecond)
		require.Equal(t, want, e)
	})

	t.Run("a lease that ends at now is over", func(t *testing.T) {
		other := message()
		other.JobID, other.Payload = "other", "other"
		e, taken, err := applyBegin(pending(), true, other, at(lease), lease)
		require.NoError(t, err)
		require.True(t, taken)
		want := pending()
		want.LeaseUntil, want.UpdatedAt = at(2*lease), at(lease)
		require.Equal(t, want, e, "what was recorded first is kept")

		e, taken, err = applyBegin(pending(), true, message(), at(lease-time.Nanosecond), lease)
		require.NoError(t, err)
		require.False(t, taken, "held a nanosecond more")
		require.Equal(t, pending(), e)
	})

	t.Run("a final entry is returned as stored, even with an expired lease", func(t *testing.T) {
		for _, state := range []State{Delivered, Failed, "unknown"} {
			cur := pending()
			cur.State = state
			e, taken, err := applyBegin(cur, true, message(), at(time.Hour), lease)
			require.NoError(t, err)
			require.False(t, taken, "%s", state)
			require.Equal(t, cur, e, "%s", state)
		}
	})
}

func TestApplyPut(t *testing.T) {
	t.Run("a new one is not held, in UTC milliseconds; one in the past is due at once", func(t *testing.T) {
		e, created := applyPut(Entry{}, false, message(), at(time.Minute+time.Microsecond), at(time.Microsecond))
		require.True(t, created)
		want := message()
		want.State, want.NextAt, want.LeaseUntil, want.CreatedAt, want.UpdatedAt = Pending, at(time.Minute), at(0), at(0), at(0)
		require.Equal(t, want, e)

		e, _ = applyPut(Entry{}, false, message(), at(-time.Hour), at(0))
		require.True(t, Due(e, at(0)))
	})
}

func TestApplyFinish(t *testing.T) {
	t.Run("Delivered on a failed entry keeps it failed and records the message", func(t *testing.T) {
		cur := pending()
		cur.State, cur.LeaseUntil = Failed, at(time.Second)
		e, err := applyFinish(cur, true, Outcome{State: Delivered, SentID: 77}, at(time.Minute))
		require.NoError(t, err)
		want := cur
		want.SentID, want.LeaseUntil, want.UpdatedAt = 77, at(time.Minute), at(time.Minute)
		require.Equal(t, want, e, "a sender that posted after all: the message exists")

		e, err = applyFinish(cur, true, Outcome{State: Pending, SentID: 78, NextAt: at(time.Hour)}, at(time.Minute))
		require.NoError(t, err)
		require.Equal(t, Failed, e.State)
		require.Zero(t, e.SentID, "only Delivered records a SentID on a final entry")
		require.Equal(t, cur.NextAt, e.NextAt, "a final entry is never due again")
	})

	t.Run("Failed with a SentID on a pending entry records it", func(t *testing.T) {
		e, err := applyFinish(pending(), true, Outcome{State: Failed, SentID: 9}, at(time.Second))
		require.NoError(t, err)
		require.Equal(t, Failed, e.State)
		require.Equal(t, int64(9), e.SentID)
		require.Equal(t, pending().NextAt, e.NextAt, "NextAt is only moved by Pending")
	})

	t.Run("finishing ends a lease not yet run out, in UTC milliseconds", func(t *testing.T) {
		msk := time.FixedZone("MSK", 3*3600)
		o := Outcome{State: Pending, NextAt: at(time.Minute + time.Microsecond).In(msk),
			Attempt: &Attempt{At: at(time.Microsecond).In(msk), Error: "timeout"}}
		e, err := applyFinish(pending(), true, o, at(time.Second+time.Microsecond).In(msk))
		require.NoError(t, err)
		want := pending()
		want.NextAt, want.LeaseUntil, want.UpdatedAt = at(time.Minute), at(time.Second), at(time.Second)
		want.Attempts, want.FirstAt, want.LastAt, want.LastError = 1, at(0), at(0), "timeout"
		require.Equal(t, want, e)
	})
}

func TestDue(t *testing.T) {
	e := pending() // NextAt = LeaseUntil = lease
	require.False(t, Due(e, at(lease-time.Millisecond)))
	require.True(t, Due(e, at(lease)), "NextAt and LeaseUntil at now")

	e.NextAt = at(time.Hour)
	require.False(t, Due(e, at(lease)), "not held, but not due")
	e.NextAt, e.LeaseUntil = at(0), at(time.Hour)
	require.False(t, Due(e, at(lease)), "due, but held")
	e.LeaseUntil = at(0)
	for _, state := range []State{Delivered, Failed} {
		e.State = state
		require.False(t, Due(e, at(time.Hour)), "%s", state)
	}
}

func TestApplyClaim(t *testing.T) {
	t.Run("takes a due entry as Begin takes it over", func(t *testing.T) {
		e, err := ApplyClaim(pending(), at(time.Minute), lease)
		require.NoError(t, err)
		begun, taken, err := applyBegin(pending(), true, message(), at(time.Minute), lease)
		require.NoError(t, err)
		require.True(t, taken)
		require.Equal(t, begun, e)
	})

	t.Run("an entry not due is a bug of the store's selection, not a caller's error", func(t *testing.T) {
		notYet := pending()
		notYet.LeaseUntil, notYet.NextAt = at(0), at(time.Hour)
		sent := pending()
		sent.State = Delivered
		for what, cur := range map[string]Entry{"held": pending(), "not yet due": notYet, "sent": sent} {
			_, err := ApplyClaim(cur, at(time.Second), lease)
			require.Error(t, err, what)
			require.Equal(t, errs.Internal, errs.KindOf(err), what)
			require.Contains(t, err.Error(), key, what)
		}
	})
}

// memChange is a Change over a map, which counts its runs.
type memChange struct {
	rows map[string]Entry
	ran  int
	fail error
}

func (m *memChange) change(_ context.Context, _ Kind, key string, apply func(Entry, bool) (Entry, bool, error)) (Entry, bool, error) {
	m.ran++
	if m.fail != nil {
		return Entry{}, false, m.fail
	}
	cur, found := m.rows[key]
	e, write, err := apply(cur, found)
	if err != nil {
		return Entry{}, false, err
	}
	if write {
		m.rows[key] = e
	}
	return e, write, nil
}

func TestChange(t *testing.T) {
	ctx := context.Background()

	t.Run("a malformed request never reaches the store", func(t *testing.T) {
		m := &memChange{rows: map[string]Entry{}}
		c := Change(m.change)
		for what, bad := range map[string]func() error{
			"Begin, no key":  func() error { _, _, err := c.Begin(ctx, Entry{Kind: Telegram}, at(0), lease); return err },
			"Begin, lease 0": func() error { _, _, err := c.Begin(ctx, message(), at(0), 0); return err },
			"Begin, no time": func() error { _, _, err := c.Begin(ctx, message(), time.Time{}, lease); return err },
			"Put, no due":    func() error { _, _, err := c.Put(ctx, message(), time.Time{}, at(0)); return err },
			"Put, no time":   func() error { _, _, err := c.Put(ctx, message(), at(0), time.Time{}); return err },
			"Finish, pending without NextAt": func() error {
				_, err := c.Finish(ctx, Telegram, key, Outcome{State: Pending}, at(0))
				return err
			},
			"Finish, no time": func() error {
				_, err := c.Finish(ctx, Telegram, key, Outcome{State: Failed}, time.Time{})
				return err
			},
			"Finish, unknown kind": func() error {
				_, err := c.Finish(ctx, "mail", key, Outcome{State: Failed}, at(0))
				return err
			},
		} {
			requireInvalid(t, bad(), what)
		}
		require.Zero(t, m.ran)
	})

	t.Run("the store's errors keep their kind, and name the entry", func(t *testing.T) {
		down := errs.New(errs.Unavailable, "store_unavailable", "down")
		c := Change((&memChange{fail: down}).change)
		_, _, err := c.Begin(ctx, message(), at(0), lease)
		require.ErrorIs(t, err, down)
		require.Contains(t, err.Error(), "begin telegram "+key)
		_, _, err = c.Put(ctx, message(), at(0), at(0))
		require.Equal(t, errs.Unavailable, errs.KindOf(err))

		_, err = Change((&memChange{rows: map[string]Entry{}}).change).Finish(ctx, Telegram, key, Outcome{State: Failed}, at(0))
		require.ErrorIs(t, err, ErrNotFound)
		require.Equal(t, errs.NotFound, errs.KindOf(err))
		require.Contains(t, err.Error(), "finish telegram "+key)
	})
}

func TestValidateClaim(t *testing.T) {
	for _, limit := range []int{1, MaxClaimLimit} {
		require.NoError(t, ValidateClaim(Callback, at(0), lease, limit))
	}
	requireInvalid(t, ValidateClaim(Callback, at(0), lease, 0))
	requireInvalid(t, ValidateClaim(Callback, at(0), lease, MaxClaimLimit+1))
	requireInvalid(t, ValidateClaim(Callback, time.Time{}, lease, 10), "zero now")
	requireInvalid(t, ValidateClaim("", at(0), lease, 10), "no kind")

	err := ValidateClaim(Telegram, time.Time{}, 0, 0)
	requireInvalid(t, err)
	require.Contains(t, err.Error(), "no time given", "the first argument refused is named")
	require.NotContains(t, err.Error(), "lease")
}
