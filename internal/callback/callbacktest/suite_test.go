package callbacktest_test

import (
	"context"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/callback"
	"transcriber/internal/callback/callbacktest"
)

// memStore is the smallest store: a map under a mutex. racy makes its
// read-check-writes a read and a separate write, as a store without
// transactions would be.
type memStore struct {
	mu   sync.Mutex
	rows map[string]callback.Delivery
	racy bool
}

func newMemStore(racy bool) *memStore {
	return &memStore{rows: map[string]callback.Delivery{}, racy: racy}
}

func (m *memStore) change(_ context.Context, id string, apply func(callback.Delivery, bool) (callback.Delivery, bool, error)) (callback.Delivery, bool, error) {
	m.mu.Lock()
	cur, found := m.rows[id]
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
	m.rows[id] = d
	return d, true, nil
}

func (m *memStore) Register(ctx context.Context, d callback.Delivery, at, now time.Time) (callback.Delivery, bool, error) {
	return callback.Change(m.change).Register(ctx, d, at, now)
}

func (m *memStore) Begin(ctx context.Context, id string, now time.Time, lease time.Duration) (callback.Delivery, bool, error) {
	return callback.Change(m.change).Begin(ctx, id, now, lease)
}

func (m *memStore) Finish(ctx context.Context, id string, o callback.Outcome, now time.Time) (callback.Delivery, error) {
	return callback.Change(m.change).Finish(ctx, id, o, now)
}

func (m *memStore) Get(_ context.Context, id string) (callback.Delivery, error) {
	if err := callback.ValidateJobID(id); err != nil {
		return callback.Delivery{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	d, ok := m.rows[id]
	if !ok {
		return callback.Delivery{}, callback.ErrNotFound
	}
	return d, nil
}

func (m *memStore) ClaimDue(_ context.Context, now time.Time, lease time.Duration, limit int) ([]callback.Delivery, error) {
	if err := callback.ValidateClaim(now, lease, limit); err != nil {
		return nil, err
	}
	m.mu.Lock()
	var due []callback.Delivery
	for _, d := range m.rows {
		if callback.Due(d, now) {
			due = append(due, d)
		}
	}
	sort.Slice(due, func(i, j int) bool {
		if !due[i].NextAt.Equal(due[j].NextAt) {
			return due[i].NextAt.Before(due[j].NextAt)
		}
		return due[i].JobID < due[j].JobID
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
	out := make([]callback.Delivery, 0, len(due))
	for _, cur := range due {
		d, err := callback.ApplyClaim(cur, now, lease)
		if err != nil {
			return nil, err
		}
		m.rows[d.JobID] = d
		out = append(out, d)
	}
	return out, nil
}

// The suite on the smallest correct store: its expectations are
// consistent.
func TestMemStoreKeepsTheContract(t *testing.T) {
	callbacktest.Run(t, func(*testing.T) callback.Store { return newMemStore(false) })
}

const brokenEnv = "CALLBACKTEST_RUN_BROKEN_STORE"

// TestBrokenStore runs the suite on the racy store. It runs only inside
// TestSuiteCatchesRacyStores, which expects it to fail.
func TestBrokenStore(t *testing.T) {
	if os.Getenv(brokenEnv) == "" {
		t.Skip("runs only as the subject of TestSuiteCatchesRacyStores")
	}
	callbacktest.Run(t, func(*testing.T) callback.Store { return newMemStore(true) })
}

// A store whose read-check-writes are not atomic fails the suite, in the
// races and nowhere else.
func TestSuiteCatchesRacyStores(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the suite in a child process")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestBrokenStore$", "-test.v")
	cmd.Env = append(os.Environ(), brokenEnv+"=1")
	out, err := cmd.CombinedOutput()
	require.Error(t, err, "the suite must fail a racy store; output:\n%s", out)
	s := string(out)
	for _, failed := range []string{
		"--- FAIL: TestBrokenStore/Races/of_senders_beginning_one_delivery_exactly_one_takes_each_attempt_and_POSTs_once",
		"--- FAIL: TestBrokenStore/Races/of_sweepers_of_due_deliveries_each_goes_to_exactly_one",
	} {
		require.Contains(t, s, failed)
	}
	for _, passed := range []string{"Register", "Begin", "Finish", "ClaimDue", "times_come_back_in_UTC"} {
		require.Contains(t, s, "--- PASS: TestBrokenStore/"+passed+" ")
	}
}
