package ydb

import (
	"context"
	"fmt"
	"time"

	"github.com/ydb-platform/ydb-go-sdk/v3/query"

	"transcriber/internal/job"
	"transcriber/internal/status"
)

// The reads of the owner's status (package status): each one statement
// (status_statements.go) in a snapshot read-only transaction.

var (
	_ status.Jobs = (*JobStore)(nil)
)

// epoch stands for "since the beginning": a Timestamp cannot hold the zero
// time.Time (checkTimes), and no row is older.
var epoch = time.Unix(0, 0).UTC()

func sinceOrEpoch(t time.Time) time.Time {
	if t.IsZero() || t.Before(epoch) {
		return epoch
	}
	return t
}

// rangeParams are the parameters of a state's range from since.
func rangeParams(state string, since time.Time, n int) params { // selectStateEntries, selectLatestInState
	return params{{"$state", utf8(state)}, {"$since", ts(sinceOrEpoch(since))}, {"$limit", uint64Param(n)}}
}

// readAll runs one statement in a snapshot read-only transaction and scans
// every row.
func readAll[T any](ctx context.Context, db *DB, stmt string, p params, scan func(query.Row) (T, error)) ([]T, error) {
	var out []T
	err := db.read(ctx, func(ctx context.Context, tx query.TxActor) error {
		out = nil
		return db.rows(ctx, tx, stmt, p, func(row query.Row) error {
			v, err := scan(row)
			out = append(out, v)
			return err
		})
	})
	return out, err
}

// StateEntries returns up to limit jobs in state with next_run_at at or
// after since, by next_run_at, then id, with only ID, State and NextRunAt
// set: read from jobs_due alone (status.Jobs).
func (s *JobStore) StateEntries(ctx context.Context, state job.State, since time.Time, limit int) ([]job.Job, error) {
	if err := status.CheckRead(limit); err != nil {
		return nil, err
	}
	out, err := readAll(ctx, s.db, selectStateEntries, rangeParams(string(state), since, limit), func(row query.Row) (job.Job, error) {
		j := job.Job{State: state}
		if err := row.ScanNamed(query.Named("id", &j.ID), query.Named("next_run_at", &j.NextRunAt)); err != nil {
			return job.Job{}, fmt.Errorf("read job entry: %w", err)
		}
		j.NextRunAt = j.NextRunAt.UTC()
		return j, nil
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
	out, err := readAll(ctx, s.db, selectLatestInState, rangeParams(string(state), since, limit), scanJob)
	if err != nil {
		return nil, fmt.Errorf("latest jobs in %s: %w", state, err)
	}
	return out, nil
}
