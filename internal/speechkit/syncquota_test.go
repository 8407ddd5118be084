package speechkit_test

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/clock"
	"transcriber/internal/clock/clocktest"
	"transcriber/internal/quota"
	"transcriber/internal/racetest"
	"transcriber/internal/speechkit"
	"transcriber/internal/store/sqlite"
)

func counters(t *testing.T) quota.Counters {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "c.db"), clock.System())
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	return sqlite.NewCounters(db)
}

// spreadCounters are counters in memory with the synchronous quota's
// key spread over quota.DefaultShards rows, as the installation has them
// (internal/app/counters.go).
func spreadCounters() quota.Counters {
	return quota.Spread(&memCounters{rows: map[string]int64{}}, quota.DefaultShards, []string{speechkit.SyncQuotaKey})
}

// memCounters keeps counters in a map.
type memCounters struct {
	mu   sync.Mutex
	rows map[string]int64
}

func (m *memCounters) key(key string, window time.Time) string {
	return key + "@" + window.UTC().Format(time.RFC3339Nano)
}

func (m *memCounters) Reserve(_ context.Context, key string, window time.Time, amount, limit int64) (int64, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	used := m.rows[m.key(key, window)]
	if !quota.Fits(used, amount, limit) {
		return used, false, nil
	}
	m.rows[m.key(key, window)] = used + amount
	return used + amount, true, nil
}

func (m *memCounters) Release(_ context.Context, key string, window time.Time, amount int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rows[m.key(key, window)] = quota.Less(m.rows[m.key(key, window)], amount)
	return nil
}

func (m *memCounters) Used(_ context.Context, key string, window time.Time) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.rows[m.key(key, window)], nil
}

// places takes every place TakeSyncPlace gives at the clock's time, up
// to tries, and returns when each was taken.
func places(t *testing.T, c quota.Counters, clk *clocktest.Fake, tries int) []time.Time {
	t.Helper()
	var taken []time.Time
	for range tries {
		ok, _, err := speechkit.TakeSyncPlace(context.Background(), c, clk)
		require.NoError(t, err)
		if ok {
			taken = append(taken, clk.Now())
		}
	}
	return taken
}

// mostWithin is the most of the sorted times in any closed span of d.
func mostWithin(times []time.Time, d time.Duration) int {
	most, lo := 0, 0
	for hi := range times {
		for times[hi].Sub(times[lo]) > d {
			lo++
		}
		most = max(most, hi-lo+1)
	}
	return most
}

// requireAnySecond checks places taken at the given times against the
// bound: at most 20 in any closed span of 1.5 s. Requests sent each
// within SyncSendWithin (half a second) of its place then make at most
// 20 in any second: 21 in a closed second would have had their places
// within less than 1.5 s.
func requireAnySecond(t *testing.T, taken []time.Time) {
	t.Helper()
	require.LessOrEqual(t, mostWithin(taken, time.Second+speechkit.SyncSendWithin), speechkit.SyncRequestsPerSecond)
}

// The incident: 20 requests at the end of one clock second and 20 at the
// start of the next, 40 within 946 ms, when each clock second was
// counted alone. Now the second twenty wait until no second holds more
// than 20 with them.
func TestTakeSyncPlaceKeepsTwentyAcrossASecondsEdge(t *testing.T) {
	c := counters(t)
	second := time.Date(2026, 12, 1, 12, 0, 7, 0, time.UTC)
	clk := clocktest.NewFake(second.Add(553 * time.Millisecond).In(time.FixedZone("MSK", 3*3600)))
	require.Len(t, places(t, c, clk, 20), 20, "twenty at the end of a second")
	clk.Set(second.Add(time.Second))
	ok, next, err := speechkit.TakeSyncPlace(context.Background(), c, clk)
	require.NoError(t, err)
	require.False(t, ok, "none at the start of the next")
	require.Equal(t, second.Add(2500*time.Millisecond), next, "the twenty's window and the three after it")

	for at := clk.Now(); at.Before(next); at = at.Add(50 * time.Millisecond) {
		clk.Set(at)
		require.Empty(t, places(t, c, clk, 1), "no place before %s", at)
	}
	clk.Set(next)
	require.Len(t, places(t, c, clk, 25), 20, "twenty more when the twenty's window is out")
	used, err := c.Used(context.Background(), speechkit.SyncQuotaKey, second.Add(500*time.Millisecond))
	require.NoError(t, err)
	require.Equal(t, int64(20), used, "counted in their half-second window; refusals take nothing")
}

// Requests at adversarial times, from a burst at every instant to a few
// at each edge of a window: no span of one second holds more than 20 of
// them, and the places keep coming (at least 20 in every two seconds of
// a steady demand).
func TestTakeSyncPlaceKeepsTwentyInAnySecond(t *testing.T) {
	base := time.Date(2026, 12, 1, 12, 0, 7, 0, time.UTC)
	rng := rand.New(rand.NewPCG(1, 2))
	patterns := map[string]func(i int) (time.Duration, int){
		"a burst every 7 ms":               func(i int) (time.Duration, int) { return time.Duration(i) * 7 * time.Millisecond, 21 },
		"one every 10 ms":                  func(i int) (time.Duration, int) { return time.Duration(i) * 10 * time.Millisecond, 1 },
		"bursts at each window's last ms":  func(i int) (time.Duration, int) { return time.Duration(i)*speechkit.SyncWindow - time.Millisecond, 25 },
		"bursts at each window's first ms": func(i int) (time.Duration, int) { return time.Duration(i) * speechkit.SyncWindow, 25 },
		"bursts 999 ms apart":              func(i int) (time.Duration, int) { return time.Duration(i) * 999 * time.Millisecond, 25 },
		"bursts 1001 ms apart":             func(i int) (time.Duration, int) { return time.Duration(i) * 1001 * time.Millisecond, 25 },
		"bursts at either side of each edge": func(i int) (time.Duration, int) {
			return time.Duration(i/2)*speechkit.SyncWindow - time.Duration(1-i%2)*time.Millisecond, 12
		},
		"random": func(i int) (time.Duration, int) {
			return time.Duration(i)*40*time.Millisecond + time.Duration(rng.IntN(40))*time.Millisecond, rng.IntN(8)
		},
	}
	for name, at := range patterns {
		t.Run(name, func(t *testing.T) {
			c := spreadCounters()
			clk := clocktest.NewFake(base)
			var taken []time.Time
			for i := 0; ; i++ {
				d, tries := at(i)
				if d > 12*time.Second {
					break
				}
				if d < 0 {
					continue
				}
				clk.Set(base.Add(d))
				taken = append(taken, places(t, c, clk, tries)...)
			}
			requireAnySecond(t, taken)
			if name != "random" && name != "one every 10 ms" {
				require.GreaterOrEqual(t, len(taken), 5*speechkit.SyncRequestsPerSecond, "20 in every two seconds of demand")
			}
		})
	}
}

// A place taken after its window ended is not used: a reader of the next
// window may have read before it was counted. The call takes one in the
// window it is in; the late one stays counted. Reads that outlast the
// window take nothing in it.
func TestAPlaceTakenTooLateIsNotUsed(t *testing.T) {
	ctx := context.Background()
	start := time.Date(2026, 12, 1, 12, 0, 7, 0, time.UTC)

	t.Run("a reservation that ends past its window", func(t *testing.T) {
		clk := clocktest.NewFake(start.Add(400 * time.Millisecond))
		c := &slowCounters{Counters: counters(t), clk: clk, reserve: 200 * time.Millisecond}
		ok, _, err := speechkit.TakeSyncPlace(ctx, c, clk)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, int64(1), c.used(t, start), "the late place stays counted")
		require.Equal(t, int64(1), c.used(t, start.Add(speechkit.SyncWindow)), "the place used is the next window's")
	})
	t.Run("a reader of the next window missed it", func(t *testing.T) {
		// 19 places at the start of a window; another instance's
		// reservation in it, the twentieth, commits after the window
		// ended and after a third instance read it and took the next
		// window's place: used, it would make 21 within a second.
		clk := clocktest.NewFake(start)
		inner := counters(t)
		require.Len(t, places(t, inner, clk, 19), 19)
		var others []time.Time
		c := &hookCounters{Counters: inner, beforeReserve: func() {
			clk.Set(start.Add(speechkit.SyncWindow))
			others = places(t, inner, clk, 5)
		}}
		clk.Set(start.Add(speechkit.SyncWindow - time.Millisecond))
		ok, _, err := speechkit.TakeSyncPlace(ctx, c, clk)
		require.NoError(t, err)
		require.Len(t, others, 1, "the next window's reader saw 19")
		require.False(t, ok, "the late twentieth is not used, and no other place is left")
	})
	t.Run("reads that end past the window", func(t *testing.T) {
		clk := clocktest.NewFake(start.Add(400 * time.Millisecond))
		c := &slowCounters{Counters: counters(t), clk: clk, read: 50 * time.Millisecond}
		ok, _, err := speechkit.TakeSyncPlace(ctx, c, clk)
		require.NoError(t, err)
		require.True(t, ok)
		require.Zero(t, c.used(t, start), "nothing taken in the window that ended")
		require.Equal(t, int64(1), c.used(t, start.Add(speechkit.SyncWindow)))
	})
	t.Run("a store slower than every window", func(t *testing.T) {
		clk := clocktest.NewFake(start)
		c := &slowCounters{Counters: counters(t), clk: clk, read: speechkit.SyncWindow}
		ok, next, err := speechkit.TakeSyncPlace(ctx, c, clk)
		require.NoError(t, err)
		require.False(t, ok, "no place it could use")
		require.False(t, next.After(clk.Now()), "asked again at once")
	})
}

// hookCounters runs beforeReserve once, inside the first reservation,
// before it reaches the store.
type hookCounters struct {
	quota.Counters
	beforeReserve func()
}

func (c *hookCounters) Reserve(ctx context.Context, key string, window time.Time, amount, limit int64) (int64, bool, error) {
	if f := c.beforeReserve; f != nil {
		c.beforeReserve = nil
		f()
	}
	return c.Counters.Reserve(ctx, key, window, amount, limit)
}

// slowCounters moves the clock by read at each read and by reserve at
// each reservation, as a slow store would.
type slowCounters struct {
	quota.Counters
	clk           *clocktest.Fake
	read, reserve time.Duration
}

func (c *slowCounters) Used(ctx context.Context, key string, window time.Time) (int64, error) {
	c.clk.Advance(c.read)
	return c.Counters.Used(ctx, key, window)
}

func (c *slowCounters) Reserve(ctx context.Context, key string, window time.Time, amount, limit int64) (int64, bool, error) {
	used, ok, err := c.Counters.Reserve(ctx, key, window, amount, limit)
	c.clk.Advance(c.reserve)
	return used, ok, err
}

func (c *slowCounters) used(t *testing.T, window time.Time) int64 {
	t.Helper()
	n, err := c.Counters.Used(context.Background(), speechkit.SyncQuotaKey, window)
	require.NoError(t, err)
	return n
}

// Many instances at once never take more than twenty places of a second
// between them.
func TestTakeSyncPlaceUnderARace(t *testing.T) {
	ctx := context.Background()
	c := counters(t)
	clk := clocktest.NewFake(time.Date(2026, 12, 1, 12, 0, 7, 500_000_000, time.UTC))
	var taken, refused atomic.Int32
	racetest.Run(50, func(int) {
		ok, _, err := speechkit.TakeSyncPlace(ctx, c, clk)
		if err != nil {
			t.Error(err)
			return
		}
		if ok {
			taken.Add(1)
		} else {
			refused.Add(1)
		}
	})
	require.Equal(t, int32(speechkit.SyncRequestsPerSecond), taken.Load())
	require.Equal(t, int32(30), refused.Load())
}

// Without counters nothing is paced.
func TestTakeSyncPlaceWithoutCounters(t *testing.T) {
	for i := 0; i < 100; i++ {
		ok, _, err := speechkit.TakeSyncPlace(context.Background(), nil, clocktest.NewFake(time.Unix(0, 0)))
		require.NoError(t, err)
		require.True(t, ok)
	}
}

// A store that fails says so, and gives no place.
func TestTakeSyncPlaceWhenTheStoreFails(t *testing.T) {
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "c.db"), clock.System())
	require.NoError(t, err)
	c := sqlite.NewCounters(db)
	require.NoError(t, db.Close())
	ok, _, err := speechkit.TakeSyncPlace(context.Background(), c, clocktest.NewFake(time.Unix(0, 0)))
	require.Error(t, err)
	require.False(t, ok)
}
