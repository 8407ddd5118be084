package sqlite

import (
	"context"
	"fmt"
	"time"

	"transcriber/internal/job"
	"transcriber/internal/status"
)

// The status's reads: each one range of an index in its order
// (TestStatusReadsUseTheirIndexes checks the plans).

var _ status.Jobs = (*JobStore)(nil)

// selectStateEntries reads jobs_due alone: it holds every column named.
const selectStateEntries = `SELECT id, next_run_at FROM jobs WHERE state = ? AND next_run_at >= ?
		ORDER BY next_run_at, id LIMIT ?`

var selectLatestInState = selectJob + ` WHERE state = ? AND next_run_at >= ?
		ORDER BY next_run_at DESC, id DESC LIMIT ?`

// statusRead runs stmt with args, since and limit (status.CheckRead).
func statusRead[T any](ctx context.Context, db *DB, what, stmt string, since time.Time, limit int, scan func(scanner) (T, error), args ...any) ([]T, error) {
	if err := status.CheckRead(limit); err != nil {
		return nil, err
	}
	out, err := queryAll(ctx, db.sql, stmt, append(args, formatTime(since), limit), scan)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}

// StateEntries sets only ID, State and NextRunAt.
func (s *JobStore) StateEntries(ctx context.Context, state job.State, since time.Time, limit int) ([]job.Job, error) {
	return statusRead(ctx, s.db, "jobs in "+string(state), selectStateEntries, since, limit, func(r scanner) (job.Job, error) {
		j := job.Job{State: state}
		err := r.Scan(&j.ID, timeText(&j.NextRunAt))
		return j, err
	}, string(state))
}

func (s *JobStore) LatestInState(ctx context.Context, state job.State, since time.Time, limit int) ([]job.Job, error) {
	return statusRead(ctx, s.db, "latest jobs in "+string(state), selectLatestInState, since, limit, scanJob, string(state))
}
