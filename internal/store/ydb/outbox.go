package ydb

import (
	"context"
	"fmt"
	"time"

	"github.com/ydb-platform/ydb-go-sdk/v3/query"
	"github.com/ydb-platform/ydb-go-sdk/v3/table/types"

	"transcriber/internal/outbox"
	"transcriber/internal/status"
)

// Outbox keeps the outbox table. Every read-check-write is one DoTx: a
// concurrent writer of the row breaks its locks and the SDK runs it again,
// so of two senders that read an entry as free, one takes it.
type Outbox struct {
	outbox.Change
	db *DB
}

var (
	_ outbox.Store  = (*Outbox)(nil)
	_ status.Outbox = (*Outbox)(nil)
)

func NewOutbox(db *DB) *Outbox {
	s := &Outbox{db: db}
	s.Change = s.change
	return s
}

// entryRow holds one outbox row as it is read.
type entryRow struct {
	outbox.Entry
	kind, state          string
	attempts, lastStatus int32
}

// outboxColumnList names outboxColumns (outbox_statements.go) in order.
var outboxColumnList = []rowCol[outbox.Entry, entryRow]{
	{"kind", func(e *outbox.Entry) types.Value { return utf8(string(e.Kind)) }, func(r *entryRow) any { return &r.kind }},
	{"key", func(e *outbox.Entry) types.Value { return utf8(e.Key) }, func(r *entryRow) any { return &r.Key }},
	{"job_id", func(e *outbox.Entry) types.Value { return utf8(e.JobID) }, func(r *entryRow) any { return &r.JobID }},
	{"payload", func(e *outbox.Entry) types.Value { return utf8(e.Payload) }, func(r *entryRow) any { return &r.Payload }},
	{"state", func(e *outbox.Entry) types.Value { return utf8(string(e.State)) }, func(r *entryRow) any { return &r.state }},
	{"sent_id", func(e *outbox.Entry) types.Value { return i64(e.SentID) }, func(r *entryRow) any { return &r.SentID }},
	{"attempts", func(e *outbox.Entry) types.Value { return types.Int32Value(int32(e.Attempts)) }, func(r *entryRow) any { return &r.attempts }}, //nolint:gosec // attempts stay far below 2^31
	{"next_at", func(e *outbox.Entry) types.Value { return ts(e.NextAt) }, func(r *entryRow) any { return &r.NextAt }},
	{"lease_until", func(e *outbox.Entry) types.Value { return ts(e.LeaseUntil) }, func(r *entryRow) any { return &r.LeaseUntil }},
	{"first_at", func(e *outbox.Entry) types.Value { return optTS(e.FirstAt) }, func(r *entryRow) any { return &r.FirstAt }},
	{"last_at", func(e *outbox.Entry) types.Value { return optTS(e.LastAt) }, func(r *entryRow) any { return &r.LastAt }},
	{"last_status", func(e *outbox.Entry) types.Value { return types.Int32Value(int32(e.LastStatus)) }, func(r *entryRow) any { return &r.lastStatus }}, //nolint:gosec // an HTTP status
	{"last_error", func(e *outbox.Entry) types.Value { return utf8(e.LastError) }, func(r *entryRow) any { return &r.LastError }},
	{"created_at", func(e *outbox.Entry) types.Value { return ts(e.CreatedAt) }, func(r *entryRow) any { return &r.CreatedAt }},
	{"updated_at", func(e *outbox.Entry) types.Value { return ts(e.UpdatedAt) }, func(r *entryRow) any { return &r.UpdatedAt }},
}

func entriesParams(es ...outbox.Entry) params {
	vs := make([]types.Value, len(es))
	for i := range es {
		vs[i] = structOf(outboxColumnList, &es[i])
	}
	return params{{"$entries", types.ListValue(vs...)}}
}

func entryParams(kind outbox.Kind, key string) params { // selectEntry
	return params{{"$kind", utf8(string(kind))}, {"$key", utf8(key)}}
}

func dueEntriesParams(kind outbox.Kind, now time.Time, n int) params { // selectDueEntries
	return params{{"$kind", utf8(string(kind))}, {"$state", utf8(string(outbox.Pending))}, {"$now", ts(now)}, {"$limit", uint64Param(n)}}
}

func inStateParams(kind outbox.Kind, state outbox.State, since time.Time, n int) params { // selectEntriesInState
	return params{{"$kind", utf8(string(kind))}, {"$state", utf8(string(state))}, {"$since", ts(sinceOrEpoch(since))}, {"$limit", uint64Param(n)}}
}

func nextEntryParams(kind outbox.Kind) params { // selectNextEntry
	return params{{"$kind", utf8(string(kind))}, {"$state", utf8(string(outbox.Pending))}}
}

func keyRangeParams(kind outbox.Kind, from, to string) params { // deleteKeyRange
	return params{{"$kind", utf8(string(kind))}, {"$from", utf8(from)}, {"$to", utf8(to)}}
}

func scanEntry(row query.Row) (outbox.Entry, error) {
	var r entryRow
	if err := row.ScanNamed(destsOf(outboxColumnList, &r)...); err != nil {
		return outbox.Entry{}, fmt.Errorf("read outbox row: %w", err)
	}
	return r.finish(), nil
}

func (r *entryRow) finish() outbox.Entry {
	e := r.Entry
	e.Kind, e.State, e.Attempts, e.LastStatus = outbox.Kind(r.kind), outbox.State(r.state), int(r.attempts), int(r.lastStatus)
	inUTC(&e.NextAt, &e.LeaseUntil, &e.FirstAt, &e.LastAt, &e.CreatedAt, &e.UpdatedAt)
	return e
}

func (s *Outbox) get(ctx context.Context, tx query.TxActor, kind outbox.Kind, key string) (outbox.Entry, bool, error) {
	return scanOne(ctx, s.db, tx, selectEntry, entryParams(kind, key), scanEntry)
}

// change inserts (retried on a key taken meanwhile) or upserts.
func (s *Outbox) change(ctx context.Context, kind outbox.Kind, key string,
	apply func(cur outbox.Entry, found bool) (outbox.Entry, bool, error),
) (e outbox.Entry, wrote bool, err error) {
	var mine *outbox.Entry // what an earlier run wrote
	err = s.db.update(ctx, func(ctx context.Context, tx query.TxActor) error {
		cur, found, err := s.get(ctx, tx, kind, key)
		if err != nil {
			return err
		}
		if found && mine != nil && earlierCommit(ctx) && outbox.Same(cur, *mine) {
			e, wrote = cur, true
			return nil
		}
		if e, wrote, err = apply(cur, found); err != nil || !wrote {
			return err
		}
		if found {
			err = s.db.exec(ctx, tx, upsertEntries, entriesParams(e))
		} else {
			err = retryKeyConflict(s.db.exec(ctx, tx, insertEntries, entriesParams(e)))
		}
		if err == nil {
			w := e
			mine = &w
		}
		return err
	})
	return e, wrote, err
}

func (s *Outbox) Get(ctx context.Context, kind outbox.Kind, key string) (outbox.Entry, error) {
	return outbox.Get(kind, key, func() (e outbox.Entry, found bool, err error) {
		err = s.db.read(ctx, func(ctx context.Context, tx query.TxActor) error {
			e, found, err = s.get(ctx, tx, kind, key)
			return err
		})
		return e, found, err
	})
}

// ClaimDue selects through outbox_due and writes in one transaction: of
// two sweepers that select the same rows, the second to commit runs again
// and finds them held. A run after its own commit whose answer was lost
// keeps its claims still as written (outbox.Same) and selects the rest.
func (s *Outbox) ClaimDue(ctx context.Context, kind outbox.Kind, now time.Time, lease time.Duration, limit int) ([]outbox.Entry, error) {
	if err := outbox.ValidateClaim(kind, now, lease, limit); err != nil {
		return nil, fmt.Errorf("claim due %s: %w", kind, err)
	}
	now = truncMs(now)
	var claimed, wrote []outbox.Entry
	err := s.db.update(ctx, func(ctx context.Context, tx query.TxActor) error {
		if !earlierCommit(ctx) {
			wrote = nil // an earlier run did not commit: its claims are no one's
		}
		var err error
		if claimed, err = outbox.Kept(wrote, func(key string) (outbox.Entry, bool, error) { return s.get(ctx, tx, kind, key) }); err != nil {
			return err
		}
		if want := limit - len(claimed); want > 0 {
			var next []outbox.Entry
			err := s.db.rows(ctx, tx, selectDueEntries, dueEntriesParams(kind, now, want), func(row query.Row) error {
				cur, err := scanEntry(row)
				if err == nil {
					cur, err = outbox.ApplyClaim(cur, now, lease)
					next = append(next, cur)
				}
				return err
			})
			if err == nil && len(next) > 0 {
				err = s.db.exec(ctx, tx, upsertEntries, entriesParams(next...))
			}
			if err != nil {
				return err
			}
			claimed = append(claimed, next...)
		}
		wrote = claimed
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("claim due %s: %w", kind, err)
	}
	return claimed, nil
}

func (s *Outbox) InState(ctx context.Context, kind outbox.Kind, state outbox.State, since time.Time, limit int) ([]outbox.Entry, error) {
	return statusRead(ctx, s.db, fmt.Sprintf("%s in %s", kind, state), selectEntriesInState, limit, inStateParams(kind, state, since, limit), scanEntry)
}
