package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"transcriber/internal/errs"
	"transcriber/internal/job"
)

// errJobTaken: a new ULID names another call's job; never expected.
var errJobTaken = errs.New(errs.Conflict, "store_conflict", "")

// JobStore's Claim, Save, Release, Renew and Delete are job.Change's over
// update. Delete blanks the key columns (NULL), which frees them: their
// unique indexes are partial over non-NULL values.
type JobStore struct {
	db *DB
	job.Change
}

var _ job.Store = (*JobStore)(nil)

func NewJobStore(db *DB) *JobStore {
	s := &JobStore{db: db}
	s.Change = s.update
	return s
}

// jobColumns is the one column list: scanJob and jobValues follow it.
const jobColumns = `id, state, source, owner_id, language, filename, size_bytes, content_type,
	duration_ms, tg_chat_id, tg_message_id, attempts, next_run_at, claim_id, claim_until,
	error_code, error_message, idempotency_key, deleted_at, upload_by, ended_at, created_at, updated_at,
	charged_to, reserved_seconds, reserved_day, priority, features, recognition, billed_seconds, reserved_micros, reuse_key`

var (
	jobPlaceholders = marks(strings.Count(jobColumns, ",") + 1)
	insertJob       = `INSERT INTO jobs (` + jobColumns + `) VALUES (` + jobPlaceholders + `)`
	updateJob       = `UPDATE jobs SET (` + jobColumns + `) = (` + jobPlaceholders + `) WHERE id = ?`
	selectJob       = `SELECT ` + jobColumns + ` FROM jobs`
)

type scanner interface{ Scan(dest ...any) error }

func scanJob(r scanner) (j job.Job, err error) {
	err = r.Scan(&j.ID, &j.State, &j.Source, &j.OwnerID, &j.Language, &j.Filename, &j.SizeBytes, &j.ContentType,
		&j.DurationMs, orZero(&j.TelegramChatID), orZero(&j.TelegramMessageID), &j.Attempts, timeText(&j.NextRunAt),
		orZero(&j.ClaimID), timeText(&j.ClaimUntil), &j.ErrorCode, &j.ErrorMessage, orZero(&j.IdempotencyKey),
		timeText(&j.DeletedAt), timeText(&j.UploadBy), timeText(&j.EndedAt), timeText(&j.CreatedAt), timeText(&j.UpdatedAt),
		orZero(&j.ChargedTo), orZero(&j.ReservedSeconds), timeText(&j.ReservedDay), orZero(&j.Priority), featuresText{&j.Features},
		orZero(&j.Recognition), orZero(&j.BilledSeconds), orZero(&j.ReservedMicros), orZero(&j.ReuseKey))
	if err != nil {
		return job.Job{}, err
	}
	return j, nil
}

// featuresText scans job.Features from their JSON text (NULL: none).
type featuresText struct{ f *job.Features }

func (t featuresText) Scan(v any) (err error) {
	var s sql.NullString
	if err := s.Scan(v); err != nil {
		return err
	}
	*t.f, err = job.DecodeFeatures(s.String)
	return err
}

func jobValues(j job.Job) []any {
	return []any{j.ID, string(j.State), string(j.Source), j.OwnerID, j.Language, j.Filename, j.SizeBytes, j.ContentType,
		j.DurationMs, orNull(j.TelegramChatID), orNull(j.TelegramMessageID), j.Attempts, formatTime(j.NextRunAt),
		orNull(j.ClaimID), nullTime(j.ClaimUntil),
		j.ErrorCode, j.ErrorMessage, orNull(j.IdempotencyKey), nullTime(j.DeletedAt), nullTime(j.UploadBy),
		nullTime(j.EndedAt), formatTime(j.CreatedAt), formatTime(j.UpdatedAt),
		orNull(j.ChargedTo), orNull(j.ReservedSeconds), nullTime(j.ReservedDay), orNull(string(j.Priority)),
		orNull(job.EncodeFeatures(j.Features)), orNull(string(j.Recognition)), orNull(j.BilledSeconds), orNull(j.ReservedMicros), orNull(j.ReuseKey)}
}

// orNull is v, or NULL for its zero value.
func orNull[T comparable](v T) any {
	var zero T
	if v == zero {
		return nil
	}
	return v
}

func (s *JobStore) Create(ctx context.Context, d job.Draft) (job.Job, error) {
	j, err := job.NewJob(d, s.db.now())
	if err != nil {
		return job.Job{}, err
	}
	err = s.db.tx(ctx, func(tx *sql.Tx) error {
		// Found, it is this call's row, committed by an earlier run.
		cur, err := getJob(ctx, tx, j.ID)
		switch {
		case err == nil && job.Same(cur, job.Stored(j)):
			return nil
		case err == nil:
			return fmt.Errorf("%w: job %s is there already", errJobTaken, j.ID)
		case !errors.Is(err, job.ErrNotFound):
			return err
		}
		return exec(ctx, tx, insertJob, jobValues(j)...)
	})
	if err != nil {
		return job.Job{}, fmt.Errorf("create job: %w", err)
	}
	return j, nil
}

func (s *JobStore) CreateForMessage(ctx context.Context, d job.Draft) (job.Job, bool, error) {
	return s.createOnce(ctx, d, job.NewMessageJob, fmt.Sprintf("create job for message %d/%d", d.TelegramChatID, d.TelegramMessageID),
		` WHERE tg_chat_id = ? AND tg_message_id = ?`, d.TelegramChatID, d.TelegramMessageID)
}

func (s *JobStore) CreateOnce(ctx context.Context, d job.Draft) (job.Job, bool, error) {
	return s.createOnce(ctx, d, job.NewKeyedJob, "create job once", ` WHERE owner_id = ? AND idempotency_key = ?`, d.OwnerID, d.IdempotencyKey)
}

// createOnce returns the job where finds, or inserts a new one (newJob's,
// whose refusal is returned as is); a unique index backs the check. Run
// again after its commit, it finds that job: created. what names the call.
func (s *JobStore) createOnce(ctx context.Context, d job.Draft, newJob func(job.Draft, time.Time) (job.Job, error),
	what, where string, args ...any) (job.Job, bool, error) {
	fresh, err := newJob(d, s.db.now())
	if err != nil {
		return job.Job{}, false, err
	}
	var created bool
	j, err := txResult(ctx, s.db, func(tx *sql.Tx) (job.Job, error) {
		j, err := scanJob(tx.QueryRowContext(ctx, selectJob+where, args...))
		if err == nil {
			created = j.ID == fresh.ID
			return withSegments(ctx, tx, j)
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return job.Job{}, translate(err)
		}
		created = true
		return fresh, exec(ctx, tx, insertJob, jobValues(fresh)...)
	})
	if err != nil {
		return job.Job{}, false, fmt.Errorf("%s: %w", what, err)
	}
	return j, created, nil
}

func (s *JobStore) Get(ctx context.Context, id string) (job.Job, error) {
	id, err := job.ParseID(id)
	if err != nil {
		return job.Job{}, err
	}
	j, err := getJob(ctx, s.db.sql, id)
	if err != nil {
		return job.Job{}, fmt.Errorf("get job %s: %w", id, err)
	}
	return j, nil
}

type queryer interface {
	querier
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func getJob(ctx context.Context, q queryer, id string) (job.Job, error) {
	j, err := scanRow(q.QueryRowContext(ctx, selectJob+` WHERE id = ?`, id), scanJob, job.ErrNotFound)
	if err != nil {
		return job.Job{}, err
	}
	return withSegments(ctx, q, j)
}

func withSegments(ctx context.Context, q querier, j job.Job) (job.Job, error) {
	one := []job.Job{j}
	err := loadSegments(ctx, q, one)
	return one[0], err
}

// update is the store's job.Change.
func (s *JobStore) update(ctx context.Context, id string, withSegments bool, apply func(cur job.Job, now time.Time) (job.Job, error)) (job.Job, error) {
	id, err := job.ParseID(id)
	if err != nil {
		return job.Job{}, err
	}
	return txResult(ctx, s.db, func(tx *sql.Tx) (job.Job, error) {
		cur, err := getJob(ctx, tx, id)
		if err != nil {
			return job.Job{}, err
		}
		j, err := apply(cur, s.db.now())
		if err != nil {
			return job.Job{}, err
		}
		j = job.Stored(j)
		if err := putJob(ctx, tx, j); err != nil || !withSegments {
			return j, err
		}
		return j, writeSegments(ctx, tx, j)
	})
}

// putJob writes the whole row of j, which callers pass job.Stored.
func putJob(ctx context.Context, tx *sql.Tx, j job.Job) error {
	return exec(ctx, tx, updateJob, append(jobValues(j), j.ID)...)
}

func (s *JobStore) ClaimDue(ctx context.Context, step job.Step, limit int) ([]job.Job, error) {
	if err := job.CheckClaimLimit(limit); err != nil {
		return nil, err
	}
	states, in := liveStates(step.From)
	if len(states) == 0 {
		return []job.Job{}, nil
	}
	var mine job.Claimed // an earlier run's claims, should its answer be lost
	claimed, err := txResult(ctx, s.db, func(tx *sql.Tx) ([]job.Job, error) {
		get := func(id string) (job.Job, error) { return getJob(ctx, tx, id) }
		return mine.Run(limit, get, func(n int) ([]job.Job, error) {
			now := s.db.now()
			at := formatTime(now)
			q := selectJob + ` WHERE state IN (` + in + `)
				AND next_run_at <= ? AND (claim_until IS NULL OR claim_until <= ?)
				ORDER BY next_run_at, id LIMIT ?`
			due, err := queryAll(ctx, tx, q, append(states, at, at, n), scanJob)
			if err == nil {
				err = loadSegments(ctx, tx, due)
			}
			if err != nil {
				return nil, err
			}
			next, err := job.ClaimAll(due, step, now)
			for _, j := range next {
				if err == nil {
					err = putJob(ctx, tx, j)
				}
			}
			return next, err
		})
	})
	if err != nil {
		return nil, fmt.Errorf("claim due jobs for %s: %w", step.Name, err)
	}
	return claimed, nil
}

var _ job.Reclaimer = (*JobStore)(nil)

// TakeBackClaims ends every live job's claim: the local stack, the only
// worker on its file, calls it at its start.
func (s *JobStore) TakeBackClaims(ctx context.Context) (int, error) {
	n, err := txResult(ctx, s.db, func(tx *sql.Tx) (int, error) {
		held, err := queryAll(ctx, tx, selectJob+` WHERE claim_id IS NOT NULL AND ended_at IS NULL`, nil, scanJob)
		n, now := 0, s.db.now()
		for _, cur := range held {
			if j, ok := job.ApplyTakeBack(cur, now); ok {
				if err := putJob(ctx, tx, job.Stored(j)); err != nil {
					return 0, err
				}
				n++
			}
		}
		return n, err
	})
	if err != nil {
		return 0, fmt.Errorf("take back claims: %w", err)
	}
	return n, nil
}

func (s *JobStore) List(ctx context.Context, ownerID, cursor string, limit int) (job.Page, error) {
	if err := job.CheckListLimit(limit); err != nil {
		return job.Page{}, err
	}
	cursor, err := job.ParseCursor(cursor)
	if err != nil {
		return job.Page{}, err
	}
	q, args := selectJob+` WHERE owner_id = ?`, []any{ownerID}
	if cursor != "" {
		q, args = q+` AND id < ?`, append(args, cursor)
	}
	var p job.Page
	p.Jobs, err = queryAll(ctx, s.db.sql, q+` ORDER BY id DESC LIMIT ?`, append(args, limit+1), scanJob)
	if err == nil && len(p.Jobs) > limit {
		p.Jobs, p.Next = p.Jobs[:limit], p.Jobs[limit-1].ID
	}
	if err == nil {
		err = loadSegments(ctx, s.db.sql, p.Jobs)
	}
	if err != nil {
		return job.Page{}, fmt.Errorf("list jobs: %w", err)
	}
	return p, nil
}

// Unfinished reads the partial index jobs_unfinished.
func (s *JobStore) Unfinished(ctx context.Context, chargedTo string, limit int) ([]job.Job, error) {
	if err := job.CheckUnfinished(chargedTo, limit); err != nil {
		return nil, err
	}
	out, err := queryAll(ctx, s.db.sql, selectJob+` WHERE charged_to = ? AND ended_at IS NULL ORDER BY id LIMIT ?`,
		[]any{chargedTo, limit}, scanJob)
	if err != nil {
		return nil, fmt.Errorf("unfinished jobs: %w", err)
	}
	return out, nil
}

func (s *JobStore) Reusable(ctx context.Context, key string, endedAfter time.Time) (job.Job, error) {
	if key == "" {
		return job.Job{}, job.ErrNotFound
	}
	j, err := scanRow(s.db.sql.QueryRowContext(ctx, selectJob+` WHERE reuse_key = ? AND state = ? AND deleted_at IS NULL
		AND ended_at > ? ORDER BY ended_at DESC LIMIT 1`, key, string(job.Done), formatTime(endedAfter)), scanJob, job.ErrNotFound)
	if err != nil && !errors.Is(err, job.ErrNotFound) {
		return job.Job{}, fmt.Errorf("reusable job: %w", err)
	}
	return j, err
}

func (s *JobStore) NextDue(ctx context.Context, states []job.State) (time.Time, bool, error) {
	query, args := nextDueQuery(states)
	if query == "" {
		return time.Time{}, false, nil
	}
	t, found, err := earliest(s.db.sql.QueryRowContext(ctx, query, args...))
	if err != nil {
		return time.Time{}, false, fmt.Errorf("next due job: %w", err)
	}
	return t, found, nil
}

// nextDueQuery is the earliest next_run_at of the live states, answered
// from jobs_due; "" when none is live.
func nextDueQuery(states []job.State) (string, []any) {
	args, in := liveStates(states)
	if len(args) == 0 {
		return "", nil
	}
	return `SELECT MIN(next_run_at) FROM jobs WHERE state IN (` + in + `)`, args
}

// liveStates are the non-terminal states as arguments, and their marks.
func liveStates(states []job.State) (args []any, in string) {
	for _, st := range job.Live(states) {
		args = append(args, string(st))
	}
	return args, marks(len(args))
}
