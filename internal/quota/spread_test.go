package quota_test

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/quota"
	"transcriber/internal/racetest"
)

// occStore is a quota.Counters with optimistic locks, as YDB's: a change
// reads its row and the row's version, and commits only if the version is
// still the one it read; otherwise it aborts (counted) and runs again from
// its read, as the SDK runs a transaction whose locks were broken. A
// refusal reads only, and aborts the same way when the row changed.
//
// In lock step (race), each run of each change reads, then waits until
// every change still in the race has read, then commits: all at once, the
// worst case, so on a row read by k changes one commits and k−1 abort.
type occStore struct {
	mu      sync.Mutex
	cond    *sync.Cond
	rows    map[string]occRow
	aborts  int
	commits int

	lockstep bool
	active   int // changes in the race, not yet done
	waiting  int // of those, the ones that read in this round
	round    int
}

type occRow struct {
	used    int64
	version int
}

func newOCCStore() *occStore {
	s := &occStore{rows: map[string]occRow{}}
	s.cond = sync.NewCond(&s.mu)
	return s
}

func occKey(key string, w time.Time) string { return key + "@" + w.UTC().Format(time.RFC3339Nano) }

// race puts n changes in lock step; each calls done when it has no more.
func (s *occStore) race(n int) (done func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lockstep, s.active, s.waiting = true, n, 0
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.active--
		s.release()
	}
}

// release ends the round when every active change has read. With mu held.
func (s *occStore) release() {
	if s.active > 0 && s.waiting >= s.active {
		s.waiting = 0
		s.round++
		s.cond.Broadcast()
	}
}

// read waits, in lock step, for the round's other reads. With mu held.
func (s *occStore) read() {
	if !s.lockstep {
		return
	}
	s.waiting++
	round := s.round
	s.release()
	for s.round == round {
		s.cond.Wait()
	}
}

func (s *occStore) change(key string, w time.Time, decide func(used int64) (next int64, write bool)) int64 {
	k := occKey(key, w)
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		seen := s.rows[k]
		s.read()
		next, write := decide(seen.used)
		if s.rows[k].version != seen.version {
			s.aborts++
			continue
		}
		if write {
			s.rows[k] = occRow{used: next, version: seen.version + 1}
			s.commits++
		}
		return next
	}
}

func (s *occStore) Reserve(_ context.Context, key string, w time.Time, amount, limit int64) (int64, bool, error) {
	if err := quota.Check(key, amount); err != nil {
		return 0, false, err
	}
	var ok bool
	used := s.change(key, w, func(used int64) (int64, bool) {
		ok = quota.Fits(used, amount, limit)
		if !ok {
			return used, false
		}
		return used + amount, true
	})
	return used, ok, nil
}

func (s *occStore) Release(_ context.Context, key string, w time.Time, amount int64) error {
	if err := quota.Check(key, amount); err != nil {
		return err
	}
	s.change(key, w, func(used int64) (int64, bool) { return quota.Less(used, amount), used > 0 })
	return nil
}

func (s *occStore) Used(_ context.Context, key string, w time.Time) (int64, error) {
	if err := quota.CheckKey(key); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rows[occKey(key, w)].used, nil // a snapshot: no lock, no abort
}

var (
	ctx    = context.Background()
	window = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
)

// seeded is a goroutine-safe random pick with a fixed seed.
func seeded() func(int) int {
	var mu sync.Mutex
	r := rand.New(rand.NewPCG(1, 2)) //nolint:gosec // a test's choices
	return func(n int) int {
		mu.Lock()
		defer mu.Unlock()
		return r.IntN(n)
	}
}

// Racers reserving one each against a limit in a spread counter: exactly
// limit win, the total never passes it, whatever the shards.
func TestSpreadNeverPassesTheLimit(t *testing.T) {
	for _, tc := range []struct {
		name          string
		racers, limit int
	}{
		{"limit under the shards", 16, 3},
		{"limit over the shards", 16, 11},
		{"limit over the racers", 16, 40},
		{"the synchronous quota's 20 a second", 32, 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := newOCCStore()
			c := quota.WithPick(quota.Spread(base, quota.DefaultShards, []string{"hot"}), seeded())
			for round := 0; round < 20; round++ {
				w := window.Add(time.Duration(round) * time.Hour)
				var won atomic.Int64
				racetest.Run(tc.racers, func(int) {
					_, ok, err := c.Reserve(ctx, "hot", w, 1, int64(tc.limit))
					require.NoError(t, err)
					if ok {
						won.Add(1)
					}
				})
				want := min(tc.racers, tc.limit)
				require.Equal(t, int64(want), won.Load(), "round %d", round)
				used, err := c.Used(ctx, "hot", w)
				require.NoError(t, err)
				require.Equal(t, int64(want), used, "round %d: the total is the sum of the rows", round)
			}
		})
	}
}

// A release takes from the rows what they hold, never below 0; the
// counter's total falls by the amount.
func TestSpreadReleases(t *testing.T) {
	c := quota.Spread(newOCCStore(), quota.DefaultShards, []string{"hot"})
	for i := 0; i < 5; i++ {
		_, ok, err := c.Reserve(ctx, "hot", window, 1, 100)
		require.NoError(t, err)
		require.True(t, ok)
	}
	_, ok, err := c.Reserve(ctx, "hot", window, 2, 100)
	require.NoError(t, err)
	require.True(t, ok)
	require.NoError(t, c.Release(ctx, "hot", window, 4))
	used, err := c.Used(ctx, "hot", window)
	require.NoError(t, err)
	require.Equal(t, int64(3), used)
	require.NoError(t, c.Release(ctx, "hot", window, 10))
	used, err = c.Used(ctx, "hot", window)
	require.NoError(t, err)
	require.Zero(t, used, "never below 0")
	_, ok, err = c.Reserve(ctx, "hot", window, 1, 1)
	require.NoError(t, err)
	require.True(t, ok, "no debt left behind")
}

// The trade-off of splitting the limit: an amount larger than one share
// is refused though the total has room. Keys not spread keep the contract.
func TestSpreadSplitsTheLimit(t *testing.T) {
	c := quota.Spread(newOCCStore(), 4, []string{"hot"})
	_, ok, err := c.Reserve(ctx, "hot", window, 3, 10)
	require.NoError(t, err)
	require.True(t, ok, "10 over 4 shards: shares of 3, 3, 2 and 2; 3 fits the first two")
	_, ok, err = c.Reserve(ctx, "hot", window, 4, 10)
	require.NoError(t, err)
	require.False(t, ok, "no share holds 4")
	_, ok, err = c.Reserve(ctx, "cold", window, 10, 10)
	require.NoError(t, err)
	require.True(t, ok, "a key not spread is one row")
	_, _, err = c.Reserve(ctx, "hot", window, 0, 10)
	require.ErrorIs(t, err, quota.ErrInvalid)
}

// The figure of docs/database.md, "Hot rows": aborted transactions per
// reservation with 16 reservers at once, in lock step (every one reads
// before any commits: the worst case), on one row and spread.
func TestHotRowAborts(t *testing.T) {
	const racers, races = 16, 200
	measure := func(c quota.Counters, base *occStore, limit int64) (aborts, perReservation float64) {
		for r := 0; r < races; r++ {
			w := window.Add(time.Duration(r) * time.Minute)
			done := base.race(racers)
			var wg sync.WaitGroup
			for i := 0; i < racers; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					defer done()
					_, _, err := c.Reserve(ctx, "hot", w, 1, limit)
					require.NoError(t, err)
				}()
			}
			wg.Wait()
		}
		return float64(base.aborts), float64(base.aborts) / (racers * races)
	}

	one := newOCCStore()
	_, oneRow := measure(one, one, 1000)
	require.InDelta(t, 7.5, oneRow, 1e-9, "one row: 15 + 14 + … + 0 aborts for 16 reservations")

	spreadBase := newOCCStore()
	spread := quota.WithPick(quota.Spread(spreadBase, quota.DefaultShards, []string{"hot"}), seeded())
	_, spreadRows := measure(spread, spreadBase, 1000)
	require.Less(t, spreadRows, 1.2, "spread: about C(16,2)/8 / 16 = 0.94")

	tightBase := newOCCStore()
	tight := quota.WithPick(quota.Spread(tightBase, quota.DefaultShards, []string{"hot"}), seeded())
	_, tightRows := measure(tight, tightBase, 8)
	require.Less(t, tightRows, oneRow, "a limit under the racers: full shards pass reservations on")

	t.Logf("aborted transactions per reservation, %d reservers at once, %d races: one row %.2f; %d shards %.2f; %d shards, limit 8: %.2f",
		racers, races, oneRow, quota.DefaultShards, spreadRows, quota.DefaultShards, tightRows)
}

// readsOf counts the reads of each row of a quota.Counters.
type readsOf struct {
	quota.Counters
	mu    sync.Mutex
	reads map[string]int
}

func (r *readsOf) Used(ctx context.Context, key string, w time.Time) (int64, error) {
	r.mu.Lock()
	r.reads[key]++
	r.mu.Unlock()
	return r.Counters.Used(ctx, key, w)
}

// A spread key reads only its shards, and refuses an addition without a
// limit, which no shard's share could hold.
func TestASpreadKeyRefusesAdditionsWithoutALimit(t *testing.T) {
	ctx := context.Background()
	w := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	r := &readsOf{Counters: newOCCStore(), reads: map[string]int{}}
	c := quota.Spread(r, quota.DefaultShards, []string{"paced"})

	_, ok, err := c.Reserve(ctx, "paced", w, 1, 10)
	require.NoError(t, err)
	require.True(t, ok)
	n, err := c.Used(ctx, "paced", w)
	require.NoError(t, err)
	require.Equal(t, int64(1), n)
	for k := range r.reads {
		require.Regexp(t, `^paced#[0-7]$`, k, "only the shards are read")
	}
	_, _, err = c.Reserve(ctx, "paced", w, 1, 0)
	require.ErrorIs(t, err, quota.ErrInvalid, "an addition without a limit is refused")
}

// manyReads is a quota.Counters that also reads several rows in one call
// (quota.MultiReader), counting each kind of read.
type manyReads struct {
	*occStore
	mu          sync.Mutex
	used, calls int      // Used calls, UsedMany calls
	keys        []string // the keys of the last UsedMany
}

func (m *manyReads) Used(ctx context.Context, key string, w time.Time) (int64, error) {
	m.mu.Lock()
	m.used++
	m.mu.Unlock()
	return m.occStore.Used(ctx, key, w)
}

func (m *manyReads) UsedMany(ctx context.Context, keys []string, w time.Time) (map[string]int64, error) {
	if err := quota.CheckKeys(keys); err != nil {
		return nil, err
	}
	m.mu.Lock()
	m.calls++
	m.keys = append([]string(nil), keys...)
	m.mu.Unlock()
	out := make(map[string]int64, len(keys))
	for _, k := range keys {
		n, err := m.occStore.Used(ctx, k, w)
		if err != nil {
			return nil, err
		}
		out[k] = n
	}
	return out, nil
}

// A spread counter's total is one read of its rows when the counters can
// read several at once (the YDB store's one statement), where it was a
// read a row: 8 over 8 shards.
func TestSpreadUsedReadsItsRowsAtOnce(t *testing.T) {
	w := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	fill := func(c quota.Counters) {
		t.Helper()
		for i := 0; i < 5; i++ {
			_, ok, err := c.Reserve(ctx, "counted", w, 1, 100)
			require.NoError(t, err)
			require.True(t, ok)
		}
	}

	many := &manyReads{occStore: newOCCStore()}
	c := quota.Spread(many, quota.DefaultShards, []string{"counted"})
	fill(c)
	many.used, many.calls = 0, 0
	n, err := c.Used(ctx, "counted", w)
	require.NoError(t, err)
	require.Equal(t, int64(5), n)
	require.Equal(t, 1, many.calls, "one read of every row")
	require.Zero(t, many.used, "no row read alone")
	require.Len(t, many.keys, quota.DefaultShards, "the shards")

	one := &readsOf{Counters: newOCCStore(), reads: map[string]int{}}
	c = quota.Spread(one, quota.DefaultShards, []string{"counted"})
	fill(c)
	clear(one.reads)
	n, err = c.Used(ctx, "counted", w)
	require.NoError(t, err)
	require.Equal(t, int64(5), n, "the same total")
	reads := 0
	for _, k := range one.reads {
		reads += k
	}
	require.Equal(t, quota.DefaultShards, reads, "without it, a read a row")

	many.used, many.calls = 0, 0
	_, err = quota.Spread(many, quota.DefaultShards, []string{"counted"}).Used(ctx, "cold", w)
	require.NoError(t, err)
	require.Equal(t, 1, many.used, "a key not spread is one row, read alone")
	require.Zero(t, many.calls)
}
