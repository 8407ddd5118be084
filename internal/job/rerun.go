package job

import "time"

// YDB's SDK reruns an idempotent transaction whose commit's fate is
// unknown, and every write is idempotent (a call on a connection that died
// while the instance slept is not lost). So a rerun that reads what the
// previous run wrote answers that, where the rule would refuse or count an
// attempt twice.

// Same reports whether cur, as read back, is the version wrote made, at
// the stores' whole milliseconds: no other writer makes it (a claim has
// its id, every write its update time).
func Same(cur, wrote Job) bool {
	return cur.ID == wrote.ID && cur.State == wrote.State && cur.ClaimID == wrote.ClaimID &&
		cur.Attempts == wrote.Attempts && cur.ErrorCode == wrote.ErrorCode &&
		sameMs(cur.ClaimUntil, wrote.ClaimUntil) && sameMs(cur.NextRunAt, wrote.NextRunAt) &&
		sameMs(cur.UpdatedAt, wrote.UpdatedAt) && sameMs(cur.DeletedAt, wrote.DeletedAt) &&
		sameMs(cur.EndedAt, wrote.EndedAt) && sameMs(cur.CreatedAt, wrote.CreatedAt)
}

// sameMs compares at whole ms, zero equal only to zero.
func sameMs(a, b time.Time) bool {
	if a.IsZero() || b.IsZero() {
		return a.IsZero() == b.IsZero()
	}
	return a.Truncate(time.Millisecond).Equal(b.Truncate(time.Millisecond))
}

// once makes apply safe to rerun in one call's transaction: finding what
// an earlier run wrote (Same), it returns that unchanged.
func once(apply func(cur Job, now time.Time) (Job, error)) func(cur Job, now time.Time) (Job, error) {
	var wrote *Job
	return func(cur Job, now time.Time) (Job, error) {
		if wrote != nil && Same(cur, *wrote) {
			return cur, nil
		}
		next, err := apply(cur, now)
		if err != nil {
			return Job{}, err
		}
		wrote = &next
		return next, nil
	}
}

// Claimed is what ClaimDue's earlier runs claimed, kept outside the
// transaction so a rerun finds its claims, no longer due, again: read IDs,
// keep Ours, claim the rest of the limit, record the answer with Wrote.
type Claimed struct{ wrote []Job }

func (c *Claimed) IDs() []string {
	ids := make([]string, len(c.wrote))
	for i, j := range c.wrote {
		ids[i] = j.ID
	}
	return ids
}

// Ours returns those of read still as an earlier run wrote them.
func (c *Claimed) Ours(read []Job) []Job {
	byID := make(map[string]Job, len(c.wrote))
	for _, j := range c.wrote {
		byID[j.ID] = j
	}
	var ours []Job
	for _, cur := range read {
		if w, ok := byID[cur.ID]; ok && Same(cur, w) {
			ours = append(ours, cur)
		}
	}
	return ours
}

// Wrote records what this run answers.
func (c *Claimed) Wrote(js []Job) { c.wrote = append([]Job(nil), js...) }
