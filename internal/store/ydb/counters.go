package ydb

import (
	"context"
	"fmt"
	"time"

	"github.com/ydb-platform/ydb-go-sdk/v3/query"
	"github.com/ydb-platform/ydb-go-sdk/v3/table/types"

	"transcriber/internal/ident"
	"transcriber/internal/quota"
)

// Counters keeps usage counters in the counters table. Each change is a
// serializable transaction that reads the row, checks, and upserts it: a
// concurrent change of the same row invalidates its locks, the commit
// fails with ABORTED, and the SDK runs the closure again on the new total.
// A change has an id of its own, kept in the row's ops
// (quota.ReserveOnce), so a transaction run again after its commit (the
// answer lost) counts once. Rows expire by the table's TTL
// (quota.Retention after their window), so the store has no
// quota.Expirer.
type Counters struct{ db *DB }

var (
	_ quota.Counters    = (*Counters)(nil)
	_ quota.MultiReader = (*Counters)(nil)
)

// NewCounters returns the usage counters of db.
func NewCounters(db *DB) *Counters { return &Counters{db: db} }

// Reserve adds amount if the total stays within limit.
func (c *Counters) Reserve(ctx context.Context, key string, window time.Time, amount, limit int64) (int64, bool, error) {
	if err := quota.Check(key, amount); err != nil {
		return 0, false, err
	}
	op := ident.New()
	var (
		used int64
		ok   bool
	)
	err := c.db.update(ctx, func(ctx context.Context, tx query.TxActor) error {
		used, ok = 0, false
		cur, _, err := c.read(ctx, tx, key, window)
		if err != nil {
			return err
		}
		next, n, fits, write := quota.ReserveOnce(cur, op, amount, limit)
		if write {
			if err := c.db.exec(ctx, tx, upsertCounter, counterParams(key, window, next)); err != nil {
				return err
			}
		}
		used, ok = n, fits
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
	op := ident.New()
	err := c.db.update(ctx, func(ctx context.Context, tx query.TxActor) error {
		cur, found, err := c.read(ctx, tx, key, window)
		if err != nil {
			return err
		}
		next, write := quota.ReleaseOnce(cur, found, op, amount)
		if !write {
			return nil
		}
		return c.db.exec(ctx, tx, upsertCounter, counterParams(key, window, next))
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
		r, _, err := c.read(ctx, tx, key, window)
		n = r.Used
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("read usage counter %q: %w", key, err)
	}
	return n, nil
}

// UsedMany reads the counters of keys in window in a snapshot, in one
// statement (selectCounters): what a spread counter's total needs
// (quota.Spread), one statement where Used would take one a row.
func (c *Counters) UsedMany(ctx context.Context, keys []string, window time.Time) (map[string]int64, error) {
	if err := quota.CheckKeys(keys); err != nil {
		return nil, err
	}
	out := make(map[string]int64, len(keys))
	err := c.db.read(ctx, func(ctx context.Context, tx query.TxActor) error {
		for _, k := range keys {
			out[k] = 0
		}
		return c.db.rows(ctx, tx, selectCounters, countersKeysParams(keys, window), func(row query.Row) error {
			var (
				k string
				n int64
			)
			if err := row.ScanNamed(query.Named("counter", &k), query.Named("used", &n)); err != nil {
				return fmt.Errorf("read counter row: %w", err)
			}
			out[k] = n
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("read usage counters: %w", err)
	}
	return out, nil
}

// read reads a counter inside tx; found is false, and the row zero, when
// it does not exist.
func (c *Counters) read(ctx context.Context, tx query.TxActor, key string, window time.Time) (r quota.Row, found bool, err error) {
	err = c.db.rows(ctx, tx, selectCounter, counterKeyParams(key, window), func(row query.Row) error {
		var ops *string
		if err := row.ScanNamed(query.Named("used", &r.Used), query.Named("ops", &ops)); err != nil {
			return fmt.Errorf("read counter row: %w", err)
		}
		if ops != nil {
			r.Ops = quota.DecodeOps(*ops)
		}
		found = true
		return nil
	})
	return r, found, err
}

// counterKeyParams are the parameters of selectCounter. A window is kept
// in UTC at millisecond precision (truncMs), as the embedded store keeps
// it, so both name the same counter for the same time.Time.
func counterKeyParams(key string, window time.Time) params {
	return params{{"$counter", utf8(key)}, {"$window_start", ts(truncMs(window))}}
}

// countersKeysParams are the parameters of selectCounters: each key once,
// and the window as counterKeyParams keeps it.
func countersKeysParams(keys []string, window time.Time) params {
	vs := make([]types.Value, 0, len(keys))
	seen := make(map[string]bool, len(keys))
	for _, k := range keys {
		if !seen[k] {
			seen[k] = true
			vs = append(vs, utf8(k))
		}
	}
	return params{{"$counters", list(vs)}, {"$window_start", ts(truncMs(window))}}
}

// counterParams are the parameters of upsertCounter: the row as it is to
// be, expiring when quota.ExpiresAt says.
func counterParams(key string, window time.Time, r quota.Row) params {
	w := truncMs(window)
	return append(counterKeyParams(key, w), param{"$used", i64(r.Used)}, param{"$expires_at", ts(quota.ExpiresAt(key, w))},
		param{"$ops", utf8(quota.EncodeOps(r.Ops))})
}
