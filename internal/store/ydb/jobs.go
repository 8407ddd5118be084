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

// errJobTaken: a new ULID names another call's job; never expected.
var errJobTaken = errs.New(errs.Conflict, "store_conflict", "")

type JobStore struct{ db *DB }

var _ job.Store = (*JobStore)(nil)

func NewJobStore(db *DB) *JobStore { return &JobStore{db: db} }

func (s *JobStore) Create(ctx context.Context, d job.Draft) (job.Job, error) {
	j, err := job.NewJob(d, s.db.now())
	if err != nil {
		return job.Job{}, err
	}
	j = job.Stored(j)
	err = s.db.update(ctx, func(ctx context.Context, tx query.TxActor) error {
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

func (s *JobStore) CreateForMessage(ctx context.Context, d job.Draft) (job.Job, bool, error) {
	return s.createOnce(ctx, d, job.NewMessageJob, fmt.Sprintf("create job for message %d/%d", d.TelegramChatID, d.TelegramMessageID),
		messageKey, messageParams(d.TelegramChatID, d.TelegramMessageID))
}

func (s *JobStore) CreateOnce(ctx context.Context, d job.Draft) (job.Job, bool, error) {
	return s.createOnce(ctx, d, job.NewKeyedJob, "create job once", idempotencyKey, keyParams(d.OwnerID, d.IdempotencyKey))
}

// keyTable holds the statements of a job-once-per-key table.
type keyTable struct{ sel, insert, upsert, del string }

var (
	messageKey     = keyTable{selectMessageJob, insertMessageJob, upsertMessageJob, deleteMessageJob}
	idempotencyKey = keyTable{selectKeyJob, insertKeyJob, upsertKeyJob, deleteKeyJob}
)

// createOnce returns the job kt's row for key names, or inserts a new one
// (newJob's, whose refusal is returned as is) and the key row. Two callers
// that find no key both insert; the loser runs again and finds the
// winner's job. A key whose job expired is pointed at the new one. Run
// again after its own commit, it finds its job: created. what names the call.
func (s *JobStore) createOnce(ctx context.Context, d job.Draft, newJob func(job.Draft, time.Time) (job.Job, error),
	what string, kt keyTable, key params) (job.Job, bool, error) {
	fresh, err := newJob(d, s.db.now())
	if err != nil {
		return job.Job{}, false, err
	}
	fresh = job.Stored(fresh)
	var created bool
	j, err := inTx(ctx, s.db.update, func(ctx context.Context, tx query.TxActor) (job.Job, error) {
		created = false
		id, _, err := scanOne(ctx, s.db, tx, kt.sel, key, func(row query.Row) (id string, err error) {
			err = row.ScanNamed(query.Named("job_id", &id))
			return id, err
		})
		if err != nil {
			return job.Job{}, err
		}
		write := kt.insert
		if id != "" {
			found, err := s.getJobs(ctx, tx, id)
			if err == nil {
				created = found.ID == fresh.ID
				return found, nil
			}
			if !errors.Is(err, job.ErrNotFound) {
				return job.Job{}, err
			}
			write = kt.upsert
		}
		if err := retryKeyConflict(s.db.exec(ctx, tx, write, keyRowParams(key, fresh.ID, fresh.CreatedAt))); err != nil {
			return job.Job{}, err
		}
		created = true
		return fresh, s.db.exec(ctx, tx, insertJobs, jobsParams(fresh))
	})
	if err != nil {
		return job.Job{}, false, fmt.Errorf("%s: %w", what, err)
	}
	return j, created, nil
}

func (s *JobStore) getJobs(ctx context.Context, tx query.TxActor, id string) (job.Job, error) {
	j, err := s.getRow(ctx, tx, id)
	if err != nil {
		return job.Job{}, err
	}
	return s.withSegments(ctx, tx, j)
}

// getRow reads the row without its segments.
func (s *JobStore) getRow(ctx context.Context, tx query.TxActor, id string) (job.Job, error) {
	j, found, err := scanOne(ctx, s.db, tx, selectJob, jobIDParams(id), scanJob)
	if err == nil && !found {
		err = job.ErrNotFound
	}
	return j, err
}

func (s *JobStore) withSegments(ctx context.Context, tx query.TxActor, j job.Job) (job.Job, error) {
	one := []job.Job{j}
	err := s.loadSegments(ctx, tx, one)
	return one[0], err
}

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
		i := at[r.jobID]
		jobs[i].Segments = append(jobs[i].Segments, r.Segment)
		return nil
	})
}

func (s *JobStore) writeSegments(ctx context.Context, tx query.TxActor, j job.Job) error {
	if err := s.db.exec(ctx, tx, deleteSegments, segmentsOfParams(j.ID)); err != nil {
		return err
	}
	if len(j.Segments) == 0 {
		return nil
	}
	return s.db.exec(ctx, tx, upsertSegments, segmentsParams(j.ID, j.Segments, j.EndedAt))
}

// Delete also writes the segments again with the job's end and deletes
// its key rows, so the next job for them is a new one.
func (s *JobStore) Delete(ctx context.Context, id string) (job.Job, error) {
	canon, err := job.ParseID(id)
	if err != nil {
		return job.Job{}, fmt.Errorf("delete job %s: %w", id, err)
	}
	j, err := inTx(ctx, s.db.update, func(ctx context.Context, tx query.TxActor) (job.Job, error) {
		cur, err := s.getJobs(ctx, tx, canon)
		if err != nil {
			return job.Job{}, err
		}
		next, err := s.write(ctx, tx, job.ApplyDelete(cur, s.db.now()), true)
		if err == nil && cur.TelegramChatID != 0 {
			err = s.db.exec(ctx, tx, messageKey.del, withJobID(messageParams(cur.TelegramChatID, cur.TelegramMessageID), cur.ID))
		}
		if err == nil && cur.IdempotencyKey != "" {
			err = s.db.exec(ctx, tx, idempotencyKey.del, withJobID(keyParams(cur.OwnerID, cur.IdempotencyKey), cur.ID))
		}
		return next, err
	})
	if err != nil {
		return job.Job{}, fmt.Errorf("delete job %s: %w", canon, err)
	}
	return j, nil
}

func (s *JobStore) Get(ctx context.Context, id string) (job.Job, error) {
	id, err := job.ParseID(id)
	if err != nil {
		return job.Job{}, err
	}
	j, err := inTx(ctx, s.db.read, func(ctx context.Context, tx query.TxActor) (job.Job, error) { return s.getJobs(ctx, tx, id) })
	if err != nil {
		return job.Job{}, fmt.Errorf("get job %s: %w", id, err)
	}
	return j, nil
}

// change is Save's job.Change: the whole row written (narrow serves the
// claim's calls).
func (s *JobStore) change(ctx context.Context, id string, withSegments bool, apply func(cur job.Job, now time.Time) (job.Job, error)) (job.Job, error) {
	return s.applyTx(ctx, id, s.getJobs, apply, func(ctx context.Context, tx query.TxActor, _, next job.Job) (job.Job, error) {
		return s.write(ctx, tx, next, withSegments)
	})
}

// applyTx is a job.Change's transaction: id's job read, the rule applied,
// the result written.
func (s *JobStore) applyTx(ctx context.Context, id string, read func(context.Context, query.TxActor, string) (job.Job, error),
	apply func(cur job.Job, now time.Time) (job.Job, error), write func(ctx context.Context, tx query.TxActor, cur, next job.Job) (job.Job, error)) (job.Job, error) {
	id, err := job.ParseID(id)
	if err != nil {
		return job.Job{}, err
	}
	return inTx(ctx, s.db.update, func(ctx context.Context, tx query.TxActor) (job.Job, error) {
		cur, err := read(ctx, tx, id)
		if err != nil {
			return job.Job{}, err
		}
		next, err := apply(cur, s.db.now())
		if err != nil {
			return job.Job{}, err
		}
		return write(ctx, tx, cur, next)
	})
}

// write upserts the whole row of j and, withSegments, its segments.
func (s *JobStore) write(ctx context.Context, tx query.TxActor, j job.Job, withSegments bool) (job.Job, error) {
	j = job.Stored(j)
	err := s.db.exec(ctx, tx, upsertJobs, jobsParams(j))
	if err == nil && withSegments {
		err = s.writeSegments(ctx, tx, j)
	}
	return j, err
}

func (s *JobStore) Claim(ctx context.Context, id string, step job.Step) (job.Job, error) {
	return s.narrow(claimWrite, true).Claim(ctx, id, step)
}

func (s *JobStore) Save(ctx context.Context, j job.Job, n job.Next) (job.Job, error) {
	return job.Change(s.change).Save(ctx, j, n)
}

func (s *JobStore) Release(ctx context.Context, c job.Claim, pause time.Duration, f job.Failure) (job.Job, error) {
	return s.narrow(releaseWrite, false).Release(ctx, c, pause, f)
}

func (s *JobStore) Renew(ctx context.Context, c job.Claim, step job.Step) (job.Claim, error) {
	return s.narrow(renewWrite, false).Renew(ctx, c, step)
}

func liveStates(states []job.State) []types.Value {
	var vs []types.Value
	for _, st := range job.Live(states) {
		vs = append(vs, utf8(string(st)))
	}
	return vs
}

func (s *JobStore) Reusable(ctx context.Context, key string, endedAfter time.Time) (job.Job, error) {
	if key == "" {
		return job.Job{}, job.ErrNotFound
	}
	out, err := readAll(ctx, s.db, selectReusable, reusableParams(key, endedAfter), scanJob)
	if err != nil {
		return job.Job{}, fmt.Errorf("reusable job: %w", err)
	}
	if len(out) == 0 {
		return job.Job{}, job.ErrNotFound
	}
	return out[0], nil
}

func (s *JobStore) Unfinished(ctx context.Context, chargedTo string, limit int) ([]job.Job, error) {
	if err := job.CheckUnfinished(chargedTo, limit); err != nil {
		return nil, err
	}
	out, err := readAll(ctx, s.db, selectUnfinished, unfinishedParams(chargedTo, limit), scanJob)
	if err != nil {
		return nil, fmt.Errorf("unfinished jobs: %w", err)
	}
	return out, nil
}
