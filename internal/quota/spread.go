package quota

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"
)

// A counter every instance of the installation changes (the recognizer's
// request window, the recognitions in flight, the synchronous quota's
// second) is one row that every reservation reads and writes. Under YDB's
// optimistic locks, reservations that meet on a row abort each other and
// run again: with 16 at once on one row, 7.5 aborted transactions a
// reservation (docs/database.md, "Hot rows"). Spread spreads such a
// counter over several rows, its shards, each taking a share of the limit.
//
// A spread counter of key is the rows key#0 … key#n-1, the shards, which
// hold what reservations with a limit took, and, for an additive key
// only, key#+, which holds what was added without one (limit ≤ 0: the
// in-flight count's recount of the recognitions already running). Its
// total is the sum of the rows. A key that is not additive refuses an
// addition without a limit (ErrInvalid), so its reservations need not
// read key#+ (u is 0).
//
// A reservation with a limit reads key#+ (u) when the key is additive,
// splits limit−u among the
// shards (shareOf: the first (limit−u) mod n get one more), picks a shard
// at random among those whose share holds the amount, and reserves in it
// against its share; a shard that is full passes the reservation to the
// next, in turn, until one takes it or all refused. No shard passes its
// share, so the shards hold at most limit−u and the total at most limit:
// the limit is never passed. What it costs:
//
//   - a reservation refused because every shard is full reads each shard
//     once (n transactions) where one row took one;
//   - the limit is split, so an amount larger than one share is refused
//     even when the total has room for it, and a shard full while another
//     has room refuses, to pass it on (the callers of spread counters take
//     one at a time);
//   - u is read before the shard's transaction, not in it: an addition
//     without a limit committed in between is not seen by that one
//     reservation (additions without a limit are the recount of
//     recognitions already counted in the window before, a few a minute);
//   - Used reads n rows (n+1 for an additive key): in one statement when
//     the counters offer MultiReader (both stores do), else one by one;
//     a Release finds a row to take from by reading them one by one
//     (usually the first is enough);
//   - Reserve's total, for a spread counter, is the shard's (and key#+'s)
//     as that reservation read them, not the sum: no caller of a spread
//     counter reads it.
type spread struct {
	Counters
	shards   int
	keys     map[string]bool
	additive map[string]bool // keys that also take additions without a limit
	pick     func(n int) int // a shard to start at; random
}

// DefaultShards is how many shards Spread gives a counter: with 16
// reservations at once, about one aborted transaction a reservation
// where one row has 7.5 (docs/database.md, "Hot rows"), for n+1 reads of
// the total.
const DefaultShards = 8

// Spread returns c with the counters of keys spread over shards rows each
// (see above), those of additive too (they are spread and also take
// additions without a limit); other keys are c's. shards < 2 returns c.
func Spread(c Counters, shards int, keys []string, additive ...string) Counters {
	if c == nil || shards < 2 || len(keys)+len(additive) == 0 {
		return c
	}
	s := &spread{Counters: c, shards: shards, keys: map[string]bool{}, additive: map[string]bool{}, pick: rand.IntN} //nolint:gosec // spreads load, no secret
	for _, k := range keys {
		s.keys[k] = true
	}
	for _, k := range additive {
		s.keys[k], s.additive[k] = true, true
	}
	if _, ok := c.(Expirer); ok {
		return spreadExpirer{s}
	}
	return s
}

// spreadExpirer is a spread counter over counters that expire themselves
// (the embedded store's): their ExpireCounters removes every row.
type spreadExpirer struct{ *spread }

func (s spreadExpirer) ExpireCounters(ctx context.Context, now time.Time) (int, error) {
	return s.Counters.(Expirer).ExpireCounters(ctx, now)
}

// shardKey is the row of shard i of key.
func shardKey(key string, i int) string { return key + "#" + strconv.Itoa(i) }

// unlimitedKey is the row of what was added to key without a limit.
func unlimitedKey(key string) string { return key + "#+" }

// shareOf is shard i's share of limit split among n shards: limit/n, and
// one more for the first limit mod n; 0 when limit ≤ 0.
func shareOf(limit int64, n, i int) int64 {
	if limit <= 0 {
		return 0
	}
	share := limit / int64(n)
	if int64(i) < limit%int64(n) {
		share++
	}
	return share
}

// check is the argument rule of a spread key: Check, and its rows' names
// within MaxKey.
func (s *spread) check(key string, amount int64) error {
	if err := Check(key, amount); err != nil {
		return err
	}
	if longest := max(len(shardKey(key, s.shards-1)), len(unlimitedKey(key))); longest > MaxKey {
		return fmt.Errorf("%w: key %q leaves no room for its rows' names", ErrInvalid, key)
	}
	return nil
}

// Reserve reserves amount in a spread counter as described above.
func (s *spread) Reserve(ctx context.Context, key string, window time.Time, amount, limit int64) (int64, bool, error) {
	if !s.keys[key] {
		return s.Counters.Reserve(ctx, key, window, amount, limit)
	}
	if err := s.check(key, amount); err != nil {
		return 0, false, err
	}
	if limit <= 0 {
		if !s.additive[key] {
			return 0, false, fmt.Errorf("%w: key %q is spread without additions beyond a limit", ErrInvalid, key)
		}
		return s.Counters.Reserve(ctx, unlimitedKey(key), window, amount, 0)
	}
	var u int64
	if s.additive[key] {
		var err error
		if u, err = s.Counters.Used(ctx, unlimitedKey(key), window); err != nil {
			return 0, false, err
		}
	}
	room := limit - u
	var open []int // the shards whose share holds amount
	for i := 0; i < s.shards; i++ {
		if shareOf(room, s.shards, i) >= amount {
			open = append(open, i)
		}
	}
	seen := u
	if len(open) == 0 {
		return seen, false, nil
	}
	first := s.pick(len(open))
	for j := range open {
		i := open[(first+j)%len(open)]
		used, ok, err := s.Counters.Reserve(ctx, shardKey(key, i), window, amount, shareOf(room, s.shards, i))
		if err != nil {
			return 0, false, err
		}
		if ok {
			return u + used, true, nil
		}
		seen += used
	}
	return seen, false, nil
}

// Release takes amount off a spread counter's rows, never below 0 in any:
// from a shard picked at random and those after it, then from key#+. A
// row is read before it is released from, so the release takes what it
// holds; a release racing another on a row may take less than amount,
// which leaves the total higher, never lower.
func (s *spread) Release(ctx context.Context, key string, window time.Time, amount int64) error {
	if !s.keys[key] {
		return s.Counters.Release(ctx, key, window, amount)
	}
	if err := s.check(key, amount); err != nil {
		return err
	}
	rows := make([]string, 0, s.shards+1)
	first := s.pick(s.shards)
	for j := 0; j < s.shards; j++ {
		rows = append(rows, shardKey(key, (first+j)%s.shards))
	}
	if s.additive[key] {
		rows = append(rows, unlimitedKey(key))
	}
	left := amount
	for _, row := range rows {
		held, err := s.Counters.Used(ctx, row, window)
		if err != nil {
			return err
		}
		if held == 0 {
			continue
		}
		take := min(held, left)
		if err := s.Counters.Release(ctx, row, window, take); err != nil {
			return err
		}
		if left -= take; left == 0 {
			return nil
		}
	}
	return nil
}

// Used is the sum of a spread counter's rows: read in one call when the
// counters offer MultiReader, else row by row.
func (s *spread) Used(ctx context.Context, key string, window time.Time) (int64, error) {
	if !s.keys[key] {
		return s.Counters.Used(ctx, key, window)
	}
	if err := CheckKey(key); err != nil {
		return 0, err
	}
	rows := make([]string, 0, s.shards+1)
	for i := 0; i < s.shards; i++ {
		rows = append(rows, shardKey(key, i))
	}
	if s.additive[key] {
		rows = append(rows, unlimitedKey(key))
	}
	var total int64
	if m, ok := s.Counters.(MultiReader); ok {
		got, err := m.UsedMany(ctx, rows, window)
		if err != nil {
			return 0, err
		}
		for _, row := range rows {
			total += got[row]
		}
		return total, nil
	}
	for _, row := range rows {
		n, err := s.Counters.Used(ctx, row, window)
		if err != nil {
			return 0, err
		}
		total += n
	}
	return total, nil
}
