package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"transcriber/internal/quota"
)

// Counters keeps usage counters in the counters table: one row per key and
// window, its times in the store's one layout (milliseconds, UTC).
type Counters struct{ db *DB }

var (
	_ quota.Counters = (*Counters)(nil)
	_ quota.Expirer  = (*Counters)(nil)
)

// NewCounters returns the usage counters of db.
func NewCounters(db *DB) *Counters { return &Counters{db: db} }

const (
	selectCounter = `SELECT used FROM counters WHERE counter = ? AND window_start = ?`
	upsertCounter = `INSERT INTO counters (counter, window_start, used, expires_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (counter, window_start) DO UPDATE SET used = excluded.used`
	updateCounter  = `UPDATE counters SET used = ? WHERE counter = ? AND window_start = ?`
	deleteCounters = `DELETE FROM counters WHERE expires_at <= ?`
)

// Reserve reads the counter, checks, and writes it in one write
// transaction: the write lock is taken at BEGIN, so no other reservation
// reads the total between this one's read and write.
func (c *Counters) Reserve(ctx context.Context, key string, window time.Time, amount, limit int64) (int64, bool, error) {
	if err := quota.Check(key, amount); err != nil {
		return 0, false, err
	}
	var (
		used int64
		ok   bool
	)
	err := c.db.tx(ctx, func(tx *sql.Tx) error {
		cur, err := readCounter(ctx, tx, key, window)
		if err != nil {
			return err
		}
		if !quota.Fits(cur, amount, limit) {
			used, ok = cur, false
			return nil
		}
		used, ok = cur+amount, true
		_, err = tx.ExecContext(ctx, upsertCounter, key, formatTime(window), used, formatTime(quota.ExpiresAt(window)))
		return translate(err)
	})
	if err != nil {
		return 0, false, fmt.Errorf("reserve usage counter %q: %w", key, err)
	}
	return used, ok, nil
}

// Release subtracts amount, never below 0, in one write transaction.
func (c *Counters) Release(ctx context.Context, key string, window time.Time, amount int64) error {
	if err := quota.Check(key, amount); err != nil {
		return err
	}
	err := c.db.tx(ctx, func(tx *sql.Tx) error {
		cur, err := readCounter(ctx, tx, key, window)
		if err != nil || cur == 0 {
			return err
		}
		_, err = tx.ExecContext(ctx, updateCounter, quota.Less(cur, amount), key, formatTime(window))
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
	n, err := readCounter(ctx, c.db.sql, key, window)
	if err != nil {
		return 0, fmt.Errorf("read usage counter %q: %w", key, err)
	}
	return n, nil
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

// readCounter reads a counter; 0 when it does not exist.
func readCounter(ctx context.Context, q queryer, key string, window time.Time) (int64, error) {
	var n int64
	err := q.QueryRowContext(ctx, selectCounter, key, formatTime(window)).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return n, translate(err)
}
