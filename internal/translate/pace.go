package translate

import (
	"context"
	"fmt"
	"sync"
	"time"

	"transcriber/internal/clock"
	"transcriber/internal/errs"
)

// Quota is what the API allows (translate/concepts/limits.md, "Quotas").
// A request that would wait past MaxWait is refused rather than sleep
// through a function's time.
type Quota struct {
	RequestsPerSecond int
	CharsPerHour      int64
	MaxWait           time.Duration
}

// DefaultQuota is the documented one, with a wait of at most 30 s.
var DefaultQuota = Quota{RequestsPerSecond: 20, CharsPerHour: 1_000_000, MaxWait: 30 * time.Second}

// pacer spaces this process's requests, retries included, to q: each, in
// order, gets the first moment both windows have room and sleeps until
// then; a cancelled wait keeps its place (erring towards fewer requests).
type pacer struct {
	q     Quota
	clock clock.Clock
	sleep func(context.Context, time.Duration) error

	mu    sync.Mutex
	taken []taken // in time order, the last hour's
}

type taken struct {
	at    time.Time
	chars int64
}

// Take waits until a request of chars may go and counts it; a wait too
// long is errs.Unavailable CodeQuota.
func (p *pacer) Take(ctx context.Context, chars int64) error {
	wait, err := p.reserve(chars)
	if err != nil {
		return err
	}
	if wait <= 0 {
		return ctx.Err()
	}
	return p.sleep(ctx, wait)
}

// reserve counts the request at its moment and returns the wait until it.
func (p *pacer) reserve(chars int64) (time.Duration, error) {
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
