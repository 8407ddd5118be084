package botstatetest_test

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"transcriber/internal/telegram/botstate"
)

// memStore is the smallest store that keeps the contract: maps under a
// mutex. With racy set, UpdateChat, Begin and ClaimDue read and write under
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

// ms is t as the store keeps it: UTC, whole milliseconds.
func ms(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.UTC().Truncate(time.Millisecond)
}

func checkKey(k botstate.Key) error {
	switch {
	case k.ChatID == 0:
		return fmt.Errorf("%w: no chat id", botstate.ErrInvalid)
	case k.MessageID == 0:
		return fmt.Errorf("%w: no message id", botstate.ErrInvalid)
	case k.Part == "":
		return fmt.Errorf("%w: no part", botstate.ErrInvalid)
	case len(k.Part) > botstate.MaxPartLen:
		return fmt.Errorf("%w: part longer than %d bytes", botstate.ErrInvalid, botstate.MaxPartLen)
	}
	return nil
}

func checkLease(lease time.Duration) error {
	if lease <= 0 {
		return fmt.Errorf("%w: lease %s is not positive", botstate.ErrInvalid, lease)
	}
	return nil
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
	c, ok := s.chats[id]
	if !ok {
		c = botstate.Chat{ID: id}
	}
	s.pause()
	change(&c)
	if c.ID != id {
		return botstate.Chat{}, fmt.Errorf("%w: change altered the chat id", botstate.ErrInvalid)
	}
	c.BlockedAt, c.UpdatedAt = ms(c.BlockedAt), ms(now)
	s.chats[id] = c
	return c, nil
}

func (s *memStore) Begin(_ context.Context, k botstate.Key, jobID string, now time.Time, lease time.Duration) (botstate.Delivery, bool, error) {
	if err := checkKey(k); err != nil {
		return botstate.Delivery{}, false, err
	}
	if err := checkLease(lease); err != nil {
		return botstate.Delivery{}, false, err
	}
	now = ms(now)
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.deliveries[k]
	s.pause()
	switch {
	case !ok:
		until := ms(now.Add(lease))
		d = botstate.Delivery{Key: k, JobID: jobID, State: botstate.Pending, Attempts: 1,
			NextAt: until, LeaseUntil: until, UpdatedAt: now}
	case d.State == botstate.Pending && !d.LeaseUntil.After(now):
		d = take(d, now, lease)
	default:
		return d, false, nil
	}
	s.deliveries[k] = d
	return d, true, nil
}

func take(d botstate.Delivery, now time.Time, lease time.Duration) botstate.Delivery {
	d.Attempts++
	d.LeaseUntil = ms(now.Add(lease))
	d.UpdatedAt = now
	return d
}

func (s *memStore) Schedule(_ context.Context, k botstate.Key, jobID string, at, now time.Time) (botstate.Delivery, error) {
	if err := checkKey(k); err != nil {
		return botstate.Delivery{}, err
	}
	now = ms(now)
	s.mu.Lock()
	defer s.mu.Unlock()
	if d, ok := s.deliveries[k]; ok {
		return d, nil
	}
	d := botstate.Delivery{Key: k, JobID: jobID, State: botstate.Pending, NextAt: ms(at), LeaseUntil: now, UpdatedAt: now}
	s.deliveries[k] = d
	return d, nil
}

func (s *memStore) Finish(_ context.Context, k botstate.Key, o botstate.Outcome, now time.Time) (botstate.Delivery, error) {
	if err := checkKey(k); err != nil {
		return botstate.Delivery{}, err
	}
	switch o.State {
	case botstate.Sent, botstate.Abandoned:
	case botstate.Pending:
		if o.NextAt.IsZero() {
			return botstate.Delivery{}, fmt.Errorf("%w: pending without NextAt", botstate.ErrInvalid)
		}
	default:
		return botstate.Delivery{}, fmt.Errorf("%w: state %q", botstate.ErrInvalid, o.State)
	}
	now = ms(now)
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.deliveries[k]
	if !ok {
		return botstate.Delivery{}, botstate.ErrNotFound
	}
	if d.State == botstate.Pending {
		d.State = o.State
		if o.SentID != 0 {
			d.SentID = o.SentID
		}
		if o.State == botstate.Pending {
			d.NextAt = ms(o.NextAt)
		}
	} else if o.State == botstate.Sent && o.SentID != 0 {
		d.SentID = o.SentID
	}
	d.LeaseUntil, d.UpdatedAt = now, now
	s.deliveries[k] = d
	return d, nil
}

func (s *memStore) Get(_ context.Context, k botstate.Key) (botstate.Delivery, error) {
	if err := checkKey(k); err != nil {
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
	if limit < 1 || limit > botstate.MaxClaimLimit {
		return nil, fmt.Errorf("%w: limit %d is out of 1..%d", botstate.ErrInvalid, limit, botstate.MaxClaimLimit)
	}
	if err := checkLease(lease); err != nil {
		return nil, err
	}
	now = ms(now)
	s.mu.Lock()
	defer s.mu.Unlock()
	due := []botstate.Delivery{}
	for _, d := range s.deliveries {
		if d.State == botstate.Pending && !d.NextAt.After(now) && !d.LeaseUntil.After(now) {
			due = append(due, d)
		}
	}
	sort.Slice(due, func(a, b int) bool { return due[a].NextAt.Before(due[b].NextAt) })
	if len(due) > limit {
		due = due[:limit]
	}
	s.pause()
	for i, d := range due {
		due[i] = take(d, now, lease)
		s.deliveries[d.Key] = due[i]
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
