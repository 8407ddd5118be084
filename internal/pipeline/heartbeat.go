package pipeline

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"transcriber/internal/job"
)

// The heartbeat: while a step works on a claimed job, the claim is renewed
// every RenewEvery (Store.Renew, the same conditional update as a claim),
// so the lease can be short — a job held by a dead worker is due again
// within job.Lease, whatever its step — and a step may still run longer
// than the lease (a long conversion, a split, a finish of many pieces). A
// renewal that finds the claim lost (expired while the worker stood still,
// taken by another, ended by a deletion) stops the work: the step's
// context is cancelled, and settle finds the claim lost and leaves the job
// to its new holder.
//
// Renewals are timers of the pipeline's clock (Clock.AfterFunc), not a
// loop that sleeps on the real clock: the lease runs on that clock (the
// store reads it), so must what keeps the lease alive. A Fake moved by
// hand, or the load model's simulated hours, renew as time passes there.

// heldKey is the context key of the claim a step's work holds.
type heldKey struct{}

// held is one claim the pipeline holds while a step works on its job.
type held struct {
	// ended is set when the step's own save ends the claim: the claim is
	// no longer renewed, and its loss, which the save caused, stops
	// nothing (the ending goes on: the notifier, the recognitions' deletion).
	ended atomic.Bool
}

// heartbeat renews one held claim.
type heartbeat struct {
	p        *Pipeline
	j        job.Job
	step     job.Step
	h        *held
	log      context.Context // the caller's, for log lines
	beat     context.Context // renewals; ends when the step stops
	stopWork context.CancelCauseFunc

	mu       sync.Mutex
	claim    job.Claim // the latest renewal's
	stopped  bool
	cancel   func() // the next renewal's timer
	renewing sync.WaitGroup
}

// hold renews the claim j carries, made for step, until the returned stop
// is called, and returns the context the step works on. Every call that
// claims a job holds it for as long as it works on it.
func (p *Pipeline) hold(ctx context.Context, j job.Job, step job.Step) (context.Context, func()) {
	h := &held{}
	work, stopWork := context.WithCancelCause(context.WithValue(ctx, heldKey{}, h))
	beat, stopBeat := context.WithCancel(work)
	b := &heartbeat{p: p, j: j, step: step, h: h, log: ctx, beat: beat, stopWork: stopWork, claim: j.Claim()}
	b.mu.Lock()
	b.next()
	b.mu.Unlock()
	return work, func() {
		b.mu.Lock()
		b.stopped = true
		b.cancel()
		b.mu.Unlock()
		stopBeat()
		b.renewing.Wait() // a renewal under way ends with stopBeat
		stopWork(nil)
	}
}

// next sets the timer of the next renewal; b.mu is held.
func (b *heartbeat) next() {
	b.cancel = b.p.Clock.AfterFunc(b.p.cfg.RenewEvery, b.renew)
}

// renew is one renewal, run by the clock's timer.
func (b *heartbeat) renew() {
	b.mu.Lock()
	if b.stopped || b.h.ended.Load() {
		b.mu.Unlock()
		return
	}
	b.renewing.Add(1)
	defer b.renewing.Done()
	c := b.claim
	b.mu.Unlock()

	renewed, err := b.p.Store.Renew(b.beat, c, b.step)
	switch {
	case err == nil:
		c = renewed
	case b.beat.Err() != nil || b.h.ended.Load():
		return
	case errors.Is(err, job.ErrClaimLost):
		b.p.jobLog(b.j).WarnContext(b.log, "the claim was lost while its step worked; the work stops", "step", b.step.Name)
		b.stopWork(err)
		return
	default:
		// The claim outlives a few failed renewals (job.RenewEvery).
		b.p.jobLog(b.j).WarnContext(b.log, "could not renew the claim; trying again", "step", b.step.Name, "error", err.Error())
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.claim = c
	if !b.stopped {
		b.next()
	}
}

// claimEnds tells the heartbeat of ctx's claim, if any, that the save about
// to be made ends the claim.
func claimEnds(ctx context.Context) {
	if h, ok := ctx.Value(heldKey{}).(*held); ok {
		h.ended.Store(true)
	}
}
