package outboxtest_test

import (
	"context"
	"runtime"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/outbox"
	"transcriber/internal/outbox/outboxtest"
	"transcriber/internal/racetest"
)

// memStore is the smallest store: a map under a mutex. racy makes its
// read-check-writes a read and a separate write, as a store without
// transactions would be.
type memStore struct {
	mu   sync.Mutex
	rows map[[2]string]outbox.Entry
	racy bool
}

func newMemStore(racy bool) *memStore {
	return &memStore{rows: map[[2]string]outbox.Entry{}, racy: racy}
}

func (m *memStore) change(_ context.Context, kind outbox.Kind, key string, apply func(outbox.Entry, bool) (outbox.Entry, bool, error)) (outbox.Entry, bool, error) {
	m.mu.Lock()
	cur, found := m.rows[[2]string{string(kind), key}]
	if m.racy {
		m.mu.Unlock()
		runtime.Gosched()
	}
	d, write, err := apply(cur, found)
	if m.racy {
		m.mu.Lock()
	}
	defer m.mu.Unlock()
	if err != nil || !write {
		return d, write, err
	}
	m.rows[[2]string{string(kind), key}] = d
	return d, true, nil
}

func (m *memStore) Put(ctx context.Context, e outbox.Entry, at, now time.Time) (outbox.Entry, bool, error) {
	return outbox.Change(m.change).Put(ctx, e, at, now)
}

func (m *memStore) Begin(ctx context.Context, e outbox.Entry, now time.Time, lease time.Duration) (outbox.Entry, bool, error) {
	return outbox.Change(m.change).Begin(ctx, e, now, lease)
}

func (m *memStore) Finish(ctx context.Context, kind outbox.Kind, key string, o outbox.Outcome, now time.Time) (outbox.Entry, error) {
	return outbox.Change(m.change).Finish(ctx, kind, key, o, now)
}

func (m *memStore) Get(_ context.Context, kind outbox.Kind, key string) (outbox.Entry, error) {
	if err := outbox.ValidateRef(kind, key); err != nil {
		return outbox.Entry{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	d, ok := m.rows[[2]string{string(kind), key}]
	if !ok {
		return outbox.Entry{}, outbox.ErrNotFound
	}
	return d, nil
}

func (m *memStore) ClaimDue(_ context.Context, kind outbox.Kind, now time.Time, lease time.Duration, limit int) ([]outbox.Entry, error) {
	if err := outbox.ValidateClaim(kind, now, lease, limit); err != nil {
		return nil, err
	}
	m.mu.Lock()
	var due []outbox.Entry
	for _, d := range m.rows {
		if d.Kind == kind && outbox.Due(d, now) {
			due = append(due, d)
		}
	}
	sort.Slice(due, func(i, j int) bool {
		if !due[i].NextAt.Equal(due[j].NextAt) {
			return due[i].NextAt.Before(due[j].NextAt)
		}
		return due[i].Key < due[j].Key
	})
	if len(due) > limit {
		due = due[:limit]
	}
	if m.racy {
		m.mu.Unlock()
		runtime.Gosched()
		m.mu.Lock()
	}
	defer m.mu.Unlock()
	out := make([]outbox.Entry, 0, len(due))
	for _, cur := range due {
		d, err := outbox.ApplyClaim(cur, now, lease)
		if err != nil {
			return nil, err
		}
		m.rows[[2]string{string(kind), d.Key}] = d
		out = append(out, d)
	}
	return out, nil
}

// The suite on the smallest correct store: its expectations are
// consistent.
func TestMemStoreKeepsTheContract(t *testing.T) {
	outboxtest.Run(t, func(*testing.T) outbox.Store { return newMemStore(false) })
}

// TestBrokenStore runs the suite on the racy store, only as the subject
// of TestSuiteCatchesRacyStores.
func TestBrokenStore(t *testing.T) {
	if !racetest.Subject() {
		t.Skip("runs only as the subject of TestSuiteCatchesRacyStores")
	}
	outboxtest.Run(t, func(*testing.T) outbox.Store { return newMemStore(true) })
}

// A store whose read-check-writes are not atomic fails the suite, in the
// races and nowhere else.
func TestSuiteCatchesRacyStores(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the suite in a child process")
	}
	out, failed := racetest.BrokenSuite()
	require.True(t, failed, "the suite must fail a racy store; output:\n%s", out)
	s := out
	for _, failed := range []string{
		"--- FAIL: TestBrokenStore/Races/of_senders_beginning_one_entry_exactly_one_takes_each_attempt_and_sends_once",
		"--- FAIL: TestBrokenStore/Races/of_putters_of_one_entry_all_get_the_one_recorded",
		"--- FAIL: TestBrokenStore/Races/of_sweepers_of_due_entries_each_goes_to_exactly_one",
	} {
		require.Contains(t, s, failed)
	}
	for _, passed := range []string{"Put", "Begin", "Finish", "ClaimDue", "times_come_back_in_UTC"} {
		require.Contains(t, s, "--- PASS: TestBrokenStore/"+passed+" ")
	}
}
