// Package clock is the one place the service reads the time (forbidigo
// keeps time.Now out of the rest), so tests can move it by hand. UTC.
package clock

import (
	"context"
	"time"
)

// Clock tells the time and runs timers, so no wait escapes a test's clock
// (clocktest) or the load model's.
type Clock interface {
	Now() time.Time
	// AfterFunc runs f on its own goroutine after d unless stopped first;
	// stop does not wait for a started f.
	AfterFunc(d time.Duration, f func()) (stop func())
}

type system struct{}

func (system) Now() time.Time { return time.Now().UTC() }

func (system) AfterFunc(d time.Duration, f func()) func() {
	t := time.AfterFunc(d, f)
	return func() { t.Stop() }
}

func System() Clock { return system{} }

// Sleep waits d or until ctx ends; the default of every injected Sleep.
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
