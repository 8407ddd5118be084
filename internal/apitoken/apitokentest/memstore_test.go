package apitokentest_test

import (
	"context"
	"sort"
	"sync"
	"time"

	"transcriber/internal/apitoken"
)

// memStore is the smallest store that keeps the contract: a map under a
// mutex.
type memStore struct {
	mu     sync.Mutex
	byHash map[string]apitoken.Token
}

var _ apitoken.Store = (*memStore)(nil)

func newMemStore() *memStore { return &memStore{byHash: map[string]apitoken.Token{}} }

func stored(t apitoken.Token) apitoken.Token {
	for _, at := range []*time.Time{&t.CreatedAt, &t.RevokedAt} {
		if !at.IsZero() {
			*at = at.UTC().Truncate(time.Millisecond)
		}
	}
	return t
}

func (s *memStore) Create(_ context.Context, t apitoken.Token) error {
	if err := t.Check(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, other := range s.byHash {
		if other.ID == t.ID || other.Hash == t.Hash {
			return apitoken.ErrConflict
		}
	}
	s.byHash[t.Hash] = stored(t)
	return nil
}

func (s *memStore) ByHash(_ context.Context, hash string) (apitoken.Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.byHash[hash]
	if !ok {
		return apitoken.Token{}, apitoken.ErrNotFound
	}
	return t, nil
}

func (s *memStore) List(context.Context) ([]apitoken.Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	list := make([]apitoken.Token, 0, len(s.byHash))
	for _, t := range s.byHash {
		list = append(list, t)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].ID < list[j].ID })
	return list, nil
}

func (s *memStore) Revoke(_ context.Context, id string, now time.Time) (apitoken.Token, error) {
	id, err := apitoken.ParseID(id)
	if err != nil {
		return apitoken.Token{}, err
	}
	if now.IsZero() {
		return apitoken.Token{}, apitoken.ErrInvalid
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for hash, t := range s.byHash {
		if t.ID != id {
			continue
		}
		if !t.Revoked() {
			t.RevokedAt = now
			t = stored(t)
			s.byHash[hash] = t
		}
		return t, nil
	}
	return apitoken.Token{}, apitoken.ErrNotFound
}
