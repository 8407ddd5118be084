package ydb

import (
	"context"
	"fmt"
	"time"

	"github.com/ydb-platform/ydb-go-sdk/v3/query"

	"transcriber/internal/job"
	"transcriber/internal/status"
)

var _ status.Jobs = (*JobStore)(nil)

// epoch is "since the beginning": a Timestamp cannot hold the zero time.
var epoch = time.Unix(0, 0).UTC()

func sinceOrEpoch(t time.Time) time.Time {
	if t.IsZero() || t.Before(epoch) {
		return epoch
	}
	return t
}

func rangeParams(state string, since time.Time, n int) params { // selectStateEntries, selectLatestInState
	return params{{"$state", utf8(state)}, {"$since", ts(sinceOrEpoch(since))}, {"$limit", uint64Param(n)}}
}

// statusRead runs stmt with p (status.CheckRead bounds limit).
func statusRead[T any](ctx context.Context, db *DB, what, stmt string, limit int, p params, scan func(query.Row) (T, error)) ([]T, error) {
	if err := status.CheckRead(limit); err != nil {
		return nil, err
	}
	out, err := readAll(ctx, db, stmt, p, scan)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}

// StateEntries sets only ID, State and NextRunAt: jobs_due alone is read.
func (s *JobStore) StateEntries(ctx context.Context, state job.State, since time.Time, limit int) ([]job.Job, error) {
	return statusRead(ctx, s.db, "jobs in "+string(state), selectStateEntries, limit, rangeParams(string(state), since, limit), func(row query.Row) (job.Job, error) {
		j := job.Job{State: state}
		if err := row.ScanNamed(query.Named("id", &j.ID), query.Named("next_run_at", &j.NextRunAt)); err != nil {
			return job.Job{}, fmt.Errorf("read job entry: %w", err)
		}
		j.NextRunAt = j.NextRunAt.UTC()
		return j, nil
	})
}

func (s *JobStore) LatestInState(ctx context.Context, state job.State, since time.Time, limit int) ([]job.Job, error) {
	return statusRead(ctx, s.db, "latest jobs in "+string(state), selectLatestInState, limit, rangeParams(string(state), since, limit), scanJob)
}
