package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"transcriber/internal/ident"
	"transcriber/internal/quota"
)

// Counters keeps usage counters in the counters table: one row per key and
// window, its times in the store's one layout (milliseconds, UTC).
type Counters struct{ db *DB }

var (
	_ quota.Counters    = (*Counters)(nil)
	_ quota.Expirer     = (*Counters)(nil)
	_ quota.MultiReader = (*Counters)(nil)
)

// NewCounters returns the usage counters of db.
func NewCounters(db *DB) *Counters { return &Counters{db: db} }

const (
	selectCounter = `SELECT used, ops FROM counters WHERE counter = ? AND window_start = ?`
	upsertCounter = `INSERT INTO counters (counter, window_start, used, expires_at, ops) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (counter, window_start) DO UPDATE SET used = excluded.used, ops = excluded.ops`
	// selectCountersOf reads several counters of one window; UsedMany
	// ends it with the list of keys.
	selectCountersOf = `SELECT counter, used FROM counters WHERE window_start = ? AND counter IN `
	updateCounter    = `UPDATE counters SET used = ?, ops = ? WHERE counter = ? AND window_start = ?`
	deleteCounters   = `DELETE FROM counters WHERE expires_at <= ?`
)

// Reserve reads the counter, checks, and writes it in one write
// transaction: the write lock is taken at BEGIN, so no other reservation
// reads the total between this one's read and write. The change has an id
// of its own (quota.ReserveOnce), so a transaction run again counts once.
func (c *Counters) Reserve(ctx context.Context, key string, window time.Time, amount, limit int64) (int64, bool, error) {
	if err := quota.Check(key, amount); err != nil {
		return 0, false, err
	}
	op := ident.New()
	var (
		used int64
		ok   bool
	)
	err := c.db.tx(ctx, func(tx *sql.Tx) error {
		cur, _, err := readCounter(ctx, tx, key, window)
		if err != nil {
			return err
		}
		next, n, fits, write := quota.ReserveOnce(cur, op, amount, limit)
		used, ok = n, fits
		if !write {
			return nil
		}
		_, err = tx.ExecContext(ctx, upsertCounter, key, formatTime(window), next.Used, formatTime(quota.ExpiresAt(key, window)), quota.EncodeOps(next.Ops))
		return translate(err)
	})
	if err != nil {
		return 0, false, fmt.Errorf("reserve usage counter %q: %w", key, err)
	}
	return used, ok, nil
}

// Release subtracts amount, never below 0, in one write transaction, once
// (quota.ReleaseOnce).
func (c *Counters) Release(ctx context.Context, key string, window time.Time, amount int64) error {
	if err := quota.Check(key, amount); err != nil {
		return err
	}
	op := ident.New()
	err := c.db.tx(ctx, func(tx *sql.Tx) error {
		cur, found, err := readCounter(ctx, tx, key, window)
		if err != nil {
			return err
		}
		next, write := quota.ReleaseOnce(cur, found, op, amount)
		if !write {
			return nil
		}
		_, err = tx.ExecContext(ctx, updateCounter, next.Used, quota.EncodeOps(next.Ops), key, formatTime(window))
		return translate(err)
	})
	if err != nil {
		return fmt.Errorf("release usage counter %q: %w", key, err)
	}
	return nil
}

// Used reads the counter.
func (c *Counters) Used(ctx context.Context, key string, window time.Time) (int64, error) {
	if err := quota.CheckKey(key); err != nil {
		return 0, err
	}
	r, _, err := readCounter(ctx, c.db.sql, key, window)
	if err != nil {
		return 0, fmt.Errorf("read usage counter %q: %w", key, err)
	}
	return r.Used, nil
}

// UsedMany reads the counters of keys in window in one statement.
func (c *Counters) UsedMany(ctx context.Context, keys []string, window time.Time) (map[string]int64, error) {
	if err := quota.CheckKeys(keys); err != nil {
		return nil, err
	}
	args := make([]any, 0, len(keys)+1)
	args = append(args, formatTime(window))
	out := make(map[string]int64, len(keys))
	for _, k := range keys {
		args = append(args, k)
		out[k] = 0
	}
	q := selectCountersOf + "(?" + strings.Repeat(", ?", len(keys)-1) + ")"
	rows, err := c.db.sql.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("read usage counters: %w", translate(err))
	}
	defer func() { _ = rows.Close() }()
	for rows.Next() {
		var (
			k string
			n int64
		)
		if err := rows.Scan(&k, &n); err != nil {
			return nil, fmt.Errorf("read usage counters: %w", translate(err))
		}
		out[k] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read usage counters: %w", translate(err))
	}
	return out, nil
}

// ExpireCounters deletes the counters expired at now, through
// counters_expiry.
func (c *Counters) ExpireCounters(ctx context.Context, now time.Time) (int, error) {
	var n int64
	err := c.db.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, deleteCounters, formatTime(now))
		if err != nil {
			return translate(err)
		}
		n, err = res.RowsAffected()
		return translate(err)
	})
	if err != nil {
		return 0, fmt.Errorf("expire usage counters: %w", err)
	}
	return int(n), nil
}

// readCounter reads a counter; found is false, and the row zero, when it
// does not exist.
func readCounter(ctx context.Context, q queryer, key string, window time.Time) (r quota.Row, found bool, err error) {
	var ops string
	err = q.QueryRowContext(ctx, selectCounter, key, formatTime(window)).Scan(&r.Used, &ops)
	if errors.Is(err, sql.ErrNoRows) {
		return quota.Row{}, false, nil
	}
	if err != nil {
		return quota.Row{}, false, translate(err)
	}
	r.Ops = quota.DecodeOps(ops)
	return r, true, nil
}
