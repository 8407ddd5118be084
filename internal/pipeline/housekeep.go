package pipeline

import (
	"context"

	"transcriber/internal/job"
	"transcriber/internal/quota"
)

// Housekeep: the rows, files and counters past their retention go.

// Housekeep removes the jobs and counters past their retention where the
// stores do not expire rows themselves (the embedded one), as every poll
// call does first, and returns how many jobs it removed.
func (p *Pipeline) Housekeep(ctx context.Context) int {
	n := p.expire(ctx)
	p.expireCounters(ctx)
	return n
}

// One poll call's expiry sweep removes at most expireBatches batches of
// expireBatch jobs, so a backlog (a first run after a long pause, a
// shortened retention) is worked off over several calls.
const (
	expireBatch   = 50
	expireBatches = 4
)

// expireCounters removes the usage counters past their retention, where
// the counters store does it itself (the embedded one; YDB's TTL does it in
// the cloud).
func (p *Pipeline) expireCounters(ctx context.Context) {
	ex, ok := p.cfg.Counters.(quota.Expirer)
	if !ok {
		return
	}
	if _, err := ex.ExpireCounters(ctx, p.Clock.Now()); err != nil {
		p.Log.WarnContext(ctx, "could not remove expired counters", "error", err.Error())
	}
}

// expire removes the rows of jobs that ended more than JobRetention ago,
// after their files, when the store expires rows itself (job.Expirer; YDB
// does it by its TTL instead). A job whose files could not all be removed
// keeps its row for a later sweep, and the sweep stops there: the storage
// is likely down. It returns how many rows it removed; failures are logged,
// never the poll's error.
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
			p.Log.WarnContext(ctx, "could not read expired jobs", "error", err.Error())
			break
		}
		ids := make([]string, 0, len(jobs))
		failed := false
		for _, j := range jobs {
			if p.removeFiles(ctx, j) {
				ids = append(ids, j.ID)
			} else {
				failed = true
			}
		}
		n := 0
		if len(ids) > 0 {
			if n, err = ex.Remove(ctx, ids, before); err != nil {
				p.Log.WarnContext(ctx, "could not remove expired jobs", "error", err.Error())
				break
			}
		}
		removed += n
		if failed || len(jobs) < expireBatch {
			break
		}
	}
	if removed > 0 {
		p.Log.InfoContext(ctx, "removed expired jobs", "jobs", removed, "ended_before", before)
	}
	return removed
}

// removeFiles removes every file j may have (a missing one is no
// failure) and reports whether all are gone.
func (p *Pipeline) removeFiles(ctx context.Context, j job.Job) bool {
	return job.RemoveFiles(ctx, p.Objects, p.Log, j) == 0
}
