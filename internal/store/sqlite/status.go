package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"transcriber/internal/job"
	"transcriber/internal/status"
)

// The reads of the owner's status (package status): each one range of an
// index, in the index's order, at most limit rows (the plans are checked
// by TestStatusReadsUseTheirIndexes).

var (
	_ status.Jobs = (*JobStore)(nil)
)

const (
	// selectStateEntries is a state's range of jobs_due from since, read
	// from the index alone (it holds every column named).
	selectStateEntries = `SELECT id, next_run_at FROM jobs WHERE state = ? AND next_run_at >= ?
		ORDER BY next_run_at, id LIMIT ?`
)

// selectLatestInState is a state's range of jobs_due from since,
// backwards, with the rows.
var selectLatestInState = selectJob + ` WHERE state = ? AND next_run_at >= ?
		ORDER BY next_run_at DESC, id DESC LIMIT ?`

// StateEntries returns up to limit jobs in state with next_run_at at or
// after since, by next_run_at, then id, with only ID, State and NextRunAt
// set (status.Jobs).
func (s *JobStore) StateEntries(ctx context.Context, state job.State, since time.Time, limit int) ([]job.Job, error) {
	if err := status.CheckRead(limit); err != nil {
		return nil, err
	}
	var out []job.Job
	err := each(ctx, s.db.sql, selectStateEntries, []any{string(state), formatTime(since), limit}, func(r scanner) error {
		var (
			j    = job.Job{State: state}
			next string
			err  error
		)
		if err = r.Scan(&j.ID, &next); err != nil {
			return err
		}
		j.NextRunAt, err = parseTime(next)
		out = append(out, j)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("jobs in %s: %w", state, err)
	}
	return out, nil
}

// LatestInState returns up to limit jobs in state with next_run_at at or
// after since, the latest first, without their segments (status.Jobs).
func (s *JobStore) LatestInState(ctx context.Context, state job.State, since time.Time, limit int) ([]job.Job, error) {
	if err := status.CheckRead(limit); err != nil {
		return nil, err
	}
	var out []job.Job
	err := each(ctx, s.db.sql, selectLatestInState, []any{string(state), formatTime(since), limit}, func(r scanner) error {
		j, err := scanJob(r)
		out = append(out, j)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("latest jobs in %s: %w", state, err)
	}
	return out, nil
}

// each runs a read and calls fn for every row.
func each(ctx context.Context, db *sql.DB, query string, args []any, fn func(scanner) error) error {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return translate(err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return translate(err)
		}
	}
	return translate(rows.Err())
}
