package sqlite

import (
	"context"
	"fmt"
	"time"

	"transcriber/internal/job"
	"transcriber/internal/status"
)

// The reads of the owner's status: each one range of an index in its
// order (TestStatusReadsUseTheirIndexes checks the plans).

var (
	_ status.Jobs = (*JobStore)(nil)
)

const (
	// selectStateEntries reads jobs_due alone: it holds every column named.
	selectStateEntries = `SELECT id, next_run_at FROM jobs WHERE state = ? AND next_run_at >= ?
		ORDER BY next_run_at, id LIMIT ?`
)

var selectLatestInState = selectJob + ` WHERE state = ? AND next_run_at >= ?
		ORDER BY next_run_at DESC, id DESC LIMIT ?`

// StateEntries sets only ID, State and NextRunAt.
func (s *JobStore) StateEntries(ctx context.Context, state job.State, since time.Time, limit int) ([]job.Job, error) {
	if err := status.CheckRead(limit); err != nil {
		return nil, err
	}
	out, err := queryAll(ctx, s.db.sql, selectStateEntries, []any{string(state), formatTime(since), limit}, func(r scanner) (job.Job, error) {
		var (
			j    = job.Job{State: state}
			next string
			err  error
		)
		if err = r.Scan(&j.ID, &next); err != nil {
			return j, err
		}
		j.NextRunAt, err = parseTime(next)
		return j, err
	})
	if err != nil {
		return nil, fmt.Errorf("jobs in %s: %w", state, err)
	}
	return out, nil
}

func (s *JobStore) LatestInState(ctx context.Context, state job.State, since time.Time, limit int) ([]job.Job, error) {
	if err := status.CheckRead(limit); err != nil {
		return nil, err
	}
	out, err := queryAll(ctx, s.db.sql, selectLatestInState, []any{string(state), formatTime(since), limit}, scanJob)
	if err != nil {
		return nil, fmt.Errorf("latest jobs in %s: %w", state, err)
	}
	return out, nil
}
