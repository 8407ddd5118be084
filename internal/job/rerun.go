package job

import "time"

// A store's write transaction may run more than once for one call: YDB's
// SDK runs an idempotent transaction again after an error that leaves
// its commit's fate unknown (the connection lost once the commit was
// sent), and the YDB store marks every write idempotent so that the
// first call after an instance slept, on a connection that died
// meanwhile, is not lost. So every write recognizes its own: a run that
// reads the row as the call's previous run wrote it knows that run
// committed, and answers what it wrote, where applying the rule again
// would refuse (the claim a save ended is no longer held; a claim finds
// the job held, by itself) or count twice (an attempt).

// Same reports whether cur, a job as read back, is wrote, a version of it
// one write made: the same state, claim, attempts, due time and times of
// update, deletion and end, at whole milliseconds (what the stores keep).
// No other writer makes that version: a claim has a claim id of its own,
// a deletion its time, every write its time of update, and a write that
// changes none of them (deleting a deleted job) changes nothing at all.
func Same(cur, wrote Job) bool {
	return cur.ID == wrote.ID && cur.State == wrote.State && cur.ClaimID == wrote.ClaimID &&
		cur.Attempts == wrote.Attempts && cur.ErrorCode == wrote.ErrorCode &&
		sameMs(cur.ClaimUntil, wrote.ClaimUntil) && sameMs(cur.NextRunAt, wrote.NextRunAt) &&
		sameMs(cur.UpdatedAt, wrote.UpdatedAt) && sameMs(cur.DeletedAt, wrote.DeletedAt) &&
		sameMs(cur.EndedAt, wrote.EndedAt) && sameMs(cur.CreatedAt, wrote.CreatedAt)
}

// sameMs reports whether a and b are the same moment at whole
// milliseconds, zero equal only to zero.
func sameMs(a, b time.Time) bool {
	if a.IsZero() || b.IsZero() {
		return a.IsZero() == b.IsZero()
	}
	return a.Truncate(time.Millisecond).Equal(b.Truncate(time.Millisecond))
}

// once makes apply, the rule of one call, safe to run again in that
// call's transaction: a run that finds the job as an earlier run wrote it
// (Same) returns it unchanged, since that run committed; any other runs
// the rule. Change's methods pass every rule through it.
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

// Claimed is what a due selection (Store.ClaimDue) claimed on the earlier
// runs of its transaction, so that a run after a commit whose answer was
// lost finds its claims again: they are no longer due, and selected anew
// they would be lost until their lease ran out, an attempt spent. A store
// keeps one per call, outside its transaction: it reads the jobs of IDs,
// keeps those Ours says it still holds, claims no more than the rest of
// its limit, and records everything it answers with Wrote.
type Claimed struct{ wrote []Job }

// IDs are the jobs claimed on an earlier run, to be read again.
func (c *Claimed) IDs() []string {
	ids := make([]string, len(c.wrote))
	for i, j := range c.wrote {
		ids[i] = j.ID
	}
	return ids
}

// Ours returns those of read (the jobs of IDs as read now) that are still
// as an earlier run wrote them: that run committed, and its claims are
// this call's.
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

// Wrote records what this run answers: the claims it found (Ours) and the
// ones it made.
func (c *Claimed) Wrote(js []Job) { c.wrote = append([]Job(nil), js...) }
