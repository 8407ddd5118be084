package pipeline

import (
	"context"

	"transcriber/internal/job"
	"transcriber/internal/quota"
)

// Housekeep removes the jobs (with their files) and counters past their
// retention where the stores do not expire rows themselves (the embedded
// one; YDB's TTL does it in the cloud), as every poll call does first. It
// returns how many jobs it removed; failures are logged.
func (p *Pipeline) Housekeep(ctx context.Context) int {
	n := p.expire(ctx)
	if ex, ok := p.cfg.Counters.(quota.Expirer); ok {
		if _, err := ex.ExpireCounters(ctx, p.Clock.Now()); err != nil {
			p.Log.WarnContext(ctx, "expired counters not removed", "error", err.Error())
		}
	}
	return n
}

// One sweep removes at most expireBatches of expireBatch jobs: a backlog
// is worked off over several calls.
const (
	expireBatch   = 50
	expireBatches = 4
)

// expire removes the rows of jobs that ended more than JobRetention ago,
// after their files. A job whose files are not all gone keeps its row,
// and the sweep stops there: the storage is likely down.
func (p *Pipeline) expire(ctx context.Context) int {
	ex, ok := p.Store.(job.Expirer)
	if !ok {
		return 0
	}
	before := p.Clock.Now().Add(-p.cfg.JobRetention)
	removed := 0
	for range expireBatches {
		if ctx.Err() != nil {
			break
		}
		jobs, err := ex.Expired(ctx, before, expireBatch)
		if err != nil {
			p.Log.WarnContext(ctx, "expired jobs not read", "error", err.Error())
			break
		}
		ids := make([]string, 0, len(jobs))
		for _, j := range jobs {
			if job.RemoveFiles(ctx, p.Objects, p.Log, j) == 0 {
				ids = append(ids, j.ID)
			}
		}
		n := 0
		if len(ids) > 0 {
			if n, err = ex.Remove(ctx, ids, before); err != nil {
				p.Log.WarnContext(ctx, "expired jobs not removed", "error", err.Error())
				break
			}
		}
		removed += n
		if len(ids) < len(jobs) || len(jobs) < expireBatch {
			break
		}
	}
	if removed > 0 {
		p.Log.InfoContext(ctx, "expired jobs removed", "jobs", removed, "ended_before", before)
	}
	return removed
}
