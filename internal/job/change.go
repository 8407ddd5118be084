package job

import (
	"context"
	"fmt"
	"time"
)

// Change is the one primitive a store supplies for every write under the
// rules: read job id, let apply decide what it becomes at now, and write
// that (with its segments when withSegments), all in one transaction. The
// store's Claim, Save, Release, Renew and Delete are Change's methods, so each
// store writes the transaction once and the rules and error wording live
// here. A store may run apply more than once in one call (its transaction
// run again): each method's rule goes through once, so a run that reads
// the job as an earlier run wrote it answers that, and the call is safe
// to run twice.
type Change func(ctx context.Context, id string, withSegments bool, apply func(cur Job, now time.Time) (Job, error)) (Job, error)

// Claim is Store.Claim over c.
func (c Change) Claim(ctx context.Context, id string, step Step) (Job, error) {
	j, err := c(ctx, id, false, once(func(cur Job, now time.Time) (Job, error) { return ApplyClaim(cur, step, now) }))
	if err != nil {
		return Job{}, fmt.Errorf("claim job %s for %s: %w", id, step.Name, err)
	}
	return j, nil
}

// Save is Store.Save over c.
func (c Change) Save(ctx context.Context, j Job, n Next) (Job, error) {
	saved, err := c(ctx, j.ID, true, once(func(cur Job, now time.Time) (Job, error) { return ApplySave(cur, j, n, now) }))
	if err != nil {
		return Job{}, fmt.Errorf("save job %s: %w", j.ID, err)
	}
	return saved, nil
}

// Release is Store.Release over c. The job comes back without its
// segments, whatever c read: a release changes none, so a store need not
// read them.
func (c Change) Release(ctx context.Context, cl Claim, pause time.Duration, f Failure) (Job, error) {
	j, err := c(ctx, cl.JobID, false, once(func(cur Job, now time.Time) (Job, error) {
		return ApplyRelease(cur, cl, pause, f, now)
	}))
	if err != nil {
		return Job{}, fmt.Errorf("release job %s: %w", cl.JobID, err)
	}
	j.Segments = nil
	return j, nil
}

// Renew is Store.Renew over c.
func (c Change) Renew(ctx context.Context, cl Claim, step Step) (Claim, error) {
	j, err := c(ctx, cl.JobID, false, once(func(cur Job, now time.Time) (Job, error) {
		return ApplyRenew(cur, cl, step.Lease, now)
	}))
	if err != nil {
		return Claim{}, fmt.Errorf("renew the claim on job %s for %s: %w", cl.JobID, step.Name, err)
	}
	return j.Claim(), nil
}

// Delete is Store.Delete over c.
func (c Change) Delete(ctx context.Context, id string) (Job, error) {
	j, err := c(ctx, id, false, once(func(cur Job, now time.Time) (Job, error) { return ApplyDelete(cur, now), nil }))
	if err != nil {
		return Job{}, fmt.Errorf("delete job %s: %w", id, err)
	}
	return j, nil
}
