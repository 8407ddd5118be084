package pipeline

import (
	"context"
	"fmt"
	"slices"
	"time"

	"transcriber/internal/job"
)

// sweptStates are the states a poll call looks after: recognitions in
// flight, and ingest work whose event was lost, whose attempt failed or
// whose lease expired.
var sweptStates = []job.State{job.AwaitingUpload, job.Created, job.Converted, job.Transcribe}

// SweptStates returns the states a poll call looks after.
func SweptStates() []job.State { return slices.Clone(sweptStates) }

// PollFor is how long one poll call keeps looking for due work.
func (p *Pipeline) PollFor() time.Duration { return p.cfg.PollFor }

// PollStats is what one poll call did.
type PollStats struct {
	Checked  int // jobs whose recognitions were checked
	Finished int // jobs that reached done
	Ingested int // jobs the sweep took back into ingest
	Expired  int // rows of jobs ended longer than the retention ago, removed
}

// JobRetention is how long a job's row is kept once it ended.
func (p *Pipeline) JobRetention() time.Duration { return p.cfg.JobRetention }

// Poll is one call of the timer: it housekeeps, then for up to PollFor
// (never past ctx's deadline) claims due jobs: checks (check.go) and
// ingest work (ingest.go). Nothing due within the call costs one read.
func (p *Pipeline) Poll(ctx context.Context) (PollStats, error) {
	var st PollStats
	st.Expired = p.Housekeep(ctx)
	deadline := p.Clock.Now().Add(p.cfg.PollFor)
	if d, ok := ctx.Deadline(); ok {
		// Time to finish the job in hand before the platform stops the call.
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
		// A backlog is the next call's: calls must not pile up to the timeout.
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
			// Taken by another caller between the read and the claim.
			if err := p.Sleep(ctx, time.Second); err != nil {
				return st, nil
			}
		}
	}
}

// pollOnce checks a batch of due recognitions, then takes ingest work one
// job at a time while the call has time: it may be long (a conversion), so
// it is claimed only when it starts at once, and runs on the call's
// context, bounded by the function's timeout, not the loop's deadline.
func (p *Pipeline) pollOnce(ctx context.Context, deadline time.Time, st *PollStats) (int, error) {
	polled, err := p.Store.ClaimDue(ctx, job.Poll, pollBatch)
	if err != nil {
		return 0, fmt.Errorf("poll: %w", err)
	}
	// Held from the claim: the last of the batch waits for the others.
	hs, works := make([]*held, len(polled)), make([]context.Context, len(polled))
	for i, j := range polled {
		hs[i], works[i] = p.hold(ctx, j, job.Poll)
	}
	for i, j := range polled {
		st.Checked++
		if hs[i].check(works[i], j) {
			st.Finished++
		}
		hs[i].stop()
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
		p.jobLog(swept[0]).InfoContext(ctx, "swept into ingest")
		h, work := p.hold(ctx, swept[0], job.Ingest)
		h.ingest(work, swept[0], false)
		h.stop()
	}
	return n, nil
}
