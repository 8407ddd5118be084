package pipeline

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"transcriber/internal/job"
)

// held is one claim the pipeline holds while a step works on its job; the
// stages are its methods. Its heartbeat renews the claim every
// job.RenewEvery, so leases stay short while a step may outlast one; a
// renewal that finds the claim lost (expired, taken, deleted) cancels the
// step's context. Renewals are timers of the pipeline's clock, which the
// lease is read on (a Fake, the load model's simulated hours).
type held struct {
	*Pipeline
	j        job.Job
	step     job.Step
	log      context.Context // the caller's, for log lines
	beat     context.Context // renewals; ends when the step stops
	stopBeat context.CancelFunc
	stopWork context.CancelCauseFunc
	// claimEnded is set when the step's own save ends the claim: no more
	// renewals, and the claim's loss stops nothing (the ending goes on).
	claimEnded atomic.Bool

	mu       sync.Mutex
	claim    job.Claim // the latest renewal's
	stopped  bool
	cancel   func() // the next renewal's timer
	renewing sync.WaitGroup
}

// hold renews the claim j carries, made for step, until stop, and returns
// the context the step works on.
func (p *Pipeline) hold(ctx context.Context, j job.Job, step job.Step) (*held, context.Context) {
	work, stopWork := context.WithCancelCause(ctx)
	beat, stopBeat := context.WithCancel(work)
	h := &held{Pipeline: p, j: j, step: step, log: ctx, beat: beat, stopBeat: stopBeat, stopWork: stopWork, claim: j.Claim()}
	h.mu.Lock()
	h.next()
	h.mu.Unlock()
	return h, work
}

// stop ends the renewals and the step's context.
func (h *held) stop() {
	h.mu.Lock()
	h.stopped = true
	h.cancel()
	h.mu.Unlock()
	h.stopBeat()
	h.renewing.Wait() // a renewal under way ends with stopBeat
	h.stopWork(nil)
}

// next sets the next renewal's timer; h.mu is held.
func (h *held) next() {
	h.cancel = h.Clock.AfterFunc(job.RenewEvery, h.renew)
}

func (h *held) renew() {
	h.mu.Lock()
	if h.stopped || h.claimEnded.Load() {
		h.mu.Unlock()
		return
	}
	h.renewing.Add(1)
	defer h.renewing.Done()
	c := h.claim
	h.mu.Unlock()

	renewed, err := h.Store.Renew(h.beat, c, h.step)
	switch {
	case err == nil:
		c = renewed
	case h.beat.Err() != nil || h.claimEnded.Load():
		return
	case errors.Is(err, job.ErrClaimLost):
		h.jobLog(h.j).WarnContext(h.log, "claim lost; work stops", "step", h.step.Name)
		h.stopWork(err)
		return
	default: // the lease outlives a few failed renewals
		h.jobLog(h.j).WarnContext(h.log, "claim not renewed; trying again", "step", h.step.Name, "error", err.Error())
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.claim = c
	if !h.stopped {
		h.next()
	}
}

// save writes a step's result and returns the job as stored; on failure,
// j as the caller had it, claim included, so the failure is recorded on it.
func (h *held) save(ctx context.Context, j job.Job, n job.Next) (job.Job, error) {
	if !n.Keep || j.State.Terminal() {
		h.claimEnded.Store(true)
	}
	saved, err := h.Store.Save(ctx, j, n)
	if err != nil {
		return j, err
	}
	return saved, nil
}

// endDone saves claimed job j done, logs msg and tells its end; on failure
// it returns was, the job before this step.
func (h *held) endDone(ctx context.Context, was, j job.Job, msg string, attrs ...any) (job.Job, error) {
	j.State = job.Done
	j.ErrorCode, j.ErrorMessage = "", ""
	done, err := h.save(ctx, j, job.Next{})
	if err != nil {
		return was, err
	}
	h.jobLog(done).InfoContext(ctx, msg, attrs...)
	h.ended(ctx, was, done)
	return done, nil
}
