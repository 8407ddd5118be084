// Package quotatest is the contract every quota.Counters must keep.
//
// Run it from an implementation's tests:
//
//	func TestCountersContract(t *testing.T) {
//		quotatest.Run(t, func(t *testing.T) quota.Counters { … })
//	}
//
// It includes the race: Racers goroutines reserving against one limit,
// Rounds times; the limit must never be passed and exactly limit
// reservations must succeed. Run it with -race.
package quotatest

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/errs"
	"transcriber/internal/quota"
	"transcriber/internal/racetest"
)

// Opener opens a fresh, empty store.
type Opener func(t *testing.T) quota.Counters

// Window is the first window the suite counts in. It has a sub-millisecond
// part, which a store may drop: the same time.Time must always name the
// same counter.
var Window = time.Date(2026, 3, 1, 10, 0, 0, 123_456_789, time.UTC)

// Racers is how many goroutines the race runs at once, and Rounds how many
// times it is repeated.
const (
	Racers = 16
	Rounds = 20
)

// Run runs the whole contract against stores made by open.
func Run(t *testing.T, open Opener) {
	t.Run("Reserve", func(t *testing.T) { testReserve(t, open) })
	t.Run("Release", func(t *testing.T) { testRelease(t, open) })
	t.Run("Counters", func(t *testing.T) { testCounters(t, open) })
	t.Run("Invalid", func(t *testing.T) { testInvalid(t, open) })
	t.Run("UsedMany", func(t *testing.T) { testUsedMany(t, open) })
	t.Run("Expire", func(t *testing.T) { testExpire(t, open) })
	t.Run("Race", func(t *testing.T) { testRace(t, open) })
}

var ctx = context.Background()

func reserve(t *testing.T, c quota.Counters, key string, w time.Time, amount, limit int64) (int64, bool) {
	t.Helper()
	used, ok, err := c.Reserve(ctx, key, w, amount, limit)
	require.NoError(t, err)
	return used, ok
}

func used(t *testing.T, c quota.Counters, key string, w time.Time) int64 {
	t.Helper()
	n, err := c.Used(ctx, key, w)
	require.NoError(t, err)
	return n
}

func testReserve(t *testing.T, open Opener) {
	t.Run("adds while the total stays within the limit", func(t *testing.T) {
		c := open(t)
		n, ok := reserve(t, c, "k", Window, 3, 10)
		require.True(t, ok)
		require.Equal(t, int64(3), n)
		n, ok = reserve(t, c, "k", Window, 7, 10)
		require.True(t, ok, "reaching the limit exactly is within it")
		require.Equal(t, int64(10), n)
		require.Equal(t, int64(10), used(t, c, "k", Window))
	})
	t.Run("past the limit changes nothing and says how much is used", func(t *testing.T) {
		c := open(t)
		reserve(t, c, "k", Window, 8, 10)
		n, ok := reserve(t, c, "k", Window, 3, 10)
		require.False(t, ok)
		require.Equal(t, int64(8), n, "the current total")
		require.Equal(t, int64(8), used(t, c, "k", Window))
		n, ok = reserve(t, c, "k", Window, 2, 10)
		require.True(t, ok, "what still fits is taken")
		require.Equal(t, int64(10), n)
	})
	t.Run("a first reservation larger than the limit is refused", func(t *testing.T) {
		c := open(t)
		n, ok := reserve(t, c, "k", Window, 11, 10)
		require.False(t, ok)
		require.Zero(t, n)
		require.Zero(t, used(t, c, "k", Window))
	})
	t.Run("a limit of 0 or less is no limit", func(t *testing.T) {
		c := open(t)
		for _, limit := range []int64{0, -1} {
			_, ok := reserve(t, c, "k", Window, 1_000_000, limit)
			require.True(t, ok, "limit %d", limit)
		}
		require.Equal(t, int64(2_000_000), used(t, c, "k", Window))
		_, ok := reserve(t, c, "k", Window, 1, 10)
		require.False(t, ok, "a limit applies again to the same counter when given")
	})
}

func testRelease(t *testing.T, open Opener) {
	t.Run("subtracts", func(t *testing.T) {
		c := open(t)
		reserve(t, c, "k", Window, 10, 10)
		require.NoError(t, c.Release(ctx, "k", Window, 4))
		require.Equal(t, int64(6), used(t, c, "k", Window))
		_, ok := reserve(t, c, "k", Window, 4, 10)
		require.True(t, ok, "what was released can be reserved again")
	})
	t.Run("never below 0", func(t *testing.T) {
		c := open(t)
		reserve(t, c, "k", Window, 2, 10)
		require.NoError(t, c.Release(ctx, "k", Window, 5))
		require.Zero(t, used(t, c, "k", Window))
		n, ok := reserve(t, c, "k", Window, 10, 10)
		require.True(t, ok)
		require.Equal(t, int64(10), n, "no debt is left behind")
	})
	t.Run("of a counter that does not exist does nothing", func(t *testing.T) {
		c := open(t)
		require.NoError(t, c.Release(ctx, "nothing", Window, 5))
		require.Zero(t, used(t, c, "nothing", Window))
		n, ok := reserve(t, c, "nothing", Window, 1, 1)
		require.True(t, ok)
		require.Equal(t, int64(1), n)
	})
}

func testCounters(t *testing.T, open Opener) {
	t.Run("a counter that was never reserved is 0", func(t *testing.T) {
		require.Zero(t, used(t, open(t), "k", Window))
	})
	t.Run("keys and windows are counted apart", func(t *testing.T) {
		c := open(t)
		next := Window.Add(10 * time.Minute)
		reserve(t, c, "a", Window, 5, 5)
		_, ok := reserve(t, c, "b", Window, 5, 5)
		require.True(t, ok, "another key has its own counter")
		_, ok = reserve(t, c, "a", next, 5, 5)
		require.True(t, ok, "another window has its own counter")
		require.Equal(t, int64(5), used(t, c, "a", Window))
		require.Equal(t, int64(5), used(t, c, "b", Window))
		require.Equal(t, int64(5), used(t, c, "a", next))
		require.Zero(t, used(t, c, "a", Window.Add(-10*time.Minute)))
	})
	t.Run("the same moment names the same counter in any zone", func(t *testing.T) {
		c := open(t)
		reserve(t, c, "k", Window, 1, 0)
		reserve(t, c, "k", Window.In(time.FixedZone("MSK", 3*60*60)), 1, 0)
		require.Equal(t, int64(2), used(t, c, "k", Window))
	})
}

func testInvalid(t *testing.T, open Opener) {
	c := open(t)
	long := string(make([]byte, quota.MaxKey+1))
	for name, call := range map[string]func() error{
		"reserve with no key":         func() error { _, _, err := c.Reserve(ctx, "", Window, 1, 1); return err },
		"reserve with a key too long": func() error { _, _, err := c.Reserve(ctx, long, Window, 1, 1); return err },
		"reserve nothing":             func() error { _, _, err := c.Reserve(ctx, "k", Window, 0, 1); return err },
		"reserve a negative amount":   func() error { _, _, err := c.Reserve(ctx, "k", Window, -1, 1); return err },
		"release nothing":             func() error { return c.Release(ctx, "k", Window, 0) },
		"release with no key":         func() error { return c.Release(ctx, "", Window, 1) },
		"used with no key":            func() error { _, err := c.Used(ctx, "", Window); return err },
	} {
		err := call()
		require.ErrorIs(t, err, quota.ErrInvalid, name)
		require.Equal(t, errs.Invalid, errs.KindOf(err), name)
	}
	require.Zero(t, used(t, c, "k", Window), "a refused call writes nothing")
}

func testUsedMany(t *testing.T, open Opener) {
	c := open(t)
	m, ok := c.(quota.MultiReader)
	if !ok {
		t.Skip("the store reads one counter at a time")
	}
	next := Window.Add(time.Minute)
	reserve(t, c, "a", Window, 2, 0)
	reserve(t, c, "b", Window, 3, 0)
	reserve(t, c, "c", next, 4, 0)
	reserve(t, c, "d", Window, 1, 0)
	require.NoError(t, c.Release(ctx, "d", Window, 1))

	t.Run("every key asked, each as Used reads it", func(t *testing.T) {
		keys := []string{"a", "b", "c", "d", "never"}
		got, err := m.UsedMany(ctx, keys, Window)
		require.NoError(t, err)
		require.Equal(t, map[string]int64{"a": 2, "b": 3, "c": 0, "d": 0, "never": 0}, got,
			"c is counted in another window; d went back to 0; never was never reserved")
		for _, k := range keys {
			require.Equal(t, used(t, c, k, Window), got[k], k)
		}
	})
	t.Run("of one window, named by its moment in any zone", func(t *testing.T) {
		got, err := m.UsedMany(ctx, []string{"a", "c"}, next.In(time.FixedZone("MSK", 3*60*60)))
		require.NoError(t, err)
		require.Equal(t, map[string]int64{"a": 0, "c": 4}, got)
	})
	t.Run("a key asked twice is read once", func(t *testing.T) {
		got, err := m.UsedMany(ctx, []string{"b", "b"}, Window)
		require.NoError(t, err)
		require.Equal(t, map[string]int64{"b": 3}, got)
	})
	t.Run("refuses no keys, too many, and a key Used refuses", func(t *testing.T) {
		many := make([]string, quota.MaxKeys+1)
		for i := range many {
			many[i] = fmt.Sprintf("k%d", i)
		}
		for name, keys := range map[string][]string{
			"no keys": nil, "too many": many, "an empty key": {"a", ""}, "a key too long": {string(make([]byte, quota.MaxKey+1))},
		} {
			_, err := m.UsedMany(ctx, keys, Window)
			require.ErrorIs(t, err, quota.ErrInvalid, name)
			require.Equal(t, errs.Invalid, errs.KindOf(err), name)
		}
		got, err := m.UsedMany(ctx, many[:quota.MaxKeys], Window)
		require.NoError(t, err, "MaxKeys at once")
		require.Len(t, got, quota.MaxKeys)
	})
}

func testExpire(t *testing.T, open Opener) {
	c := open(t)
	ex, ok := c.(quota.Expirer)
	if !ok {
		t.Skip("the store's backend expires counters itself")
	}
	old, recent := Window, Window.Add(24*time.Hour)
	reserve(t, c, "k", old, 1, 0)
	reserve(t, c, "k", recent, 1, 0)

	second := quota.PerSecond + "k"
	reserve(t, c, second, old, 1, 0)
	n, err := ex.ExpireCounters(ctx, quota.ExpiresAt(second, old).Add(-time.Millisecond))
	require.NoError(t, err)
	require.Zero(t, n, "a counter of a second is kept until ShortRetention after its window")
	n, err = ex.ExpireCounters(ctx, quota.ExpiresAt(second, old))
	require.NoError(t, err)
	require.Equal(t, 1, n, "and then goes, within minutes, not with the month's")
	require.Zero(t, used(t, c, second, old))
	require.Equal(t, int64(1), used(t, c, "k", old))

	n, err = ex.ExpireCounters(ctx, quota.ExpiresAt("k", old).Add(-time.Millisecond))
	require.NoError(t, err)
	require.Zero(t, n, "a counter is kept until Retention after its window")
	require.Equal(t, int64(1), used(t, c, "k", old))

	n, err = ex.ExpireCounters(ctx, quota.ExpiresAt("k", old))
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Zero(t, used(t, c, "k", old))
	require.Equal(t, int64(1), used(t, c, "k", recent), "a later window is kept")
}

func testRace(t *testing.T, open Opener) {
	t.Run("of reservers against one limit exactly limit win", func(t *testing.T) {
		c := open(t)
		const limit = Racers / 2
		for round := 0; round < Rounds; round++ {
			w := Window.Add(time.Duration(round) * time.Hour)
			var won atomic.Int64
			failures := make([]error, Racers)
			racetest.Run(Racers, func(i int) {
				n, ok, err := c.Reserve(ctx, "race", w, 1, limit)
				switch {
				case err != nil:
					failures[i] = err
				case ok:
					won.Add(1)
					if n > limit {
						failures[i] = errOver
					}
				}
			})
			for _, err := range failures {
				require.NoError(t, err, "round %d", round)
			}
			require.Equal(t, int64(limit), used(t, c, "race", w), "round %d: the counter never passes the limit", round)
			require.Equal(t, int64(limit), won.Load(), "round %d: exactly %d of %d reservers win", round, limit, Racers)
		}
	})
	t.Run("of releasers the counter never goes below 0", func(t *testing.T) {
		c := open(t)
		for round := 0; round < Rounds/4; round++ {
			w := Window.Add(time.Duration(round) * time.Hour)
			reserve(t, c, "race", w, Racers/2, 0)
			failures := make([]error, Racers)
			racetest.Run(Racers, func(i int) { failures[i] = c.Release(ctx, "race", w, 1) })
			for _, err := range failures {
				require.NoError(t, err, "round %d", round)
			}
			require.Zero(t, used(t, c, "race", w), "round %d", round)
		}
	})
}

var errOver = errs.New(errs.Internal, "over_limit", "a reservation returned a total over the limit")
