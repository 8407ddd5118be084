// Package clock is the one place the service reads the time.
//
// Everything that needs "now" takes a Clock, so tests can hold time still or
// move it by hand, and a lint rule (forbidigo in .golangci.yml) keeps
// time.Now, time.Since and time.Until out of every other package. All times
// are UTC.
package clock

import (
	"context"
	"sync"
	"time"
)

// Clock tells the current time.
type Clock interface {
	Now() time.Time
}

type system struct{}

func (system) Now() time.Time { return time.Now().UTC() }

// System is the real clock.
func System() Clock { return system{} }

// Fake is a Clock that moves only when told to. It is safe for concurrent use.
type Fake struct {
	mu  sync.Mutex
	now time.Time
}

// NewFake returns a Fake clock showing t.
func NewFake(t time.Time) *Fake { return &Fake{now: t.UTC()} }

// Now returns the time the clock was last set to.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// Set moves the clock to t.
func (f *Fake) Set(t time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = t.UTC()
}

// Advance moves the clock forward by d and returns the new time.
func (f *Fake) Advance(d time.Duration) time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(d)
	return f.now
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
