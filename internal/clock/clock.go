// Package clock is the one place the service reads the time.
//
// Everything that needs "now", or work done later (a timer), takes a
// Clock, so tests can hold time still or move it by hand, and a lint rule
// (forbidigo in .golangci.yml) keeps time.Now, time.Since and time.Until out
// of every other package. All times are UTC.
package clock

import (
	"context"
	"slices"
	"sync"
	"time"
)

// Clock tells the current time, and runs a function once time has moved
// on: a loop that waited on the real clock instead would escape a Fake and
// the load model's clock (internal/loadsim).
type Clock interface {
	Now() time.Time
	// AfterFunc runs f once d has passed on the clock, on a goroutine of
	// its own, unless stop is called first. Stop does not wait for an f
	// that has started.
	AfterFunc(d time.Duration, f func()) (stop func())
}

type system struct{}

func (system) Now() time.Time { return time.Now().UTC() }

func (system) AfterFunc(d time.Duration, f func()) func() {
	t := time.AfterFunc(d, f)
	return func() { t.Stop() }
}

// System is the real clock.
func System() Clock { return system{} }

// Fake is a Clock that moves only when told to. It is safe for concurrent
// use. Its timers run when it is moved past their time (Advance, Set), on
// the goroutine that moves it, one after another in the order of their
// times, each with the clock showing its time: so an Advance of an hour
// runs a timer of a minute sixty times if each one sets the next.
type Fake struct {
	mu     sync.Mutex
	now    time.Time
	to     time.Time // where the clock is moving: now, or later while timers run on the way
	timers []*fakeTimer
	seq    uint64
}

// fakeTimer is one AfterFunc of a Fake.
type fakeTimer struct {
	at  time.Time
	seq uint64 // timers of one time run in the order they were set
	f   func()
}

// NewFake returns a Fake clock showing t.
func NewFake(t time.Time) *Fake { return &Fake{now: t.UTC(), to: t.UTC()} }

// Now returns the time the clock was last set to.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// Set moves the clock to t, running the timers due on the way. A t in the
// past turns the clock back and runs nothing.
func (f *Fake) Set(t time.Time) {
	f.mu.Lock()
	f.to = t.UTC()
	if f.to.Before(f.now) {
		f.now = f.to
	}
	f.mu.Unlock()
	f.run()
}

// Advance moves the clock forward by d, running the timers due on the way,
// and returns the new time. Advances from several goroutines add up.
func (f *Fake) Advance(d time.Duration) time.Time {
	f.mu.Lock()
	f.to = f.to.Add(d)
	to := f.to
	f.mu.Unlock()
	f.run()
	return to
}

// AfterFunc runs fn when the clock is moved to now+d or past it; a timer
// due at once runs at the next move (Advance(0) runs it).
func (f *Fake) AfterFunc(d time.Duration, fn func()) (stop func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seq++
	t := &fakeTimer{at: f.now.Add(d), seq: f.seq, f: fn}
	f.timers = append(f.timers, t)
	return func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.timers = slices.DeleteFunc(f.timers, func(x *fakeTimer) bool { return x == t })
	}
}

// run moves the clock to f.to, stopping at each timer due on the way to
// run it (without the lock: it may read the clock and set timers).
func (f *Fake) run() {
	for {
		f.mu.Lock()
		i := -1
		for k, t := range f.timers {
			if t.at.After(f.to) {
				continue
			}
			if i < 0 || t.at.Before(f.timers[i].at) || (t.at.Equal(f.timers[i].at) && t.seq < f.timers[i].seq) {
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

// Sleep waits for d, or until ctx ends, and returns ctx's error if it
// ended first. It is the default of every Sleep a package takes as a
// dependency; tests pass one that moves a Fake instead.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
