package ydb

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ydb-platform/ydb-go-sdk/v3/query"

	"transcriber/internal/job"
)

// ClaimDue claims up to limit due jobs for step in one transaction: each
// live state's first limit entries of jobs_due, merged, the first limit
// claimed. Two pollers that select the same jobs both write; the loser runs
// again and finds them no longer due. A run again after its own commit
// keeps what it claimed (job.Claimed) and claims only the rest.
func (s *JobStore) ClaimDue(ctx context.Context, step job.Step, limit int) ([]job.Job, error) {
	if err := job.CheckClaimLimit(limit); err != nil {
		return nil, err
	}
	states := liveStates(step.From)
	if len(states) == 0 {
		return []job.Job{}, nil
	}
	var mine job.Claimed
	claimed, err := inTx(ctx, s.db.update, func(ctx context.Context, tx query.TxActor) ([]job.Job, error) {
		if !earlierCommit(ctx) {
			mine = job.Claimed{}
		}
		get := func(id string) (job.Job, error) { return s.getJobs(ctx, tx, id) }
		return mine.Run(limit, get, func(n int) ([]job.Job, error) {
			now := s.db.now()
			var due []job.Job
			for _, st := range states {
				rows, err := scanAll(ctx, s.db, tx, selectDueJobs, dueParams(st, now, n), scanJob)
				if err != nil {
					return nil, err
				}
				due = append(due, rows...)
			}
			if due = firstDue(due, now, n); len(due) == 0 {
				return nil, nil
			}
			if err := s.loadSegments(ctx, tx, due); err != nil {
				return nil, err
			}
			next, err := job.ClaimAll(due, step, now)
			if err != nil {
				return nil, err
			}
			return next, s.db.exec(ctx, tx, upsertJobs, jobsParams(next...))
		})
	})
	if err != nil {
		return nil, fmt.Errorf("claim due jobs for %s: %w", step.Name, err)
	}
	return claimed, nil
}

// firstDue merges the states' rows: due at now (job.Due, the claim test the
// query leaves out), by next_run_at then id, at most limit.
func firstDue(rows []job.Job, now time.Time, limit int) []job.Job {
	due := rows[:0]
	for _, j := range rows {
		if j.Due(now) {
			due = append(due, j)
		}
	}
	slices.SortFunc(due, func(a, b job.Job) int {
		if c := a.NextRunAt.Compare(b.NextRunAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	if len(due) > limit {
		due = due[:limit]
	}
	return due
}

// NextDue reads one jobs_due row per live state.
func (s *JobStore) NextDue(ctx context.Context, states []job.State) (time.Time, bool, error) {
	e, err := inTx(ctx, s.db.read, func(ctx context.Context, tx query.TxActor) (e earliest, err error) {
		err = e.jobs(ctx, s.db, tx, states)
		return e, err
	})
	if err != nil {
		return time.Time{}, false, fmt.Errorf("next due job: %w", err)
	}
	return e.at, e.found, nil
}

type earliest struct {
	at    time.Time
	found bool
}

func (e *earliest) first(ctx context.Context, db *DB, tx query.TxActor, stmt, col string, p params) error {
	return db.rows(ctx, tx, stmt, p, func(row query.Row) error {
		var at time.Time
		if err := row.ScanNamed(query.Named(col, &at)); err != nil {
			return fmt.Errorf("read %s: %w", col, err)
		}
		if !at.IsZero() && (!e.found || at.Before(e.at)) {
			e.at, e.found = at.UTC(), true
		}
		return nil
	})
}

func (e *earliest) jobs(ctx context.Context, db *DB, tx query.TxActor, states []job.State) error {
	for _, st := range liveStates(states) {
		if err := e.first(ctx, db, tx, selectNextDue, "next_run_at", nextDueParams(st)); err != nil {
			return err
		}
	}
	return nil
}

func (s *JobStore) List(ctx context.Context, ownerID, cursor string, limit int) (job.Page, error) {
	if err := job.CheckListLimit(limit); err != nil {
		return job.Page{}, err
	}
	cursor, err := job.ParseCursor(cursor)
	if err != nil {
		return job.Page{}, err
	}
	stmt, p := listJobs, listParams(ownerID, cursor, limit+1)
	if cursor != "" {
		stmt = listJobsAfter
	}
	page, err := inTx(ctx, s.db.read, func(ctx context.Context, tx query.TxActor) (page job.Page, err error) {
		if page.Jobs, err = scanAll(ctx, s.db, tx, stmt, p, scanJob); err != nil {
			return page, err
		}
		if len(page.Jobs) > limit {
			page.Jobs = page.Jobs[:limit]
			page.Next = page.Jobs[limit-1].ID
		}
		return page, s.loadSegments(ctx, tx, page.Jobs)
	})
	if err != nil {
		return job.Page{}, fmt.Errorf("list jobs: %w", err)
	}
	return page, nil
}
