package job

import (
	"errors"
	"fmt"
	"time"
)

// Ms is t in UTC at whole milliseconds, the stores' precision; zero stays zero.
func Ms(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.UTC().Truncate(time.Millisecond)
}

// Stored is j with its times as both stores keep them (Ms).
func Stored(j Job) Job {
	for _, t := range []*time.Time{&j.NextRunAt, &j.ClaimUntil, &j.DeletedAt, &j.UploadBy, &j.EndedAt, &j.CreatedAt, &j.UpdatedAt, &j.ReservedDay} {
		*t = Ms(*t)
	}
	return j
}

// Live are the states that are not terminal.
func Live(states []State) []State {
	var out []State
	for _, st := range states {
		if !st.Terminal() {
			out = append(out, st)
		}
	}
	return out
}

// Run is one run of a store's ClaimDue transaction: the jobs an earlier
// run of the call claimed that get (a read by id) finds still as it wrote
// them, then up to limit in all from claim(n); it records the answer.
func (c *Claimed) Run(limit int, get func(id string) (Job, error), claim func(n int) ([]Job, error)) ([]Job, error) {
	var read []Job
	for _, id := range c.IDs() {
		j, err := get(id)
		if err != nil && !errors.Is(err, ErrNotFound) {
			return nil, err
		}
		read = append(read, j)
	}
	claimed := append(make([]Job, 0, limit), c.Ours(read)...)
	if n := limit - len(claimed); n > 0 {
		more, err := claim(n)
		if err != nil {
			return nil, err
		}
		claimed = append(claimed, more...)
	}
	c.Wrote(claimed)
	return claimed, nil
}

// ClaimAll applies step's claim to each due job, as stored; a refusal is
// a bug (the store's query and the rule disagree).
func ClaimAll(due []Job, step Step, now time.Time) ([]Job, error) {
	out := make([]Job, 0, len(due))
	for _, cur := range due {
		j, err := ApplyClaim(cur, step, now)
		if err != nil {
			return nil, fmt.Errorf("due job %s: %w", cur.ID, err)
		}
		out = append(out, Stored(j))
	}
	return out, nil
}
