package job

import (
	"context"
	"fmt"
	"time"
)

// Change is a store's one write primitive: read job id, let apply decide,
// write (with segments when asked), in one transaction. Its methods pass
// each rule through once, so a rerun transaction is safe.
type Change func(ctx context.Context, id string, withSegments bool, apply func(cur Job, now time.Time) (Job, error)) (Job, error)

func (c Change) Claim(ctx context.Context, id string, step Step) (Job, error) {
	return c.run(ctx, id, false, func(cur Job, now time.Time) (Job, error) { return ApplyClaim(cur, step, now) },
		"claim job "+id+" for "+step.Name)
}

func (c Change) Save(ctx context.Context, j Job, n Next) (Job, error) {
	return c.run(ctx, j.ID, true, func(cur Job, now time.Time) (Job, error) { return ApplySave(cur, j, n, now) },
		"save job "+j.ID)
}

// Release returns the job without segments, whatever c read.
func (c Change) Release(ctx context.Context, cl Claim, pause time.Duration, f Failure) (Job, error) {
	j, err := c.run(ctx, cl.JobID, false, func(cur Job, now time.Time) (Job, error) {
		return ApplyRelease(cur, cl, pause, f, now)
	}, "release job "+cl.JobID)
	j.Segments = nil
	return j, err
}

func (c Change) Renew(ctx context.Context, cl Claim, step Step) (Claim, error) {
	j, err := c.run(ctx, cl.JobID, false, func(cur Job, now time.Time) (Job, error) {
		return ApplyRenew(cur, cl, step.Lease, now)
	}, "renew the claim on job "+cl.JobID+" for "+step.Name)
	if err != nil {
		return Claim{}, err
	}
	return j.Claim(), nil
}

func (c Change) Delete(ctx context.Context, id string) (Job, error) {
	return c.run(ctx, id, false, func(cur Job, now time.Time) (Job, error) { return ApplyDelete(cur, now), nil },
		"delete job "+id)
}

// run passes rule through once and names the call in its error.
func (c Change) run(ctx context.Context, id string, withSegments bool, rule func(Job, time.Time) (Job, error), call string) (Job, error) {
	j, err := c(ctx, id, withSegments, once(rule))
	if err != nil {
		return Job{}, fmt.Errorf("%s: %w", call, err)
	}
	return j, nil
}
