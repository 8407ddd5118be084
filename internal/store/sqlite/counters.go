package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"transcriber/internal/ident"
	"transcriber/internal/quota"
)

// Counters keeps usage counters, one row per key and window.
type Counters struct{ db *DB }

var (
	_ quota.Counters    = (*Counters)(nil)
	_ quota.Expirer     = (*Counters)(nil)
	_ quota.MultiReader = (*Counters)(nil)
)

func NewCounters(db *DB) *Counters { return &Counters{db: db} }

const (
	selectCounter = `SELECT used, ops FROM counters WHERE counter = ? AND window_start = ?`
	upsertCounter = `INSERT INTO counters (counter, window_start, used, expires_at, ops) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (counter, window_start) DO UPDATE SET used = excluded.used, ops = excluded.ops`
	// selectCountersOf is ended by UsedMany with the list of keys.
	selectCountersOf = `SELECT counter, used FROM counters WHERE window_start = ? AND counter IN `
	updateCounter    = `UPDATE counters SET used = ?, ops = ? WHERE counter = ? AND window_start = ?`
	deleteCounters   = `DELETE FROM counters WHERE expires_at <= ?`
)

// Reserve reads, checks and writes under the write lock taken at BEGIN;
// its change's id (quota.ReserveOnce) makes a run again count once.
func (c *Counters) Reserve(ctx context.Context, key string, window time.Time, amount, limit int64) (int64, bool, error) {
	if err := quota.Check(key, amount); err != nil {
		return 0, false, err
	}
	op := ident.New()
	var ok bool
	used, err := txResult(ctx, c.db, func(tx *sql.Tx) (int64, error) {
		cur, _, err := readCounter(ctx, tx, key, window)
		if err != nil {
			return 0, err
		}
		next, n, fits, write := quota.ReserveOnce(cur, op, amount, limit)
		if ok = fits; write {
			err = exec(ctx, tx, upsertCounter, key, formatTime(window), next.Used, formatTime(quota.ExpiresAt(key, window)), quota.EncodeOps(next.Ops))
		}
		return n, err
	})
	if err != nil {
		return 0, false, fmt.Errorf("reserve usage counter %q: %w", key, err)
	}
	return used, ok, nil
}

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
		if next, write := quota.ReleaseOnce(cur, found, op, amount); write {
			return exec(ctx, tx, updateCounter, next.Used, quota.EncodeOps(next.Ops), key, formatTime(window))
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("release usage counter %q: %w", key, err)
	}
	return nil
}

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

// UsedMany reads keys of one window in one statement.
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
	q := selectCountersOf + "(" + marks(len(keys)) + ")"
	_, err := queryAll(ctx, c.db.sql, q, args, func(r scanner) (struct{}, error) {
		var (
			k string
			n int64
		)
		err := r.Scan(&k, &n)
		out[k] = n
		return struct{}{}, err
	})
	if err != nil {
		return nil, fmt.Errorf("read usage counters: %w", err)
	}
	return out, nil
}

// ExpireCounters deletes through counters_expiry.
func (c *Counters) ExpireCounters(ctx context.Context, now time.Time) (int, error) {
	n, err := txResult(ctx, c.db, func(tx *sql.Tx) (int, error) { return execCount(ctx, tx, deleteCounters, formatTime(now)) })
	if err != nil {
		return 0, fmt.Errorf("expire usage counters: %w", err)
	}
	return n, nil
}

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
