package ydb

import (
	"context"
	"fmt"
	"time"

	"github.com/ydb-platform/ydb-go-sdk/v3/query"
	"github.com/ydb-platform/ydb-go-sdk/v3/table/types"

	"transcriber/internal/callback"
)

// Callbacks keeps the callbacks of API jobs in the callbacks table. Every
// read-check-write is one DoTx, as BotState's are: a concurrent writer of
// the same row invalidates the transaction's locks and the SDK runs it
// again, so of two senders that read a callback as free, one takes it.
type Callbacks struct{ db *DB }

var _ callback.Store = (*Callbacks)(nil)

// NewCallbacks returns the callback store of db.
func NewCallbacks(db *DB) *Callbacks { return &Callbacks{db: db} }

// callbackRow holds one callbacks row as it is read.
type callbackRow struct {
	callback.Delivery
	state      string
	attempts   int32
	lastStatus int32
}

// callbackColumn is one column of callbacks, as deliveryColumn is of
// telegram_deliveries. callbackColumnList is the one list;
// callbacks_statements.go's callbackColumns and callbacksStruct name the
// same columns in the same order.
type callbackColumn struct {
	name  string
	value func(d *callback.Delivery) types.Value
	ref   func(r *callbackRow) any
}

var callbackColumnList = []callbackColumn{
	{"job_id", func(d *callback.Delivery) types.Value { return utf8(d.JobID) }, func(r *callbackRow) any { return &r.JobID }},
	{"url", func(d *callback.Delivery) types.Value { return utf8(d.URL) }, func(r *callbackRow) any { return &r.URL }},
	{"token_hash", func(d *callback.Delivery) types.Value { return utf8(d.TokenHash) }, func(r *callbackRow) any { return &r.TokenHash }},
	{"webhook_id", func(d *callback.Delivery) types.Value { return utf8(d.WebhookID) }, func(r *callbackRow) any { return &r.WebhookID }},
	{"state", func(d *callback.Delivery) types.Value { return utf8(string(d.State)) }, func(r *callbackRow) any { return &r.state }},
	{"attempts", func(d *callback.Delivery) types.Value { return types.Int32Value(int32(d.Attempts)) }, func(r *callbackRow) any { return &r.attempts }}, //nolint:gosec // attempts stay far below 2^31
	{"next_at", func(d *callback.Delivery) types.Value { return ts(d.NextAt) }, func(r *callbackRow) any { return &r.NextAt }},
	{"lease_until", func(d *callback.Delivery) types.Value { return ts(d.LeaseUntil) }, func(r *callbackRow) any { return &r.LeaseUntil }},
	{"first_at", func(d *callback.Delivery) types.Value { return optTS(d.FirstAt) }, func(r *callbackRow) any { return &r.FirstAt }},
	{"last_at", func(d *callback.Delivery) types.Value { return optTS(d.LastAt) }, func(r *callbackRow) any { return &r.LastAt }},
	{"last_status", func(d *callback.Delivery) types.Value { return types.Int32Value(int32(d.LastStatus)) }, func(r *callbackRow) any { return &r.lastStatus }}, //nolint:gosec // an HTTP status
	{"last_error", func(d *callback.Delivery) types.Value { return utf8(d.LastError) }, func(r *callbackRow) any { return &r.LastError }},
	{"created_at", func(d *callback.Delivery) types.Value { return ts(d.CreatedAt) }, func(r *callbackRow) any { return &r.CreatedAt }},
	{"updated_at", func(d *callback.Delivery) types.Value { return ts(d.UpdatedAt) }, func(r *callbackRow) any { return &r.UpdatedAt }},
}

// callbacksParams is the $callbacks parameter of insertCallbacks and
// upsertCallbacks.
func callbacksParams(ds ...callback.Delivery) params {
	vs := make([]types.Value, len(ds))
	for i := range ds {
		fields := make([]types.StructValueOption, len(callbackColumnList))
		for j, c := range callbackColumnList {
			fields[j] = types.StructFieldValue(c.name, c.value(&ds[i]))
		}
		vs[i] = types.StructValue(fields...)
	}
	return params{{"$callbacks", types.ListValue(vs...)}}
}

func callbackJobParams(jobID string) params { return params{{"$job_id", utf8(jobID)}} } // selectCallback

func dueCallbacksParams(now time.Time, n int) params { // selectDueCallbacks
	return params{{"$state", utf8(string(callback.Pending))}, {"$now", ts(now)}, {"$limit", uint64Param(n)}}
}

func scanCallback(row query.Row) (callback.Delivery, error) {
	var r callbackRow
	dests := make([]query.NamedDestination, len(callbackColumnList))
	for i, c := range callbackColumnList {
		dests[i] = query.Named(c.name, c.ref(&r))
	}
	if err := row.ScanNamed(dests...); err != nil {
		return callback.Delivery{}, fmt.Errorf("read callback row: %w", err)
	}
	d := r.Delivery
	d.State, d.Attempts, d.LastStatus = callback.State(r.state), int(r.attempts), int(r.lastStatus)
	for _, t := range []*time.Time{&d.NextAt, &d.LeaseUntil, &d.FirstAt, &d.LastAt, &d.CreatedAt, &d.UpdatedAt} {
		if !t.IsZero() {
			*t = t.UTC()
		}
	}
	return d, nil
}

func (s *Callbacks) get(ctx context.Context, tx query.TxActor, jobID string) (callback.Delivery, bool, error) {
	return readOne(ctx, s.db, tx, selectCallback, callbackJobParams(jobID), scanCallback)
}

// change is callback.Change over one transaction: read, decide, and
// insert (retried on a key taken meanwhile) or upsert. A run after this
// call's own commit (its answer lost) finds what that commit wrote
// (callback.Same) and answers it, written.
func (s *Callbacks) change(ctx context.Context, jobID string,
	apply func(cur callback.Delivery, found bool) (callback.Delivery, bool, error),
) (d callback.Delivery, wrote bool, err error) {
	var mine *callback.Delivery // what an earlier run wrote
	err = s.db.update(ctx, func(ctx context.Context, tx query.TxActor) error {
		d, wrote = callback.Delivery{}, false
		cur, found, err := s.get(ctx, tx, jobID)
		if err != nil {
			return err
		}
		if found && mine != nil && earlierCommit(ctx) && callback.Same(cur, *mine) {
			d, wrote = cur, true
			return nil
		}
		next, write, err := apply(cur, found)
		switch {
		case err != nil:
			return err
		case write && found:
			err = s.db.exec(ctx, tx, upsertCallbacks, callbacksParams(next))
		case write:
			err = retryKeyConflict(s.db.exec(ctx, tx, insertCallbacks, callbacksParams(next)))
		}
		if err != nil {
			return err
		}
		d, wrote = next, write
		if write {
			mine = &next
		}
		return nil
	})
	return d, wrote, err
}

// Register records a job's callback unless it has one, in one transaction.
func (s *Callbacks) Register(ctx context.Context, d callback.Delivery, at, now time.Time) (callback.Delivery, bool, error) {
	return callback.Change(s.change).Register(ctx, d, at, now)
}

// Begin takes a job's callback for sending, in one transaction.
func (s *Callbacks) Begin(ctx context.Context, jobID string, now time.Time, lease time.Duration) (callback.Delivery, bool, error) {
	return callback.Change(s.change).Begin(ctx, jobID, now, lease)
}

// Finish records the outcome of a send, in one transaction.
func (s *Callbacks) Finish(ctx context.Context, jobID string, o callback.Outcome, now time.Time) (callback.Delivery, error) {
	return callback.Change(s.change).Finish(ctx, jobID, o, now)
}

// Get returns a job's callback.
func (s *Callbacks) Get(ctx context.Context, jobID string) (callback.Delivery, error) {
	if err := callback.ValidateJobID(jobID); err != nil {
		return callback.Delivery{}, fmt.Errorf("get callback: %w", err)
	}
	var (
		d     callback.Delivery
		found bool
	)
	err := s.db.read(ctx, func(ctx context.Context, tx query.TxActor) error {
		var err error
		d, found, err = s.get(ctx, tx, jobID)
		return err
	})
	if err == nil && !found {
		err = callback.ErrNotFound
	}
	if err != nil {
		return callback.Delivery{}, fmt.Errorf("get callback of job %s: %w", jobID, err)
	}
	return d, nil
}

// ClaimDue takes up to limit due callbacks: the selection through
// callbacks_due, the take of each, and the writes, in one transaction;
// two sweepers that select the same rows both write them, and the one
// whose commit comes second runs again and finds them held.
func (s *Callbacks) ClaimDue(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]callback.Delivery, error) {
	if err := callback.ValidateClaim(now, lease, limit); err != nil {
		return nil, fmt.Errorf("claim due callbacks: %w", err)
	}
	now = truncMs(now)
	claimed, err := claimDue(ctx, s.db, limit, selectDueCallbacks, func(n int) params { return dueCallbacksParams(now, n) }, scanCallback,
		func(cur callback.Delivery) (callback.Delivery, error) { return callback.ApplyClaim(cur, now, lease) }, upsertCallbacks, callbacksParams,
		func(ctx context.Context, tx query.TxActor, d callback.Delivery) (callback.Delivery, bool, error) {
			return s.get(ctx, tx, d.JobID)
		}, callback.Same)
	if err != nil {
		return nil, fmt.Errorf("claim due callbacks: %w", err)
	}
	return claimed, nil
}
