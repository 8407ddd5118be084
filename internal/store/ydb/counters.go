package ydb

import (
	"context"
	"fmt"
	"time"

	"github.com/ydb-platform/ydb-go-sdk/v3/query"
	"github.com/ydb-platform/ydb-go-sdk/v3/table/types"

	"transcriber/internal/ident"
	"transcriber/internal/job"
	"transcriber/internal/quota"
)

// Counters keeps usage counters: each change reads, checks and upserts the
// row in one transaction (a concurrent change aborts it and the SDK runs it
// on the new total) and records its id in ops, so a run again counts once.
// Rows expire by the table's TTL: no quota.Expirer.
type Counters struct{ db *DB }

var (
	_ quota.Counters    = (*Counters)(nil)
	_ quota.MultiReader = (*Counters)(nil)
)

func NewCounters(db *DB) *Counters { return &Counters{db: db} }

func (c *Counters) Reserve(ctx context.Context, key string, window time.Time, amount, limit int64) (int64, bool, error) {
	if err := quota.Check(key, amount); err != nil {
		return 0, false, err
	}
	op := ident.New()
	var ok bool
	used, err := inTx(ctx, c.db.update, func(ctx context.Context, tx query.TxActor) (int64, error) {
		cur, _, err := c.read(ctx, tx, key, window)
		if err != nil {
			return 0, err
		}
		next, n, fits, write := quota.ReserveOnce(cur, op, amount, limit)
		if write {
			err = c.db.exec(ctx, tx, upsertCounter, counterParams(key, window, next))
		}
		ok = fits
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

func (c *Counters) Used(ctx context.Context, key string, window time.Time) (int64, error) {
	if err := quota.CheckKey(key); err != nil {
		return 0, err
	}
	n, err := inTx(ctx, c.db.read, func(ctx context.Context, tx query.TxActor) (int64, error) {
		r, _, err := c.read(ctx, tx, key, window)
		return r.Used, err
	})
	if err != nil {
		return 0, fmt.Errorf("read usage counter %q: %w", key, err)
	}
	return n, nil
}

// UsedMany reads keys of one window in one statement (quota.Spread's total).
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

func (c *Counters) read(ctx context.Context, tx query.TxActor, key string, window time.Time) (quota.Row, bool, error) {
	return scanOne(ctx, c.db, tx, selectCounter, counterKeyParams(key, window), func(row query.Row) (r quota.Row, err error) {
		var ops *string
		if err := row.ScanNamed(query.Named("used", &r.Used), query.Named("ops", &ops)); err != nil {
			return r, fmt.Errorf("read counter row: %w", err)
		}
		if ops != nil {
			r.Ops = quota.DecodeOps(*ops)
		}
		return r, nil
	})
}

// counterKeyParams keeps the window at milliseconds, as SQLite does, so
// both stores name the same counter for one time.Time.
func counterKeyParams(key string, window time.Time) params {
	return params{{"$counter", utf8(key)}, {"$window_start", ts(job.Ms(window))}}
}

// countersKeysParams names each key once.
func countersKeysParams(keys []string, window time.Time) params {
	vs := make([]types.Value, 0, len(keys))
	seen := make(map[string]bool, len(keys))
	for _, k := range keys {
		if !seen[k] {
			seen[k] = true
			vs = append(vs, utf8(k))
		}
	}
	return params{{"$counters", list(vs)}, {"$window_start", ts(job.Ms(window))}}
}

func counterParams(key string, window time.Time, r quota.Row) params {
	w := job.Ms(window)
	return append(counterKeyParams(key, w), param{"$used", i64(r.Used)}, param{"$expires_at", ts(quota.ExpiresAt(key, w))},
		param{"$ops", utf8(quota.EncodeOps(r.Ops))})
}
