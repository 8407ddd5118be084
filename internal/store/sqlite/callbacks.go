package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"transcriber/internal/callback"
)

// Callbacks keeps the callbacks of API jobs in the callbacks table. Every
// read-check-write is one write transaction (DB.tx), as a job claim is.
type Callbacks struct{ db *DB }

var _ callback.Store = (*Callbacks)(nil)

// NewCallbacks returns the callback store of db.
func NewCallbacks(db *DB) *Callbacks { return &Callbacks{db: db} }

// callbackColumns is the one list of the callbacks table's columns:
// scanCallback reads them and callbackValues writes them in this order.
const callbackColumns = `job_id, url, token_hash, webhook_id, state, attempts, next_at, lease_until, first_at, last_at,
	last_status, last_error, created_at, updated_at`

const (
	selectCallback = `SELECT ` + callbackColumns + ` FROM callbacks`
	insertCallback = `INSERT INTO callbacks (` + callbackColumns + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	updateCallback = `UPDATE callbacks SET (` + callbackColumns + `) = (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) WHERE job_id = ?`
	// selectDueCallbacks is ClaimDue's selection, a range of the
	// callbacks_due index in its order.
	selectDueCallbacks = selectCallback + ` WHERE state = ? AND next_at <= ? AND lease_until <= ?
		ORDER BY next_at, job_id LIMIT ?`
)

func scanCallback(r scanner) (callback.Delivery, error) {
	var (
		d                             callback.Delivery
		state                         string
		next, lease, created, updated string
		first, last                   sql.NullString
	)
	err := r.Scan(&d.JobID, &d.URL, &d.TokenHash, &d.WebhookID, &state, &d.Attempts, &next, &lease, &first, &last,
		&d.LastStatus, &d.LastError, &created, &updated)
	if err != nil {
		return callback.Delivery{}, err
	}
	d.State = callback.State(state)
	var errT [6]error
	d.NextAt, errT[0] = parseTime(next)
	d.LeaseUntil, errT[1] = parseTime(lease)
	d.FirstAt, errT[2] = parseNullTime(first)
	d.LastAt, errT[3] = parseNullTime(last)
	d.CreatedAt, errT[4] = parseTime(created)
	d.UpdatedAt, errT[5] = parseTime(updated)
	if err := errors.Join(errT[:]...); err != nil {
		return callback.Delivery{}, fmt.Errorf("callback of job %s: %w", d.JobID, err)
	}
	return d, nil
}

func callbackValues(d callback.Delivery) []any {
	return []any{d.JobID, d.URL, d.TokenHash, d.WebhookID, string(d.State), d.Attempts, formatTime(d.NextAt),
		formatTime(d.LeaseUntil), nullTime(d.FirstAt), nullTime(d.LastAt), d.LastStatus, d.LastError,
		formatTime(d.CreatedAt), formatTime(d.UpdatedAt)}
}

func getCallback(ctx context.Context, q queryer, jobID string) (callback.Delivery, bool, error) {
	d, err := scanCallback(q.QueryRowContext(ctx, selectCallback+` WHERE job_id = ?`, jobID))
	if errors.Is(err, sql.ErrNoRows) {
		return callback.Delivery{}, false, nil
	}
	if err != nil {
		return callback.Delivery{}, false, translate(err)
	}
	return d, true, nil
}

// change is callback.Change over one write transaction.
func (s *Callbacks) change(ctx context.Context, jobID string,
	apply func(cur callback.Delivery, found bool) (callback.Delivery, bool, error),
) (d callback.Delivery, wrote bool, err error) {
	var mine *callback.Delivery // what an earlier run wrote, committed (DB.lose)
	err = s.db.tx(ctx, func(tx *sql.Tx) error {
		cur, found, err := getCallback(ctx, tx, jobID)
		if err != nil {
			return err
		}
		if found && mine != nil && callback.Same(cur, *mine) {
			d, wrote = cur, true
			return nil
		}
		if d, wrote, err = apply(cur, found); err != nil || !wrote {
			return err
		}
		w := d
		mine = &w
		if found {
			_, err = tx.ExecContext(ctx, updateCallback, append(callbackValues(d), jobID)...)
		} else {
			_, err = tx.ExecContext(ctx, insertCallback, callbackValues(d)...)
		}
		return translate(err)
	})
	return d, wrote, err
}

// Register records a job's callback unless it has one, in one write
// transaction.
func (s *Callbacks) Register(ctx context.Context, d callback.Delivery, at, now time.Time) (callback.Delivery, bool, error) {
	return callback.Change(s.change).Register(ctx, d, at, now)
}

// Begin takes a job's callback for sending, in one write transaction.
func (s *Callbacks) Begin(ctx context.Context, jobID string, now time.Time, lease time.Duration) (callback.Delivery, bool, error) {
	return callback.Change(s.change).Begin(ctx, jobID, now, lease)
}

// Finish records the outcome of a send, in one write transaction.
func (s *Callbacks) Finish(ctx context.Context, jobID string, o callback.Outcome, now time.Time) (callback.Delivery, error) {
	return callback.Change(s.change).Finish(ctx, jobID, o, now)
}

// Get returns a job's callback.
func (s *Callbacks) Get(ctx context.Context, jobID string) (callback.Delivery, error) {
	if err := callback.ValidateJobID(jobID); err != nil {
		return callback.Delivery{}, fmt.Errorf("get callback: %w", err)
	}
	d, found, err := getCallback(ctx, s.db.sql, jobID)
	if err == nil && !found {
		err = callback.ErrNotFound
	}
	if err != nil {
		return callback.Delivery{}, fmt.Errorf("get callback of job %s: %w", jobID, err)
	}
	return d, nil
}

// ClaimDue takes up to limit due callbacks: the selection through
// callbacks_due and the writes, in one write transaction, so no other
// caller selects them meanwhile.
func (s *Callbacks) ClaimDue(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]callback.Delivery, error) {
	if err := callback.ValidateClaim(now, lease, limit); err != nil {
		return nil, fmt.Errorf("claim due callbacks: %w", err)
	}
	at := formatTime(now)
	claimed, err := claimDue(ctx, s.db, limit, selectDueCallbacks, []any{string(callback.Pending), at, at, limit}, scanCallback,
		func(cur callback.Delivery) (callback.Delivery, error) { return callback.ApplyClaim(cur, now, lease) },
		func(tx *sql.Tx, d callback.Delivery) error {
			_, err := tx.ExecContext(ctx, updateCallback, append(callbackValues(d), d.JobID)...)
			return err
		},
		func(tx *sql.Tx, d callback.Delivery) (callback.Delivery, bool, error) {
			return getCallback(ctx, tx, d.JobID)
		},
		callback.Same)
	if err != nil {
		return nil, fmt.Errorf("claim due callbacks: %w", err)
	}
	return claimed, nil
}
