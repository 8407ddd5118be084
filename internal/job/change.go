package job

import (
	"context"
	"fmt"
	"time"
)

// Change is a store's one write primitive: read job id, let apply decide,
// write (with segments when asked), in one transaction. Claim, Save,
// Release, Renew and Delete are its methods, each rule through once, so a
// rerun transaction is safe.
type Change func(ctx context.Context, id string, withSegments bool, apply func(cur Job, now time.Time) (Job, error)) (Job, error)

func (c Change) Claim(ctx context.Context, id string, step Step) (Job, error) {
	j, err := c(ctx, id, false, once(func(cur Job, now time.Time) (Job, error) { return ApplyClaim(cur, step, now) }))
	if err != nil {
		return Job{}, fmt.Errorf("claim job %s for %s: %w", id, step.Name, err)
	}
	return j, nil
}

func (c Change) Save(ctx context.Context, j Job, n Next) (Job, error) {
	saved, err := c(ctx, j.ID, true, once(func(cur Job, now time.Time) (Job, error) { return ApplySave(cur, j, n, now) }))
	if err != nil {
		return Job{}, fmt.Errorf("save job %s: %w", j.ID, err)
	}
	return saved, nil
}

// Release returns the job without segments, whatever c read.
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

func (c Change) Renew(ctx context.Context, cl Claim, step Step) (Claim, error) {
	j, err := c(ctx, cl.JobID, false, once(func(cur Job, now time.Time) (Job, error) {
		return ApplyRenew(cur, cl, step.Lease, now)
	}))
	if err != nil {
		return Claim{}, fmt.Errorf("renew the claim on job %s for %s: %w", cl.JobID, step.Name, err)
	}
	return j.Claim(), nil
}

func (c Change) Delete(ctx context.Context, id string) (Job, error) {
	j, err := c(ctx, id, false, once(func(cur Job, now time.Time) (Job, error) { return ApplyDelete(cur, now), nil }))
	if err != nil {
		return Job{}, fmt.Errorf("delete job %s: %w", id, err)
	}
	return j, nil
}
