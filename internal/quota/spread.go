package quota

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"
)

// A counter every instance changes (the request window, the synchronous
// quota's second) is one hot row: under YDB's optimistic locks, 16
// reservations at once abort 7.5 transactions each (docs/database.md, "Hot
// rows"). Spread spreads it over shards key#0 … key#n-1, each taking a
// share of the limit (shareOf), so the total never passes it. A
// reservation picks a shard at random among those whose share holds the
// amount, and passes to the next when it is full. The costs: a refusal
// reads every shard; an amount larger than a share is refused (callers
// take one at a time); Used reads n rows (in one statement with
// MultiReader); Reserve's total is the shard's, which no caller reads.
// A spread key refuses a reservation without a limit (ErrInvalid).
type spread struct {
	Counters
	shards int
	keys   map[string]bool
	pick   func(n int) int // a shard to start at; random
}

// DefaultShards: with 16 reservations at once, about one aborted
// transaction each, for n reads of the total.
const DefaultShards = 8

// Spread returns c with the counters of keys spread over shards rows
// each; shards < 2 returns c.
func Spread(c Counters, shards int, keys []string) Counters {
	if c == nil || shards < 2 || len(keys) == 0 {
		return c
	}
	s := &spread{Counters: c, shards: shards, keys: map[string]bool{}, pick: rand.IntN} //nolint:gosec // spreads load, no secret
	for _, k := range keys {
		s.keys[k] = true
	}
	if _, ok := c.(Expirer); ok {
		return spreadExpirer{s}
	}
	return s
}

// spreadExpirer is a spread counter over counters that expire themselves.
type spreadExpirer struct{ *spread }

func (s spreadExpirer) ExpireCounters(ctx context.Context, now time.Time) (int, error) {
	return s.Counters.(Expirer).ExpireCounters(ctx, now)
}

func shardKey(key string, i int) string { return key + "#" + strconv.Itoa(i) }

// shareOf is shard i's share of limit among n: limit/n, one more for the
// first limit mod n.
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

// check is Check, and the rows' names within MaxKey.
func (s *spread) check(key string, amount int64) error {
	if err := Check(key, amount); err != nil {
		return err
	}
	if len(shardKey(key, s.shards-1)) > MaxKey {
		return fmt.Errorf("%w: key %q leaves no room for its rows' names", ErrInvalid, key)
	}
	return nil
}

func (s *spread) Reserve(ctx context.Context, key string, window time.Time, amount, limit int64) (int64, bool, error) {
	if !s.keys[key] {
		return s.Counters.Reserve(ctx, key, window, amount, limit)
	}
	if err := s.check(key, amount); err != nil {
		return 0, false, err
	}
	if limit <= 0 {
		return 0, false, fmt.Errorf("%w: key %q is spread without additions beyond a limit", ErrInvalid, key)
	}
	open := s.shards // shares fall with i: the first open hold amount
	for open > 0 && shareOf(limit, s.shards, open-1) < amount {
		open--
	}
	if open == 0 {
		return 0, false, nil
	}
	var seen int64
	first := s.pick(open)
	for j := range open {
		i := (first + j) % open
		used, ok, err := s.Counters.Reserve(ctx, shardKey(key, i), window, amount, shareOf(limit, s.shards, i))
		if err != nil {
			return 0, false, err
		}
		if ok {
			return used, true, nil
		}
		seen += used
	}
	return seen, false, nil
}

// Release takes amount off the shards, from one picked at random on,
// never below 0 in any: each is read first, so a release racing another
// may take less than amount, leaving the total higher, never lower.
func (s *spread) Release(ctx context.Context, key string, window time.Time, amount int64) error {
	if !s.keys[key] {
		return s.Counters.Release(ctx, key, window, amount)
	}
	if err := s.check(key, amount); err != nil {
		return err
	}
	first := s.pick(s.shards)
	left := amount
	for j := 0; j < s.shards; j++ {
		row := shardKey(key, (first+j)%s.shards)
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

// Used is the sum of the shards.
func (s *spread) Used(ctx context.Context, key string, window time.Time) (int64, error) {
	if !s.keys[key] {
		return s.Counters.Used(ctx, key, window)
	}
	if err := CheckKey(key); err != nil {
		return 0, err
	}
	rows := make([]string, 0, s.shards)
	for i := 0; i < s.shards; i++ {
		rows = append(rows, shardKey(key, i))
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
