package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"transcriber/internal/outbox"
	"transcriber/internal/status"
)

// Outbox keeps the outbox table; every read-check-write is one write
// transaction (DB.tx).
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

// outboxColumns in the order scanEntry reads and entryValues writes them.
const outboxColumns = `kind, key, job_id, payload, state, sent_id, attempts, next_at, lease_until, first_at, last_at,
	last_status, last_error, created_at, updated_at`

const (
	selectEntry = `SELECT ` + outboxColumns + ` FROM outbox`
	// upsertEntry writes a row read in the same write transaction.
	upsertEntry = `INSERT OR REPLACE INTO outbox (` + outboxColumns + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	selectDue   = selectEntry + ` WHERE kind = ? AND state = ? AND next_at <= ? AND lease_until <= ?
		ORDER BY next_at, key LIMIT ?`
	selectInState = selectEntry + ` WHERE kind = ? AND state = ? AND next_at >= ? ORDER BY next_at, key LIMIT ?`
)

func scanEntry(r scanner) (e outbox.Entry, err error) {
	err = r.Scan(&e.Kind, &e.Key, &e.JobID, &e.Payload, &e.State, &e.SentID, &e.Attempts, timeText(&e.NextAt), timeText(&e.LeaseUntil),
		timeText(&e.FirstAt), timeText(&e.LastAt), &e.LastStatus, &e.LastError, timeText(&e.CreatedAt), timeText(&e.UpdatedAt))
	return e, err
}

func entryValues(e outbox.Entry) []any {
	return []any{string(e.Kind), e.Key, e.JobID, e.Payload, string(e.State), e.SentID, e.Attempts, formatTime(e.NextAt),
		formatTime(e.LeaseUntil), nullTime(e.FirstAt), nullTime(e.LastAt), e.LastStatus, e.LastError,
		formatTime(e.CreatedAt), formatTime(e.UpdatedAt)}
}

func getEntry(ctx context.Context, q queryer, kind outbox.Kind, key string) (outbox.Entry, bool, error) {
	e, err := scanEntry(q.QueryRowContext(ctx, selectEntry+` WHERE kind = ? AND key = ?`, string(kind), key))
	if errors.Is(err, sql.ErrNoRows) {
		return outbox.Entry{}, false, nil
	}
	if err != nil {
		return outbox.Entry{}, false, translate(err)
	}
	return e, true, nil
}

func (s *Outbox) change(ctx context.Context, kind outbox.Kind, key string,
	apply func(cur outbox.Entry, found bool) (outbox.Entry, bool, error),
) (e outbox.Entry, wrote bool, err error) {
	var mine *outbox.Entry // what an earlier run wrote, committed (DB.lose)
	err = s.db.tx(ctx, func(tx *sql.Tx) error {
		cur, found, err := getEntry(ctx, tx, kind, key)
		if err != nil {
			return err
		}
		if found && mine != nil && outbox.Same(cur, *mine) {
			e, wrote = cur, true
			return nil
		}
		if e, wrote, err = apply(cur, found); err != nil || !wrote {
			return err
		}
		w := e
		mine = &w
		return exec(ctx, tx, upsertEntry, entryValues(e)...)
	})
	return e, wrote, err
}

func (s *Outbox) Get(ctx context.Context, kind outbox.Kind, key string) (outbox.Entry, error) {
	return outbox.Get(kind, key, func() (outbox.Entry, bool, error) { return getEntry(ctx, s.db.sql, kind, key) })
}

// ClaimDue selects through outbox_due; a run after its own commit whose
// answer was lost (DB.lose) keeps its claims still as written and selects
// only the rest.
func (s *Outbox) ClaimDue(ctx context.Context, kind outbox.Kind, now time.Time, lease time.Duration, limit int) ([]outbox.Entry, error) {
	if err := outbox.ValidateClaim(kind, now, lease, limit); err != nil {
		return nil, fmt.Errorf("claim due %s: %w", kind, err)
	}
	var claimed, wrote []outbox.Entry
	err := s.db.tx(ctx, func(tx *sql.Tx) error {
		var err error
		claimed, err = outbox.Kept(wrote, func(key string) (outbox.Entry, bool, error) { return getEntry(ctx, tx, kind, key) })
		if err != nil || len(claimed) == limit {
			return err
		}
		at := formatTime(now)
		due, err := queryAll(ctx, tx, selectDue, []any{string(kind), string(outbox.Pending), at, at, limit - len(claimed)}, scanEntry)
		if err != nil {
			return err
		}
		for _, cur := range due {
			e, err := outbox.ApplyClaim(cur, now, lease)
			if err != nil {
				return err
			}
			if err := exec(ctx, tx, upsertEntry, entryValues(e)...); err != nil {
				return err
			}
			claimed = append(claimed, e)
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
	return statusRead(ctx, s.db, fmt.Sprintf("%s in %s", kind, state), selectInState, since, limit, scanEntry, string(kind), string(state))
}

// Expire stands in for YDB's TTL for Telegram entries: a scan, as the store
// serves one machine. A callback goes with its job (the schema's trigger).
func (s *Outbox) Expire(ctx context.Context, before time.Time, limit int) (int, error) {
	n, err := txResult(ctx, s.db, func(tx *sql.Tx) (int, error) {
		return execCount(ctx, tx, `DELETE FROM outbox WHERE rowid IN
			(SELECT rowid FROM outbox WHERE kind <> 'callback' AND updated_at < ? LIMIT ?)`, formatTime(before), limit)
	})
	if err != nil {
		return 0, fmt.Errorf("expire outbox: %w", err)
	}
	return n, nil
}
