package app_test

import (
	"context"
	"sync"
	"time"

	"transcriber/internal/botstate"
	"transcriber/internal/job"
	"transcriber/internal/outbox"
	"transcriber/internal/quota"
	"transcriber/internal/store"
)

// callLog records, in order, each call made to the stores wrapped by the
// counting types below, named "<store>.<method>". Every store call reads
// its backend at least once (a write reads the row it changes), so the
// log's length is the number of store reads a handler makes. The wrappers
// name every method of their interface rather than embed it, so a method
// added to an interface fails to compile here instead of going uncounted.
type callLog struct {
	mu    sync.Mutex
	calls []string
}

func (l *callLog) add(name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, name)
}

// take returns the calls recorded since the last take and forgets them.
func (l *callLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.calls
	l.calls = nil
	return out
}

// countingJobs is a job.Store that records its calls. It is not a
// job.Expirer, like the YDB store, whose rows expire by the table's TTL;
// countingExpiringJobs adds the embedded store's expiry.
type countingJobs struct {
	s   job.Store
	log *callLog
}

var _ job.Store = countingJobs{}

func (c countingJobs) Create(ctx context.Context, d job.Draft) (job.Job, error) {
	c.log.add("jobs.Create")
	return c.s.Create(ctx, d)
}

func (c countingJobs) CreateForMessage(ctx context.Context, d job.Draft) (job.Job, bool, error) {
	c.log.add("jobs.CreateForMessage")
	return c.s.CreateForMessage(ctx, d)
}

func (c countingJobs) CreateOnce(ctx context.Context, d job.Draft) (job.Job, bool, error) {
	c.log.add("jobs.CreateOnce")
	return c.s.CreateOnce(ctx, d)
}

func (c countingJobs) Delete(ctx context.Context, id string) (job.Job, error) {
	c.log.add("jobs.Delete")
	return c.s.Delete(ctx, id)
}

func (c countingJobs) Get(ctx context.Context, id string) (job.Job, error) {
	c.log.add("jobs.Get")
	return c.s.Get(ctx, id)
}

func (c countingJobs) Claim(ctx context.Context, id string, step job.Step) (job.Job, error) {
	c.log.add("jobs.Claim")
	return c.s.Claim(ctx, id, step)
}

func (c countingJobs) ClaimDue(ctx context.Context, step job.Step, limit int) ([]job.Job, error) {
	c.log.add("jobs.ClaimDue")
	return c.s.ClaimDue(ctx, step, limit)
}

func (c countingJobs) Save(ctx context.Context, j job.Job, next job.Next) (job.Job, error) {
	c.log.add("jobs.Save")
	return c.s.Save(ctx, j, next)
}

func (c countingJobs) Release(ctx context.Context, cl job.Claim, pause time.Duration, f job.Failure) (job.Job, error) {
	c.log.add("jobs.Release")
	return c.s.Release(ctx, cl, pause, f)
}

func (c countingJobs) Renew(ctx context.Context, cl job.Claim, step job.Step) (job.Claim, error) {
	c.log.add("jobs.Renew")
	return c.s.Renew(ctx, cl, step)
}

func (c countingJobs) NextDue(ctx context.Context, states []job.State) (time.Time, bool, error) {
	c.log.add("jobs.NextDue")
	return c.s.NextDue(ctx, states)
}

func (c countingJobs) List(ctx context.Context, ownerID, cursor string, limit int) (job.Page, error) {
	c.log.add("jobs.List")
	return c.s.List(ctx, ownerID, cursor, limit)
}

func (c countingJobs) Reusable(ctx context.Context, key string, endedAfter time.Time) (job.Job, error) {
	c.log.add("jobs.Reusable")
	return c.s.Reusable(ctx, key, endedAfter)
}

func (c countingJobs) Unfinished(ctx context.Context, chargedTo string, limit int) ([]job.Job, error) {
	c.log.add("jobs.Unfinished")
	return c.s.Unfinished(ctx, chargedTo, limit)
}

// countingExpiringJobs is countingJobs over a store that expires its own
// rows (the embedded one), with that expiry counted too.
type countingExpiringJobs struct {
	countingJobs
	x job.Expirer
}

var _ job.Expirer = countingExpiringJobs{}

func (c countingExpiringJobs) Expired(ctx context.Context, before time.Time, limit int) ([]job.Job, error) {
	c.log.add("jobs.Expired")
	return c.x.Expired(ctx, before, limit)
}

func (c countingExpiringJobs) Remove(ctx context.Context, ids []string, before time.Time) (int, error) {
	c.log.add("jobs.Remove")
	return c.x.Remove(ctx, ids, before)
}

// countingCounters is a quota.Counters that records its calls; like the
// YDB counters (TTL) it is not a quota.Expirer.
type countingCounters struct {
	s   quota.Counters
	log *callLog
}

var _ quota.Counters = countingCounters{}

func (c countingCounters) Reserve(ctx context.Context, key string, window time.Time, amount, limit int64) (int64, bool, error) {
	c.log.add("counters.Reserve")
	return c.s.Reserve(ctx, key, window, amount, limit)
}

func (c countingCounters) Release(ctx context.Context, key string, window time.Time, amount int64) error {
	c.log.add("counters.Release")
	return c.s.Release(ctx, key, window, amount)
}

func (c countingCounters) Used(ctx context.Context, key string, window time.Time) (int64, error) {
	c.log.add("counters.Used")
	return c.s.Used(ctx, key, window)
}

// countingExpiringCounters is countingCounters with the embedded store's
// expiry of old counters, counted.
type countingExpiringCounters struct {
	countingCounters
	x quota.Expirer
}

var _ quota.Expirer = countingExpiringCounters{}

func (c countingExpiringCounters) ExpireCounters(ctx context.Context, now time.Time) (int, error) {
	c.log.add("counters.ExpireCounters")
	return c.x.ExpireCounters(ctx, now)
}

// countingBotState is a botstate.Store that records its calls.
type countingBotState struct {
	s   botstate.Store
	log *callLog
}

var _ botstate.Store = countingBotState{}

func (c countingBotState) Chat(ctx context.Context, id int64) (botstate.Chat, error) {
	c.log.add("botstate.Chat")
	return c.s.Chat(ctx, id)
}

func (c countingBotState) UpdateChat(ctx context.Context, id int64, now time.Time, change func(*botstate.Chat)) (botstate.Chat, error) {
	c.log.add("botstate.UpdateChat")
	return c.s.UpdateChat(ctx, id, now, change)
}

func (c countingBotState) ForgetChat(ctx context.Context, chatID int64) error {
	c.log.add("botstate.ForgetChat")
	return c.s.ForgetChat(ctx, chatID)
}

// countingOutbox is an outbox.Store that records its calls.
type countingOutbox struct {
	s   outbox.Store
	log *callLog
}

var _ outbox.Store = countingOutbox{}

func (c countingOutbox) Put(ctx context.Context, e outbox.Entry, at, now time.Time) (outbox.Entry, bool, error) {
	c.log.add("outbox.Put")
	return c.s.Put(ctx, e, at, now)
}

func (c countingOutbox) Begin(ctx context.Context, e outbox.Entry, now time.Time, lease time.Duration) (outbox.Entry, bool, error) {
	c.log.add("outbox.Begin")
	return c.s.Begin(ctx, e, now, lease)
}

func (c countingOutbox) ClaimDue(ctx context.Context, kind outbox.Kind, now time.Time, lease time.Duration, limit int) ([]outbox.Entry, error) {
	c.log.add("outbox.ClaimDue")
	return c.s.ClaimDue(ctx, kind, now, lease, limit)
}

func (c countingOutbox) Finish(ctx context.Context, kind outbox.Kind, key string, o outbox.Outcome, now time.Time) (outbox.Entry, error) {
	c.log.add("outbox.Finish")
	return c.s.Finish(ctx, kind, key, o, now)
}

func (c countingOutbox) Get(ctx context.Context, kind outbox.Kind, key string) (outbox.Entry, error) {
	c.log.add("outbox.Get")
	return c.s.Get(ctx, kind, key)
}

// countingAgenda is a store.Agenda that records its calls.
type countingAgenda struct {
	s   store.Agenda
	log *callLog
}

func (c countingAgenda) NextWork(ctx context.Context, states []job.State) (time.Time, bool, error) {
	c.log.add("agenda.NextWork")
	return c.s.NextWork(ctx, states)
}
