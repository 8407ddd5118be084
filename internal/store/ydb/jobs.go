package ydb

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ydb-platform/ydb-go-sdk/v3/query"
	"github.com/ydb-platform/ydb-go-sdk/v3/table/types"

	"transcriber/internal/errs"
	"transcriber/internal/job"
)

// errJobTaken: a new job's id names a job made by another call, which a
// new ULID never does.
var errJobTaken = errs.New(errs.Conflict, "store_conflict", "")

// JobStore keeps jobs in the jobs and segments tables.
type JobStore struct{ db *DB }

var _ job.Store = (*JobStore)(nil)

// NewJobStore returns the job store of db.
func NewJobStore(db *DB) *JobStore { return &JobStore{db: db} }

// Create records a new job.
func (s *JobStore) Create(ctx context.Context, d job.Draft) (job.Job, error) {
	j, err := job.NewJob(d, s.db.now())
	if err != nil {
		return job.Job{}, err
	}
	j = stored(j)
	err = s.db.update(ctx, func(ctx context.Context, tx query.TxActor) error {
		// A run that finds the job after its own commit (the answer
		// lost) finds this call's row (its id is new): made.
		cur, err := s.getJobs(ctx, tx, j.ID)
		switch {
		case err == nil && earlierCommit(ctx) && job.Same(cur, j):
			return nil
		case err == nil:
			return errJobTaken
		case !errors.Is(err, job.ErrNotFound):
			return err
		}
		return s.db.exec(ctx, tx, insertJobs, jobsParams(j))
	})
	if err != nil {
		return job.Job{}, fmt.Errorf("create job: %w", err)
	}
	return j, nil
}

// CreateForMessage records the job of a Telegram message once.
func (s *JobStore) CreateForMessage(ctx context.Context, d job.Draft) (job.Job, bool, error) {
	fresh, err := job.NewMessageJob(d, s.db.now())
	if err != nil {
		return job.Job{}, false, err
	}
	j, created, err := s.createOnce(ctx, fresh, messageKey, messageParams(d.TelegramChatID, d.TelegramMessageID))
	if err != nil {
		return job.Job{}, false, fmt.Errorf("create job for message %d/%d: %w", d.TelegramChatID, d.TelegramMessageID, err)
	}
	return j, created, nil
}

// CreateOnce records the job of an owner's idempotency key once.
func (s *JobStore) CreateOnce(ctx context.Context, d job.Draft) (job.Job, bool, error) {
	fresh, err := job.NewKeyedJob(d, s.db.now())
	if err != nil {
		return job.Job{}, false, err
	}
	j, created, err := s.createOnce(ctx, fresh, idempotencyKey, keyParams(d.OwnerID, d.IdempotencyKey))
	if err != nil {
		return job.Job{}, false, fmt.Errorf("create job once: %w", err)
	}
	return j, created, nil
}

// keyTable is the statements of a table that makes a job once per key.
type keyTable struct{ sel, insert, upsert, del string }

var (
	messageKey     = keyTable{selectMessageJob, insertMessageJob, upsertMessageJob, deleteMessageJob}
	idempotencyKey = keyTable{selectKeyJob, insertKeyJob, upsertKeyJob, deleteKeyJob}
)

// createOnce returns the job that kt's row for key names, or records fresh
// and its key row, in one transaction; a run again after its commit finds
// fresh, and says it made it. Two callers that both find no key
// both insert; the first commit wins and the other's locks are
// invalidated, so the SDK runs it again and it finds the winner's job. An
// INSERT that finds the key already taken is retried the same way. A key
// row whose job is gone (the job's row expired first) is pointed at fresh.
func (s *JobStore) createOnce(ctx context.Context, fresh job.Job, kt keyTable, key params) (j job.Job, created bool, err error) {
	fresh = stored(fresh)
	err = s.db.update(ctx, func(ctx context.Context, tx query.TxActor) error {
		j, created = job.Job{}, false
		var id string
		err := s.db.rows(ctx, tx, kt.sel, key, func(row query.Row) error {
			return row.ScanNamed(query.Named("job_id", &id))
		})
		if err != nil {
			return err
		}
		write := kt.insert
		if id != "" {
			found, err := s.getJobs(ctx, tx, id)
			if err == nil {
				// fresh itself when this runs again after its commit: made
				// by this call.
				j, created = found, found.ID == fresh.ID
				return nil
			}
			if !errors.Is(err, job.ErrNotFound) {
				return err
			}
			write = kt.upsert
		}
		if err := retryKeyConflict(s.db.exec(ctx, tx, write, keyRowParams(key, fresh.ID, fresh.CreatedAt))); err != nil {
			return err
		}
		if err := s.db.exec(ctx, tx, insertJobs, jobsParams(fresh)); err != nil {
			return err
		}
		j, created = fresh, true
		return nil
	})
	return j, created, err
}

// getJobs reads job id with its segments inside tx.
func (s *JobStore) getJobs(ctx context.Context, tx query.TxActor, id string) (job.Job, error) {
	j, err := s.getRow(ctx, tx, id)
	if err != nil {
		return job.Job{}, err
	}
	one := []job.Job{j}
	if err := s.loadSegments(ctx, tx, one); err != nil {
		return job.Job{}, err
	}
	return one[0], nil
}

// getRow reads job id's row inside tx, without its segments.
func (s *JobStore) getRow(ctx context.Context, tx query.TxActor, id string) (job.Job, error) {
	var (
		j     job.Job
		found bool
	)
	err := s.db.rows(ctx, tx, selectJob, jobIDParams(id), func(row query.Row) error {
		var err error
		j, err = scanJob(row)
		found = true
		return err
	})
	if err != nil {
		return job.Job{}, err
	}
	if !found {
		return job.Job{}, job.ErrNotFound
	}
	return j, nil
}

// loadSegments fills in the segments of jobs, in one query.
func (s *JobStore) loadSegments(ctx context.Context, tx query.TxActor, jobs []job.Job) error {
	if len(jobs) == 0 {
		return nil
	}
	at := make(map[string]int, len(jobs))
	ids := make([]types.Value, len(jobs))
	for i, j := range jobs {
		at[j.ID] = i
		ids[i] = utf8(j.ID)
		jobs[i].Segments = nil
	}
	return s.db.rows(ctx, tx, selectSegments, jobIDsParams(ids), func(row query.Row) error {
		var r segmentRow
		if err := row.ScanNamed(segmentDests(&r)...); err != nil {
			return fmt.Errorf("read segment row: %w", err)
		}
		r.Seq = int(r.seq)
		if !r.CountedIn.IsZero() {
			r.CountedIn = r.CountedIn.UTC() // the SDK hands Timestamps back in the local zone
		}
		i := at[r.jobID]
		jobs[i].Segments = append(jobs[i].Segments, r.Segment)
		return nil
	})
}

// writeSegments replaces the stored segments of j with j.Segments.
func (s *JobStore) writeSegments(ctx context.Context, tx query.TxActor, j job.Job) error {
	if err := s.db.exec(ctx, tx, deleteSegments, segmentsOfParams(j.ID)); err != nil {
		return err
	}
	if len(j.Segments) == 0 {
		return nil
	}
	return s.db.exec(ctx, tx, upsertSegments, segmentsParams(j.ID, j.Segments, j.EndedAt))
}

// Delete marks a job deleted (job.ApplyDelete), in one transaction with
// what goes with it: its segments are written again with the job's end (a
// live job ends now), and its Telegram message and idempotency key rows are
// deleted, so the next job for them is a new one.
func (s *JobStore) Delete(ctx context.Context, id string) (job.Job, error) {
	canon, err := job.ParseID(id)
	if err != nil {
		return job.Job{}, fmt.Errorf("delete job %s: %w", id, err)
	}
	var j job.Job
	err = s.db.update(ctx, func(ctx context.Context, tx query.TxActor) error {
		j = job.Job{}
		cur, err := s.getJobs(ctx, tx, canon)
		if err != nil {
			return err
		}
		next := stored(job.ApplyDelete(cur, s.db.now()))
		if err := s.db.exec(ctx, tx, upsertJobs, jobsParams(next)); err != nil {
			return err
		}
		if err := s.writeSegments(ctx, tx, next); err != nil {
			return err
		}
		if cur.TelegramChatID != 0 {
			if err := s.db.exec(ctx, tx, messageKey.del, withJobID(messageParams(cur.TelegramChatID, cur.TelegramMessageID), cur.ID)); err != nil {
				return err
			}
		}
		if cur.IdempotencyKey != "" {
			if err := s.db.exec(ctx, tx, idempotencyKey.del, withJobID(keyParams(cur.OwnerID, cur.IdempotencyKey), cur.ID)); err != nil {
				return err
			}
		}
		j = next
		return nil
	})
	if err != nil {
		return job.Job{}, fmt.Errorf("delete job %s: %w", canon, err)
	}
	return j, nil
}

// Get returns a job.
func (s *JobStore) Get(ctx context.Context, id string) (job.Job, error) {
	id, err := job.ParseID(id)
	if err != nil {
		return job.Job{}, err
	}
	var j job.Job
	err = s.db.read(ctx, func(ctx context.Context, tx query.TxActor) error {
		var err error
		j, err = s.getJobs(ctx, tx, id)
		return err
	})
	if err != nil {
		return job.Job{}, fmt.Errorf("get job %s: %w", id, err)
	}
	return j, nil
}

// change reads job id with its segments, lets apply decide what it
// becomes, and writes the whole row (with its segments when
// withSegments), in one transaction: the conditional update a save is.
// Claim, Release and Renew write only the claim's columns (narrow).
func (s *JobStore) change(ctx context.Context, id string, withSegments bool, apply func(cur job.Job, now time.Time) (job.Job, error)) (job.Job, error) {
	id, err := job.ParseID(id)
	if err != nil {
		return job.Job{}, err
	}
	var j job.Job
	err = s.db.update(ctx, func(ctx context.Context, tx query.TxActor) error {
		j = job.Job{}
		cur, err := s.getJobs(ctx, tx, id)
		if err != nil {
			return err
		}
		next, err := apply(cur, s.db.now())
		if err != nil {
			return err
		}
		next = stored(next)
		if err := s.db.exec(ctx, tx, upsertJobs, jobsParams(next)); err != nil {
			return err
		}
		if withSegments {
			if err := s.writeSegments(ctx, tx, next); err != nil {
				return err
			}
		}
		j = next
		return nil
	})
	return j, err
}

// Claim takes one job for step: the job's row read, the claim's columns
// written (updateClaim), and its segments read for the answer.
func (s *JobStore) Claim(ctx context.Context, id string, step job.Step) (job.Job, error) {
	return s.narrow(claimWrite, true).Claim(ctx, id, step)
}

// Save writes a step's result under its claim.
func (s *JobStore) Save(ctx context.Context, j job.Job, n job.Next) (job.Job, error) {
	return job.Change(s.change).Save(ctx, j, n)
}

// Release ends a claim after a failed attempt: the job's row read, the
// columns of the release written (updateRelease); no segments.
func (s *JobStore) Release(ctx context.Context, c job.Claim, pause time.Duration, f job.Failure) (job.Job, error) {
	return s.narrow(releaseWrite, false).Release(ctx, c, pause, f)
}

// Renew moves a held claim's expiry on: the job's row read, claim_until
// and next_run_at written (updateRenew); no segments.
func (s *JobStore) Renew(ctx context.Context, c job.Claim, step job.Step) (job.Claim, error) {
	return s.narrow(renewWrite, false).Renew(ctx, c, step)
}

// liveStates are the non-terminal states among states, as parameter values.
func liveStates(states []job.State) []types.Value {
	var vs []types.Value
	for _, st := range states {
		if !st.Terminal() {
			vs = append(vs, utf8(string(st)))
		}
	}
	return vs
}

// Reusable returns the latest done, not deleted job with reuse key key
// that ended after endedAfter, by the jobs_reuse index.
func (s *JobStore) Reusable(ctx context.Context, key string, endedAfter time.Time) (job.Job, error) {
	if key == "" {
		return job.Job{}, job.ErrNotFound
	}
	var (
		out   job.Job
		found bool
	)
	err := s.db.read(ctx, func(ctx context.Context, tx query.TxActor) error {
		found = false
		return s.db.rows(ctx, tx, selectReusable, reusableParams(key, endedAfter), func(row query.Row) error {
			j, err := scanJob(row)
			out, found = j, err == nil
			return err
		})
	})
	switch {
	case err != nil:
		return job.Job{}, fmt.Errorf("reusable job: %w", err)
	case !found:
		return job.Job{}, job.ErrNotFound
	}
	return out, nil
}

// Unfinished returns up to limit unfinished jobs charged to chargedTo,
// oldest first: the start of the payer's range of jobs_unfinished.
func (s *JobStore) Unfinished(ctx context.Context, chargedTo string, limit int) ([]job.Job, error) {
	if err := job.CheckUnfinished(chargedTo, limit); err != nil {
		return nil, err
	}
	var out []job.Job
	err := s.db.read(ctx, func(ctx context.Context, tx query.TxActor) error {
		out = nil
		return s.db.rows(ctx, tx, selectUnfinished, unfinishedParams(chargedTo, limit), func(row query.Row) error {
			j, err := scanJob(row)
			out = append(out, j)
			return err
		})
	})
	if err != nil {
		return nil, fmt.Errorf("unfinished jobs: %w", err)
	}
	return out, nil
}
