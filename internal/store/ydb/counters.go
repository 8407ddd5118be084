package ydb

import (
	"context"
	"fmt"
	"time"

	"github.com/ydb-platform/ydb-go-sdk/v3/query"

	"transcriber/internal/quota"
)

// Counters keeps usage counters in the counters table. Each change is a
// serializable transaction that reads the row, checks, and upserts it: a
// concurrent change of the same row invalidates its locks, the commit
// fails with ABORTED, and the SDK runs the closure again on the new total.
// Rows expire by the table's TTL (quota.Retention after their window), so
// the store has no quota.Expirer.
type Counters struct{ db *DB }

var _ quota.Counters = (*Counters)(nil)

// NewCounters returns the usage counters of db.
func NewCounters(db *DB) *Counters { return &Counters{db: db} }

// Reserve adds amount if the total stays within limit.
func (c *Counters) Reserve(ctx context.Context, key string, window time.Time, amount, limit int64) (int64, bool, error) {
	if err := quota.Check(key, amount); err != nil {
		return 0, false, err
	}
	var (
		used int64
		ok   bool
	)
	err := c.db.update(ctx, func(ctx context.Context, tx query.TxActor) error {
		used, ok = 0, false
		cur, err := c.read(ctx, tx, key, window)
		if err != nil {
			return err
		}
		if !quota.Fits(cur, amount, limit) {
			used = cur
			return nil
		}
		if err := c.db.exec(ctx, tx, upsertCounter, counterParams(key, window, cur+amount)); err != nil {
			return err
		}
		used, ok = cur+amount, true
		return nil
	})
	if err != nil {
		return 0, false, fmt.Errorf("reserve usage counter %q: %w", key, err)
	}
	return used, ok, nil
}

// Release subtracts amount, never below 0; a counter that does not exist
// stays absent.
func (c *Counters) Release(ctx context.Context, key string, window time.Time, amount int64) error {
	if err := quota.Check(key, amount); err != nil {
		return err
	}
	err := c.db.update(ctx, func(ctx context.Context, tx query.TxActor) error {
		cur, err := c.read(ctx, tx, key, window)
		if err != nil || cur == 0 {
			return err
		}
		return c.db.exec(ctx, tx, upsertCounter, counterParams(key, window, quota.Less(cur, amount)))
	})
	if err != nil {
		return fmt.Errorf("release usage counter %q: %w", key, err)
	}
	return nil
}

// Used reads the counter in a snapshot.
func (c *Counters) Used(ctx context.Context, key string, window time.Time) (int64, error) {
	if err := quota.CheckKey(key); err != nil {
		return 0, err
	}
	var n int64
	err := c.db.read(ctx, func(ctx context.Context, tx query.TxActor) error {
		var err error
		n, err = c.read(ctx, tx, key, window)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("read usage counter %q: %w", key, err)
	}
	return n, nil
}

// read reads a counter inside tx; 0 when it does not exist.
func (c *Counters) read(ctx context.Context, tx query.TxActor, key string, window time.Time) (int64, error) {
	var n int64
	err := c.db.rows(ctx, tx, selectCounter, counterKeyParams(key, window), func(row query.Row) error {
		if err := row.ScanNamed(query.Named("used", &n)); err != nil {
			return fmt.Errorf("read counter row: %w", err)
		}
		return nil
	})
	return n, err
}

// counterKeyParams are the parameters of selectCounter. A window is kept
// in UTC at millisecond precision (truncMs), as the embedded store keeps
// it, so both name the same counter for the same time.Time.
func counterKeyParams(key string, window time.Time) params {
	return params{{"$counter", utf8(key)}, {"$window_start", ts(truncMs(window))}}
}

// counterParams are the parameters of upsertCounter: the row as it is to
// be, expiring quota.Retention after its window.
func counterParams(key string, window time.Time, used int64) params {
	w := truncMs(window)
	return append(counterKeyParams(key, w), param{"$used", i64(used)}, param{"$expires_at", ts(quota.ExpiresAt(w))})
}
