// Package clocktest is a clock for tests: it moves only when told.
package clocktest

import (
	"slices"
	"sync"
	"time"
)

// Fake moves only when told; its timers run on the mover's goroutine in
// time order, each with the clock at its time, so an hour's Advance runs a
// self-renewing minute timer sixty times. Safe for concurrent use.
type Fake struct {
	mu     sync.Mutex
	now    time.Time
	to     time.Time    // where it is moving while timers run on the way
	timers []*fakeTimer // in the order set, which breaks ties
}

type fakeTimer struct {
	at time.Time
	f  func()
}

func NewFake(t time.Time) *Fake { return &Fake{now: t.UTC(), to: t.UTC()} }

func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// Set moves the clock to t, running timers on the way; backwards runs none.
func (f *Fake) Set(t time.Time) {
	f.mu.Lock()
	f.to = t.UTC()
	if f.to.Before(f.now) {
		f.now = f.to
	}
	f.mu.Unlock()
	f.run()
}

// Advance moves the clock by d like Set; concurrent advances add up.
func (f *Fake) Advance(d time.Duration) time.Time {
	f.mu.Lock()
	f.to = f.to.Add(d)
	to := f.to
	f.mu.Unlock()
	f.run()
	return to
}

// AfterFunc runs fn at the first move to now+d or past; one due now at the next move.
func (f *Fake) AfterFunc(d time.Duration, fn func()) (stop func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t := &fakeTimer{at: f.now.Add(d), f: fn}
	f.timers = append(f.timers, t)
	return func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.timers = slices.DeleteFunc(f.timers, func(x *fakeTimer) bool { return x == t })
	}
}

// run moves to f.to, stopping at each timer to run it unlocked.
func (f *Fake) run() {
	for {
		f.mu.Lock()
		i := -1
		for k, t := range f.timers {
			if !t.at.After(f.to) && (i < 0 || t.at.Before(f.timers[i].at)) {
				i = k
			}
		}
		if i < 0 {
			if f.to.After(f.now) {
				f.now = f.to
			}
			f.mu.Unlock()
			return
		}
		t := f.timers[i]
		f.timers = slices.Delete(f.timers, i, i+1)
		if t.at.After(f.now) {
			f.now = t.at
		}
		f.mu.Unlock()
		t.f()
	}
}
