package ydb

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"sync/atomic"
	"time"

	"github.com/ydb-platform/ydb-go-sdk/v3/meta"
	"github.com/ydb-platform/ydb-go-sdk/v3/sugar"
	"google.golang.org/grpc/metadata"

	"transcriber/internal/clock"
	"transcriber/internal/ident"
	"transcriber/internal/store"
)

// Units meters ctx: read sums the request units YDB reported for the calls
// made under it, in the x-ydb-consumed-units trailer of each response
// (https://ydb.tech/docs/en/reference/ydb-sdk/grpc-headers), and tells
// whether any response carried one. A database that bills no units (a
// dedicated one, a local YDB) may send none [U].
func Units(ctx context.Context) (metered context.Context, read func() (float64, bool)) {
	m := &unitMeter{}
	return meta.WithTrailerCallback(ctx, m.add), m.read
}

type unitMeter struct {
	units    atomic.Uint64
	reported atomic.Bool
}

func (m *unitMeter) add(md metadata.MD) {
	if len(md.Get(consumedUnitsHeader)) > 0 {
		m.units.Add(meta.ConsumedUnits(md))
		m.reported.Store(true)
	}
}

func (m *unitMeter) read() (float64, bool) { return float64(m.units.Load()), m.reported.Load() }

const consumedUnitsHeader = "x-ydb-consumed-units"

// OpenScratch opens the database at dsn with its tables in a new directory
// (scratch/<id>), migrated; remove drops the directory and closes the set.
// The schema costs one migration's operations of the database's daily
// quota (docs/database.md, "Schema operations").
func OpenScratch(ctx context.Context, dsn string, clk clock.Clock, out io.Writer) (s store.Set, remove func(context.Context) error, err error) {
	dir := path.Join("scratch", ident.New())
	openCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	db, err := Open(openCtx, dsn, clk, WithDirectory(dir))
	if err != nil {
		return store.Set{}, nil, err
	}
	remove = func(ctx context.Context) error {
		rmErr := sugar.RemoveRecursive(ctx, db.driver, dir)
		if err := db.Close(ctx); rmErr == nil {
			rmErr = err
		}
		if rmErr != nil {
			return fmt.Errorf("remove %s: %w", dir, translate(rmErr))
		}
		return nil
	}
	if _, err := Migrate(ctx, db, MigrateOptions{Retention: 24 * time.Hour, Out: out}); err != nil {
		return store.Set{}, nil, errors.Join(err, remove(ctx))
	}
	return newSet(db), remove, nil
}

// newSet is db's stores, with its counters spread (store.NewSet); the
// set's Close closes the driver.
func newSet(db *DB) store.Set {
	return store.NewSet(store.Set{Jobs: NewJobStore(db), Tokens: NewTokenStore(db), Bot: NewBotState(db), Counters: NewCounters(db),
		Outbox: NewOutbox(db), Agenda: NewAgenda(db)}, func() error { return db.Close(context.Background()) })
}
