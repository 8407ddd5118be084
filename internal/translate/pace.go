package translate

import (
	"context"
	"fmt"
	"sync"
	"time"

	"transcriber/internal/clock"
	"transcriber/internal/errs"
)

// Pacer spaces the requests to the API's quotas. The client asks it before
// every attempt, retries included, since each is a call the quota counts.
type Pacer interface {
	// Take waits until a request of chars characters (Chars) may go, and
	// counts it. It fails when the wait would be too long (errs.Unavailable
	// CodeQuota) or ctx ends.
	Take(ctx context.Context, chars int64) error
}

// Quota is what the API allows (translate/concepts/limits.md, "Quotas"):
// calls of one method a second and characters sent an hour. Both are
// quotas, which support can raise.
type Quota struct {
	RequestsPerSecond int
	CharsPerHour      int64
	// MaxWait is the longest Take waits; a request that would wait longer
	// is refused with CodeQuota, so a call never sleeps through a
	// function's time for the hourly quota.
	MaxWait time.Duration
}

// DefaultQuota is the documented quotas: 20 calls a second, 1 million
// characters an hour; and a wait of at most 30 s.
var DefaultQuota = Quota{RequestsPerSecond: 20, CharsPerHour: 1_000_000, MaxWait: 30 * time.Second}

// NewPacer returns an in-process pacer of q: in any second at most
// RequestsPerSecond requests start, in any hour at most CharsPerHour
// characters, over the requests this pacer has let go. It counts this
// process only; instances sharing the quota need a pacer on shared
// counters. Each request is given the first moment both windows have room
// for it, in order of asking, and sleeps until then through sleep; a
// request whose wait is cancelled keeps its place (it errs towards fewer
// requests).
func NewPacer(q Quota, c clock.Clock, sleep func(context.Context, time.Duration) error) Pacer {
	if c == nil {
		c = clock.System()
	}
	if sleep == nil {
		sleep = clock.Sleep
	}
	return &windowPacer{q: q, clock: c, sleep: sleep}
}

type windowPacer struct {
	q     Quota
	clock clock.Clock
	sleep func(context.Context, time.Duration) error

	mu    sync.Mutex
	taken []taken // in time order; none older than an hour before the last Take
}

type taken struct {
	at    time.Time
	chars int64
}

func (p *windowPacer) Take(ctx context.Context, chars int64) error {
	wait, err := p.reserve(chars)
	if err != nil {
		return err
	}
	if wait <= 0 {
		return ctx.Err()
	}
	return p.sleep(ctx, wait)
}

// reserve finds the request's moment, counts it there, and returns the wait
// until it.
func (p *windowPacer) reserve(chars int64) (time.Duration, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.clock.Now()
	drop := 0
	for drop < len(p.taken) && !p.taken[drop].at.After(now.Add(-time.Hour)) {
		drop++
	}
	p.taken = p.taken[drop:]

	at := now
	if n := len(p.taken); n > 0 && p.taken[n-1].at.After(at) {
		at = p.taken[n-1].at
	}
	if rps := p.q.RequestsPerSecond; rps > 0 && len(p.taken) >= rps {
		if next := p.taken[len(p.taken)-rps].at.Add(time.Second); next.After(at) {
			at = next
		}
	}
	if limit := p.q.CharsPerHour; limit > 0 {
		if chars > limit {
			return 0, errs.Wrap(fmt.Errorf("a request of %d characters is over the hourly quota of %d", chars, limit),
				errs.Unavailable, CodeQuota, msgQuota)
		}
		var sum int64
		first := 0 // the oldest request within the hour before at
		for first < len(p.taken) && !p.taken[first].at.After(at.Add(-time.Hour)) {
			first++
		}
		for _, t := range p.taken[first:] {
			sum += t.chars
		}
		for ; sum+chars > limit; first++ {
			at = p.taken[first].at.Add(time.Hour)
			sum -= p.taken[first].chars
		}
	}
	wait := at.Sub(now)
	if p.q.MaxWait > 0 && wait > p.q.MaxWait {
		return 0, errs.Wrap(fmt.Errorf("the quota has room in %s, over the %s waited", wait, p.q.MaxWait),
			errs.Unavailable, CodeQuota, msgQuota)
	}
	p.taken = append(p.taken, taken{at: at, chars: chars})
	return wait, nil
}
