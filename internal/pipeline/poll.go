package pipeline

import (
	"context"
	"fmt"
	"slices"
	"time"

	"transcriber/internal/job"
)

// The timer: each poll call housekeeps first, then, for up to PollFor,
// takes what is due: the recognitions to check (check.go, which goes on to
// finish and settle) and the ingest work whose event was lost, whose
// attempt failed or whose claim expired (walked as an upload is,
// ingest.go).

// sweptStates are the states a poll call looks after: the recognitions in
// flight, and ingest work whose event was lost, whose attempt failed, or
// whose claim expired with a crashed call.
var sweptStates = []job.State{job.AwaitingUpload, job.Created, job.Converted, job.Transcribe}

// SweptStates returns the states a poll call looks after.
func SweptStates() []job.State { return slices.Clone(sweptStates) }

// PollFor is how long one poll call keeps looking for due work.
func (p *Pipeline) PollFor() time.Duration { return p.cfg.PollFor }

// PollStats says what one poll call did, for its log line.
type PollStats struct {
	Checked  int // jobs whose recognitions were checked
	Finished int // jobs that reached done
	Ingested int // jobs the sweep took back into ingest
	Expired  int // rows of jobs ended longer than the retention ago, removed
}

// JobRetention is how long a job's row is kept once it ended: the cut of
// every expiry sweep.
func (p *Pipeline) JobRetention() time.Duration { return p.cfg.JobRetention }

// Poll is one call of the timer: for up to PollFor (and never past ctx's
// deadline) it claims due jobs, checks their recognitions, finishes those
// that are ready and sweeps ingest work that needs another go. When nothing
// is due within the call, it returns after one indexed read.
func (p *Pipeline) Poll(ctx context.Context) (PollStats, error) {
	var st PollStats
	st.Expired = p.Housekeep(ctx)
	deadline := p.Clock.Now().Add(p.cfg.PollFor)
	if d, ok := ctx.Deadline(); ok {
		// Leave time to finish the job in hand before the platform stops us.
		if limit := d.Add(-10 * time.Second); limit.Before(deadline) {
			deadline = limit
		}
	}
	for {
		next, ok, err := p.Store.NextDue(ctx, sweptStates)
		if err != nil {
			return st, fmt.Errorf("poll: %w", err)
		}
		now := p.Clock.Now()
		// Stop at the deadline even while work is due: a backlog is the
		// next call's, and calls must not pile up to the timeout.
		if !ok || !next.Before(deadline) || !now.Before(deadline) {
			return st, nil
		}
		if wait := next.Sub(now); wait > 0 {
			if err := p.Sleep(ctx, wait); err != nil {
				return st, nil
			}
			continue
		}
		n, err := p.pollOnce(ctx, deadline, &st)
		if err != nil {
			return st, err
		}
		if n == 0 {
			// Due but taken by another caller between the read and the claim.
			if err := p.Sleep(ctx, time.Second); err != nil {
				return st, nil
			}
		}
	}
}

// pollOnce checks a batch of due recognitions, then takes due ingest work
// one job at a time while the call has time to start more. Ingest work can
// be long (a conversion), so it is claimed only when it will be started at
// once, and it runs on the call's own context: bounded by the function's
// timeout, not by the loop's deadline.
func (p *Pipeline) pollOnce(ctx context.Context, deadline time.Time, st *PollStats) (int, error) {
	polled, err := p.Store.ClaimDue(ctx, job.Poll, p.cfg.PollBatch)
	if err != nil {
		return 0, fmt.Errorf("poll: %w", err)
	}
	// The batch is held from its claim: the last of it waits for the
	// checks before it.
	works, stops := make([]context.Context, len(polled)), make([]func(), len(polled))
	for i, j := range polled {
		works[i], stops[i] = p.hold(ctx, j, job.Poll)
	}
	for i, j := range polled {
		st.Checked++
		if p.check(works[i], j) {
			st.Finished++
		}
		stops[i]()
	}
	n := len(polled)
	for p.Clock.Now().Before(deadline) && ctx.Err() == nil {
		swept, err := p.Store.ClaimDue(ctx, job.Ingest, 1)
		if err != nil {
			return n, fmt.Errorf("poll: sweep ingest: %w", err)
		}
		if len(swept) == 0 {
			break
		}
		n++
		st.Ingested++
		p.jobLog(swept[0]).InfoContext(ctx, "sweep takes the job back into ingest")
		work, stop := p.hold(ctx, swept[0], job.Ingest)
		p.ingest(work, swept[0], false)
		stop()
	}
	return n, nil
}
