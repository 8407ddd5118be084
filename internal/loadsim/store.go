package loadsim

import (
	"context"
	"fmt"
	"sync"
	"time"

	"transcriber/internal/errs"
	"transcriber/internal/job"
	"transcriber/internal/quota"
)

// countingStore is the job store as the functions have it in the cloud,
// where YDB expires rows by TTL (it hides the embedded store's
// job.Expirer), and it counts what the calls would cost there: request
// units by the per-call estimates of docs/database.md ("Cost in request
// units"; estimates, not measurements), and how often a job's entry in
// the jobs_due index moves (a delete and an insert in YDB).
type countingStore struct {
	job.Store
	clock   *Sched
	latency time.Duration // each call's round trip

	mu       sync.Mutex
	calls    map[string]int
	ru       float64
	dueMoves int
	states   map[string]job.State // the state each job was last seen in
}

func newCountingStore(st job.Store, clock *Sched, latency time.Duration) *countingStore {
	return &countingStore{Store: st, clock: clock, latency: latency, calls: map[string]int{}, states: map[string]job.State{}}
}

// roundTrip spends a call's round trip to the database; a call whose
// context ends meanwhile fails as the store's would.
func roundTrip(ctx context.Context, clock *Sched, latency time.Duration) error {
	if err := clock.Sleep(ctx, latency); err != nil {
		return errs.Wrap(err, errs.Unavailable, "store_unavailable", "the job store is unavailable; try again later")
	}
	return nil
}

// count records one call, its request units and its moves of jobs_due
// entries; seen are the jobs it returned, whose states are remembered.
func (c *countingStore) count(call string, ru float64, moves int, seen ...job.Job) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls[call]++
	c.ru += ru
	c.dueMoves += moves
	for _, j := range seen {
		c.states[j.ID] = j.State
	}
}

func (c *countingStore) stateOf(id string) job.State {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.states[id]
}

// Request units a call is estimated at (docs/database.md, "Cost in request
// units"); k is the job's segments: Claim reads them for its answer,
// Release does not (its answer has none, so k is 0), and both write the
// claim's columns with an UPDATE; ClaimDue reads them and writes whole rows.
func ruClaim(k int) float64 { return 8 + float64(k) }
func ruSave(k int, keep bool) float64 {
	if keep {
		return 4 + 6*float64(k)
	}
	return 8 + 6*float64(k)
}

const (
	ruCreate  = 7
	ruNextDue = 1 // per state asked about
	ruEmpty   = 1 // per state of an empty due range
	ruCounter = 3 // a counter's read and UPSERT, by the same rules
)

func (c *countingStore) Create(ctx context.Context, d job.Draft) (job.Job, error) {
	if err := roundTrip(ctx, c.clock, c.latency); err != nil {
		return job.Job{}, err
	}
	j, err := c.Store.Create(ctx, d)
	if err == nil {
		c.count("Create", ruCreate, 1, j)
	}
	return j, err
}

func (c *countingStore) Claim(ctx context.Context, id string, step job.Step) (job.Job, error) {
	if err := roundTrip(ctx, c.clock, c.latency); err != nil {
		return job.Job{}, err
	}
	j, err := c.Store.Claim(ctx, id, step)
	if err != nil {
		c.count("Claim", ruClaim(0), 0)
		return j, err
	}
	c.count("Claim", ruClaim(len(j.Segments)), 1, j)
	return j, err
}

func (c *countingStore) ClaimDue(ctx context.Context, step job.Step, limit int) ([]job.Job, error) {
	if err := roundTrip(ctx, c.clock, c.latency); err != nil {
		return nil, err
	}
	jobs, err := c.Store.ClaimDue(ctx, step, limit)
	ru := float64(len(step.From)) * ruEmpty
	if len(jobs) > 0 {
		ru = 0
		for _, j := range jobs {
			ru += 1 + ruClaim(len(j.Segments))
		}
	}
	c.count("ClaimDue", ru, len(jobs), jobs...)
	return jobs, err
}

func (c *countingStore) Save(ctx context.Context, j job.Job, next job.Next) (job.Job, error) {
	if err := roundTrip(ctx, c.clock, c.latency); err != nil {
		return j, err
	}
	before := c.stateOf(j.ID)
	saved, err := c.Store.Save(ctx, j, next)
	moves := 0
	if err == nil && (!next.Keep || saved.State != before || saved.State.Terminal()) {
		moves = 1
	}
	if err != nil {
		c.count("Save", ruSave(len(j.Segments), next.Keep), 0)
		return saved, err
	}
	c.count("Save", ruSave(len(saved.Segments), next.Keep), moves, saved)
	return saved, err
}

func (c *countingStore) Release(ctx context.Context, cl job.Claim, pause time.Duration, f job.Failure) (job.Job, error) {
	if err := roundTrip(ctx, c.clock, c.latency); err != nil {
		return job.Job{}, err
	}
	j, err := c.Store.Release(ctx, cl, pause, f)
	moves := 0
	if err == nil {
		moves = 1
	}
	c.count("Release", ruClaim(len(j.Segments)), moves, j)
	return j, err
}

// Renew takes no service time: it runs on a timer's goroutine of the
// simulation (the pipeline's heartbeat) beside the step it renews for,
// and the step's end waits for a renewal under way, which a renewal
// asleep on the clock would hold up for good. Nor is it priced: a
// renewal's request units (those of a claim, every 30 s a step works) are
// left out of the estimate, as docs/database.md's sum per job leaves them.
func (c *countingStore) Renew(ctx context.Context, cl job.Claim, step job.Step) (job.Claim, error) {
	renewed, err := c.Store.Renew(ctx, cl, step)
	c.count("Renew", 0, 0)
	return renewed, err
}

func (c *countingStore) NextDue(ctx context.Context, states []job.State) (time.Time, bool, error) {
	if err := roundTrip(ctx, c.clock, c.latency); err != nil {
		return time.Time{}, false, err
	}
	c.count("NextDue", float64(len(states))*ruNextDue, 0)
	return c.Store.NextDue(ctx, states)
}

func (c *countingStore) Get(ctx context.Context, id string) (job.Job, error) {
	if err := roundTrip(ctx, c.clock, c.latency); err != nil {
		return job.Job{}, err
	}
	j, err := c.Store.Get(ctx, id)
	c.count("Get", 1+float64(len(j.Segments)), 0)
	return j, err
}

// countingCounters is the usage counters as the functions have them in
// the cloud (no quota.Expirer: YDB's TTL), counting their request units
// and the submissions the request quota held back.
type countingCounters struct {
	quota.Counters
	clock      *Sched
	latency    time.Duration
	requestKey string // the pipeline's counter of recognition requests

	mu        sync.Mutex
	ru        float64
	held      int       // recognition requests refused by the quota's window
	firstHeld time.Time // when the quota first held one back
	reserved  int
}

func (c *countingCounters) Reserve(ctx context.Context, key string, window time.Time, amount, limit int64) (int64, bool, error) {
	if err := roundTrip(ctx, c.clock, c.latency); err != nil {
		return 0, false, err
	}
	used, ok, err := c.Counters.Reserve(ctx, key, window, amount, limit)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ru += ruCounter
	c.reserved++
	if err == nil && !ok && key == c.requestKey {
		if c.held == 0 {
			c.firstHeld = c.clock.Now()
		}
		c.held++
	}
	return used, ok, err
}

func (c *countingCounters) Release(ctx context.Context, key string, window time.Time, amount int64) error {
	if err := roundTrip(ctx, c.clock, c.latency); err != nil {
		return err
	}
	c.mu.Lock()
	c.ru += ruCounter
	c.mu.Unlock()
	return c.Counters.Release(ctx, key, window, amount)
}

// UsedMany is the store's one statement for several rows (a spread
// counter's total): a read a row found, and at least one for the
// statement, by the rules of docs/database.md.
func (c *countingCounters) UsedMany(ctx context.Context, keys []string, window time.Time) (map[string]int64, error) {
	m, ok := c.Counters.(quota.MultiReader)
	if !ok {
		return nil, fmt.Errorf("loadsim: the counters read one row at a time")
	}
	if err := roundTrip(ctx, c.clock, c.latency); err != nil {
		return nil, err
	}
	got, err := m.UsedMany(ctx, keys, window)
	found := 0
	for _, n := range got {
		if n > 0 {
			found++
		}
	}
	c.mu.Lock()
	c.ru += float64(max(1, found))
	c.mu.Unlock()
	return got, err
}

func (c *countingCounters) Used(ctx context.Context, key string, window time.Time) (int64, error) {
	if err := roundTrip(ctx, c.clock, c.latency); err != nil {
		return 0, err
	}
	c.mu.Lock()
	c.ru++
	c.mu.Unlock()
	return c.Counters.Used(ctx, key, window)
}
