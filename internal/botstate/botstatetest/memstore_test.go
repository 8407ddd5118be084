package botstatetest_test

import (
	"context"
	"sync"
	"time"

	"transcriber/internal/botstate"
)

// memStore is the smallest store that keeps the contract: a map under a
// mutex, written by ApplyChatUpdate as the real stores' rows are. With
// racy set, UpdateChat reads and writes under separate locks, as a store
// does whose read-check-write is not one atomic step; the suite must catch
// it.
type memStore struct {
	racy  bool
	mu    sync.Mutex
	chats map[int64]botstate.Chat
}

var _ botstate.Store = (*memStore)(nil)

func newMemStore(racy bool) *memStore {
	return &memStore{racy: racy, chats: map[int64]botstate.Chat{}}
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

func (s *memStore) ForgetChat(_ context.Context, chatID int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.chats, chatID)
	return nil
}
