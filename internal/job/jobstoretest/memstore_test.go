package jobstoretest_test

import (
	"context"
	"sort"
	"sync"
	"time"

	"transcriber/internal/clock"
	"transcriber/internal/errs"
	"transcriber/internal/job"
)

// memStore is the smallest store that keeps the contract: a map under a
// mutex, with the rules of job.Apply*. With racy set, Claim reads and writes
// under separate locks, as a store does whose claim is not one atomic step;
// the suite must catch it.
type memStore struct {
	clk    clock.Clock
	racy   bool
	mu     sync.Mutex
	jobs   map[string]job.Job
	msgs   map[[2]int64]string
	broken bool
}

var (
	_ job.Store     = (*memStore)(nil)
	_ job.Expirer   = (*memStore)(nil)
	_ job.Reclaimer = (*memStore)(nil)
)

func newMemStore(clk clock.Clock, racy bool) *memStore {
	return &memStore{clk: clk, racy: racy, jobs: map[string]job.Job{}, msgs: map[[2]int64]string{}}
}

var errBroken = errs.New(errs.Unavailable, "backend_down", "the store is unavailable")

func (s *memStore) now() time.Time { return s.clk.Now().Truncate(time.Millisecond) }

func (s *memStore) lock() error {
	s.mu.Lock()
	if s.broken {
		s.mu.Unlock()
		return errBroken
	}
	return nil
}

func (s *memStore) breakBackend() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.broken = true
}

func (s *memStore) Create(_ context.Context, d job.Draft) (job.Job, error) {
	j, err := job.NewJob(d, s.now())
	if err != nil {
		return job.Job{}, err
	}
	if err := s.lock(); err != nil {
		return job.Job{}, err
	}
	defer s.mu.Unlock()
	s.jobs[j.ID] = j
	return j, nil
}

func (s *memStore) CreateForMessage(_ context.Context, d job.Draft) (job.Job, bool, error) {
	j, err := job.NewMessageJob(d, s.now())
	if err != nil {
		return job.Job{}, false, err
	}
	if err := s.lock(); err != nil {
		return job.Job{}, false, err
	}
	defer s.mu.Unlock()
	key := [2]int64{d.TelegramChatID, d.TelegramMessageID}
	if id, ok := s.msgs[key]; ok {
		return s.jobs[id], false, nil
	}
	s.jobs[j.ID] = j
	s.msgs[key] = j.ID
	return j, true, nil
}

func (s *memStore) CreateOnce(_ context.Context, d job.Draft) (job.Job, bool, error) {
	j, err := job.NewKeyedJob(d, s.now())
	if err != nil {
		return job.Job{}, false, err
	}
	if err := s.lock(); err != nil {
		return job.Job{}, false, err
	}
	defer s.mu.Unlock()
	for _, other := range s.jobs {
		if other.OwnerID == d.OwnerID && other.IdempotencyKey == d.IdempotencyKey {
			return other, false, nil
		}
	}
	s.jobs[j.ID] = j
	return j, true, nil
}

func (s *memStore) Delete(_ context.Context, id string) (job.Job, error) {
	return s.update(id, func(cur job.Job) (job.Job, error) {
		if cur.TelegramChatID != 0 {
			delete(s.msgs, [2]int64{cur.TelegramChatID, cur.TelegramMessageID})
		}
		return job.ApplyDelete(cur, s.now()), nil
	})
}

func (s *memStore) Expired(_ context.Context, before time.Time, limit int) ([]job.Job, error) {
	if err := job.CheckClaimLimit(limit); err != nil {
		return nil, err
	}
	if err := s.lock(); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	var out []job.Job
	for _, j := range s.jobs {
		if !j.EndedAt.IsZero() && j.EndedAt.Before(before) {
			out = append(out, j)
		}
	}
	sort.Slice(out, func(a, b int) bool {
		if !out[a].EndedAt.Equal(out[b].EndedAt) {
			return out[a].EndedAt.Before(out[b].EndedAt)
		}
		return out[a].ID < out[b].ID
	})
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

func (s *memStore) Remove(_ context.Context, ids []string, before time.Time) (int, error) {
	if err := s.lock(); err != nil {
		return 0, err
	}
	defer s.mu.Unlock()
	n := 0
	for _, id := range ids {
		if j, ok := s.jobs[id]; ok && !j.EndedAt.IsZero() && j.EndedAt.Before(before) {
			delete(s.jobs, id)
			n++
		}
	}
	return n, nil
}

func (s *memStore) get(id string) (job.Job, error) {
	id, err := job.ParseID(id)
	if err != nil {
		return job.Job{}, err
	}
	if err := s.lock(); err != nil {
		return job.Job{}, err
	}
	defer s.mu.Unlock()
	j, ok := s.jobs[id]
	if !ok {
		return job.Job{}, job.ErrNotFound
	}
	return j, nil
}

func (s *memStore) Get(_ context.Context, id string) (job.Job, error) { return s.get(id) }

func (s *memStore) Claim(_ context.Context, id string, step job.Step) (job.Job, error) {
	if s.racy {
		cur, err := s.get(id)
		if err != nil {
			return job.Job{}, err
		}
		j, err := job.ApplyClaim(cur, step, s.now())
		if err != nil {
			return job.Job{}, err
		}
		time.Sleep(time.Millisecond) // the window in which another claimer reads the same row
		s.mu.Lock()
		defer s.mu.Unlock()
		s.jobs[j.ID] = j
		return j, nil
	}
	return s.update(id, func(cur job.Job) (job.Job, error) { return job.ApplyClaim(cur, step, s.now()) })
}

func (s *memStore) update(id string, apply func(job.Job) (job.Job, error)) (job.Job, error) {
	id, err := job.ParseID(id)
	if err != nil {
		return job.Job{}, err
	}
	if err := s.lock(); err != nil {
		return job.Job{}, err
	}
	defer s.mu.Unlock()
	cur, ok := s.jobs[id]
	if !ok {
		return job.Job{}, job.ErrNotFound
	}
	j, err := apply(cur)
	if err != nil {
		return job.Job{}, err
	}
	s.jobs[id] = j
	return j, nil
}

func (s *memStore) ClaimDue(_ context.Context, step job.Step, limit int) ([]job.Job, error) {
	if err := job.CheckClaimLimit(limit); err != nil {
		return nil, err
	}
	if err := s.lock(); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	now := s.now()
	var due []job.Job
	for _, j := range s.jobs {
		if _, err := job.ApplyClaim(j, step, now); err == nil && j.Due(now) {
			due = append(due, j)
		}
	}
	sort.Slice(due, func(a, b int) bool {
		if !due[a].NextRunAt.Equal(due[b].NextRunAt) {
			return due[a].NextRunAt.Before(due[b].NextRunAt)
		}
		return due[a].ID < due[b].ID
	})
	if len(due) > limit {
		due = due[:limit]
	}
	for i, j := range due {
		c, err := job.ApplyClaim(j, step, now)
		if err != nil {
			return nil, err
		}
		s.jobs[j.ID], due[i] = c, c
	}
	return due, nil
}

func (s *memStore) Save(_ context.Context, j job.Job, n job.Next) (job.Job, error) {
	return s.update(j.ID, func(cur job.Job) (job.Job, error) { return job.ApplySave(cur, j, n, s.now()) })
}

func (s *memStore) Release(_ context.Context, c job.Claim, pause time.Duration, f job.Failure) (job.Job, error) {
	j, err := s.update(c.JobID, func(cur job.Job) (job.Job, error) { return job.ApplyRelease(cur, c, pause, f, s.now()) })
	j.Segments = nil // the answer carries none (Store.Release)
	return j, err
}

func (s *memStore) Renew(_ context.Context, c job.Claim, step job.Step) (job.Claim, error) {
	j, err := s.update(c.JobID, func(cur job.Job) (job.Job, error) { return job.ApplyRenew(cur, c, step.Lease, s.now()) })
	if err != nil {
		return job.Claim{}, err
	}
	return j.Claim(), nil
}

func (s *memStore) TakeBackClaims(context.Context) (int, error) {
	if err := s.lock(); err != nil {
		return 0, err
	}
	defer s.mu.Unlock()
	n := 0
	for id, cur := range s.jobs {
		if j, ok := job.ApplyTakeBack(cur, s.now()); ok {
			s.jobs[id] = j
			n++
		}
	}
	return n, nil
}

func (s *memStore) List(_ context.Context, owner, cursor string, limit int) (job.Page, error) {
	if err := job.CheckListLimit(limit); err != nil {
		return job.Page{}, err
	}
	cursor, err := job.ParseCursor(cursor)
	if err != nil {
		return job.Page{}, err
	}
	if err := s.lock(); err != nil {
		return job.Page{}, err
	}
	defer s.mu.Unlock()
	var mine []job.Job
	for _, j := range s.jobs {
		if j.OwnerID == owner && (cursor == "" || j.ID < cursor) {
			mine = append(mine, j)
		}
	}
	sort.Slice(mine, func(a, b int) bool { return mine[a].ID > mine[b].ID })
	var p job.Page
	if len(mine) > limit {
		mine = mine[:limit]
		p.Next = mine[limit-1].ID
	}
	p.Jobs = mine
	return p, nil
}

func (s *memStore) Unfinished(_ context.Context, chargedTo string, limit int) ([]job.Job, error) {
	if err := job.CheckUnfinished(chargedTo, limit); err != nil {
		return nil, err
	}
	if err := s.lock(); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	var out []job.Job
	for _, j := range s.jobs {
		if j.ChargedTo == chargedTo && j.EndedAt.IsZero() {
			j.Segments = nil
			out = append(out, j)
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].ID < out[b].ID })
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

func (s *memStore) Reusable(_ context.Context, key string, endedAfter time.Time) (job.Job, error) {
	if err := s.lock(); err != nil {
		return job.Job{}, err
	}
	defer s.mu.Unlock()
	var out job.Job
	for _, j := range s.jobs {
		if key != "" && j.ReuseKey == key && j.State == job.Done && !j.Deleted() && j.EndedAt.After(endedAfter) &&
			(out.ID == "" || j.EndedAt.After(out.EndedAt)) {
			out = j
		}
	}
	if out.ID == "" {
		return job.Job{}, job.ErrNotFound
	}
	out.Segments = nil
	return out, nil
}

func (s *memStore) NextDue(_ context.Context, states []job.State) (time.Time, bool, error) {
	if err := s.lock(); err != nil {
		return time.Time{}, false, err
	}
	defer s.mu.Unlock()
	var (
		at    time.Time
		found bool
	)
	for _, j := range s.jobs {
		for _, st := range states {
			if j.State == st && !st.Terminal() && (!found || j.NextRunAt.Before(at)) {
				at, found = j.NextRunAt, true
			}
		}
	}
	return at, found, nil
}
