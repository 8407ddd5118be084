package pipeline

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"transcriber/internal/clock"
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

// heldKey is the context key of the claim a step's work holds.
type heldKey struct{}

// held is one claim the pipeline holds while a step works on its job.
type held struct {
	// ended is set when the step's own save ends the claim: the claim is
	// no longer renewed, and its loss, which the save caused, stops
	// nothing (the ending goes on: the notifier, the recognitions' deletion).
	ended atomic.Bool
}

// hold renews the claim j carries, made for step, until the returned stop
// is called, and returns the context the step works on. Every call that
// claims a job holds it for as long as it works on it.
func (p *Pipeline) hold(ctx context.Context, j job.Job, step job.Step) (context.Context, func()) {
	h := &held{}
	work, stopWork := context.WithCancelCause(context.WithValue(ctx, heldKey{}, h))
	beat, stopBeat := context.WithCancel(work)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		c := j.Claim()
		// Real time, not the pipeline's Sleep: a test that moves a fake
		// clock with its sleeps would otherwise move it from here too.
		for clock.Sleep(beat, p.cfg.RenewEvery) == nil && !h.ended.Load() {
			renewed, err := p.Store.Renew(beat, c, step)
			switch {
			case err == nil:
				c = renewed
			case beat.Err() != nil || h.ended.Load():
				return
			case errors.Is(err, job.ErrClaimLost):
				p.jobLog(j).WarnContext(ctx, "the claim was lost while its step worked; the work stops", "step", step.Name)
				stopWork(err)
				return
			default:
				// The claim outlives a few failed renewals (job.RenewEvery).
				p.jobLog(j).WarnContext(ctx, "could not renew the claim; trying again", "step", step.Name, "error", err.Error())
			}
		}
	}()
	return work, func() {
		stopBeat()
		wg.Wait()
		stopWork(nil)
	}
}

// claimEnds tells the heartbeat of ctx's claim, if any, that the save about
// to be made ends the claim.
func claimEnds(ctx context.Context) {
	if h, ok := ctx.Value(heldKey{}).(*held); ok {
		h.ended.Store(true)
	}
}
