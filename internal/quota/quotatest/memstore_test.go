package quotatest_test

import (
	"context"
	"sync"
	"time"

	"transcriber/internal/quota"
)

// memStore is the smallest store that keeps the contract: a map under a
// mutex. With racy set, Reserve reads and writes under separate locks, as a
// store does whose reservation is not one atomic step; the suite must catch
// it.
type memStore struct {
	racy bool
	mu   sync.Mutex
	rows map[memKey]int64
}

type memKey struct {
	key    string
	window int64 // UnixMilli: one moment, whatever its zone
}

var (
	_ quota.Counters    = (*memStore)(nil)
	_ quota.Expirer     = (*memStore)(nil)
	_ quota.MultiReader = (*memStore)(nil)
)

func newMemStore(racy bool) *memStore { return &memStore{racy: racy, rows: map[memKey]int64{}} }

func keyOf(key string, w time.Time) memKey { return memKey{key, w.UnixMilli()} }

func (s *memStore) Reserve(_ context.Context, key string, w time.Time, amount, limit int64) (int64, bool, error) {
	if err := quota.Check(key, amount); err != nil {
		return 0, false, err
	}
	k := keyOf(key, w)
	if s.racy {
		s.mu.Lock()
		cur := s.rows[k]
		s.mu.Unlock()
		if !quota.Fits(cur, amount, limit) {
			return cur, false, nil
		}
		time.Sleep(time.Millisecond) // the window in which another reserver reads the same total
		s.mu.Lock()
		defer s.mu.Unlock()
		s.rows[k] = cur + amount
		return cur + amount, true, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cur := s.rows[k]
	if !quota.Fits(cur, amount, limit) {
		return cur, false, nil
	}
	s.rows[k] = cur + amount
	return cur + amount, true, nil
}

func (s *memStore) Release(_ context.Context, key string, w time.Time, amount int64) error {
	if err := quota.Check(key, amount); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k := keyOf(key, w)
	if cur, ok := s.rows[k]; ok {
		s.rows[k] = quota.Less(cur, amount)
	}
	return nil
}

func (s *memStore) Used(_ context.Context, key string, w time.Time) (int64, error) {
	if err := quota.CheckKey(key); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rows[keyOf(key, w)], nil
}

func (s *memStore) UsedMany(_ context.Context, keys []string, w time.Time) (map[string]int64, error) {
	if err := quota.CheckKeys(keys); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int64, len(keys))
	for _, k := range keys {
		out[k] = s.rows[keyOf(k, w)]
	}
	return out, nil
}

func (s *memStore) ExpireCounters(_ context.Context, now time.Time) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for k := range s.rows {
		if !quota.ExpiresAt(k.key, time.UnixMilli(k.window)).After(now) {
			delete(s.rows, k)
			n++
		}
	}
	return n, nil
}
