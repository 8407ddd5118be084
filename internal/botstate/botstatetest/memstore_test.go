package botstatetest_test

import (
	"context"
	"sort"
	"sync"
	"time"

	"transcriber/internal/botstate"
)

// memStore is the smallest store that keeps the contract: maps under a
// mutex, written by the port's rules (botstate's Apply functions) as the
// real stores' rows are. With racy set, UpdateChat, Begin and ClaimDue read and write under
// separate locks, as a store does whose read-check-write is not one atomic
// step; the suite must catch it.
type memStore struct {
	racy       bool
	mu         sync.Mutex
	chats      map[int64]botstate.Chat
	deliveries map[botstate.Key]botstate.Delivery
}

var _ botstate.Store = (*memStore)(nil)

func newMemStore(racy bool) *memStore {
	return &memStore{racy: racy, chats: map[int64]botstate.Chat{}, deliveries: map[botstate.Key]botstate.Delivery{}}
}

// pause is the window in which a racy store's caller has read and not yet
// written, so another caller reads the same.
func (s *memStore) pause() {
	if s.racy {
		s.mu.Unlock()
		time.Sleep(time.Millisecond)
		s.mu.Lock()
	}
}

func (s *memStore) Chat(_ context.Context, id int64) (botstate.Chat, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.chats[id]
	if !ok {
		return botstate.Chat{ID: id}, nil
	}
	return c, nil
}

func (s *memStore) UpdateChat(_ context.Context, id int64, now time.Time, change func(*botstate.Chat)) (botstate.Chat, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.chats[id]
	if !ok {
		cur = botstate.Chat{ID: id}
	}
	s.pause()
	c, err := botstate.ApplyChatUpdate(cur, now, change)
	if err != nil {
		return botstate.Chat{}, err
	}
	s.chats[id] = c
	return c, nil
}

func (s *memStore) Begin(_ context.Context, k botstate.Key, jobID string, now time.Time, lease time.Duration) (botstate.Delivery, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, found := s.deliveries[k]
	s.pause()
	d, taken, err := botstate.ApplyBegin(cur, found, k, jobID, now, lease)
	if taken {
		s.deliveries[k] = d
	}
	return d, taken, err
}

func (s *memStore) Schedule(_ context.Context, k botstate.Key, jobID string, at, now time.Time) (botstate.Delivery, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, found := s.deliveries[k]
	d, created, err := botstate.ApplySchedule(cur, found, k, jobID, at, now)
	if created {
		s.deliveries[k] = d
	}
	return d, err
}

func (s *memStore) Finish(_ context.Context, k botstate.Key, o botstate.Outcome, now time.Time) (botstate.Delivery, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, found := s.deliveries[k]
	d, err := botstate.ApplyFinish(cur, found, k, o, now)
	if err != nil {
		return botstate.Delivery{}, err
	}
	s.deliveries[k] = d
	return d, nil
}

func (s *memStore) Get(_ context.Context, k botstate.Key) (botstate.Delivery, error) {
	if err := botstate.ValidateKey(k); err != nil {
		return botstate.Delivery{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.deliveries[k]
	if !ok {
		return botstate.Delivery{}, botstate.ErrNotFound
	}
	return d, nil
}

func (s *memStore) ClaimDue(_ context.Context, now time.Time, lease time.Duration, limit int) ([]botstate.Delivery, error) {
	if err := botstate.ValidateClaim(now, lease, limit); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	due := []botstate.Delivery{}
	for _, d := range s.deliveries {
		if botstate.Due(d, now) {
			due = append(due, d)
		}
	}
	sort.Slice(due, func(a, b int) bool { return due[a].NextAt.Before(due[b].NextAt) })
	if len(due) > limit {
		due = due[:limit]
	}
	s.pause()
	for i, cur := range due {
		d, err := botstate.ApplyClaim(cur, now, lease)
		if err != nil {
			return nil, err
		}
		due[i] = d
		s.deliveries[d.Key] = d
	}
	return due, nil
}

func (s *memStore) ForgetChat(_ context.Context, chatID int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.chats, chatID)
	for k := range s.deliveries {
		if k.ChatID == chatID {
			delete(s.deliveries, k)
		}
	}
	return nil
}
