// Package ydb is the cloud store: the service's state in serverless YDB,
// through ydb-go-sdk's Query service.
//
// Every read-check-write is one serializable DoTx: the store reads, the
// domain decides (job.ApplyClaim, …), the store writes. YDB's locks are
// optimistic: a commit whose read rows changed fails ABORTED and the SDK
// runs the closure again, so a claim is a conditional update. Closures
// touch only the database and their own results, reset on every run. Every
// write is idempotent: run again after a commit whose answer was lost, it
// recognizes what its earlier run wrote (writeOptions).
//
// Statements are constants in *statements.go, the schema in schema.go,
// errors are read in translate; docs/database.md describes the tables.
package ydb

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
	"time"

	"github.com/ydb-platform/ydb-go-genproto/protos/Ydb"
	environ "github.com/ydb-platform/ydb-go-sdk-auth-environ"
	ydbsdk "github.com/ydb-platform/ydb-go-sdk/v3"
	"github.com/ydb-platform/ydb-go-sdk/v3/config"
	"github.com/ydb-platform/ydb-go-sdk/v3/query"
	yc "github.com/ydb-platform/ydb-go-yc"

	"transcriber/internal/clock"
	"transcriber/internal/store"
)

// Credentials says where the driver gets its credentials.
type Credentials int

const (
	// EnvironCredentials reads ydb-go-sdk-auth-environ's YDB_* variables;
	// none set is anonymous, as a local YDB wants.
	EnvironCredentials Credentials = iota
	// MetadataCredentials asks the metadata service for the function's
	// service account token (ydb-go-yc).
	MetadataCredentials
)

// DefaultCallTimeout bounds a store call whose context has no deadline:
// DoTx retries for as long as its context lives.
const DefaultCallTimeout = 30 * time.Second

// Option configures Open.
type Option func(*options)

type options struct {
	creds Credentials
	dir   string
}

// WithCredentials chooses the credentials (default EnvironCredentials).
func WithCredentials(c Credentials) Option { return func(o *options) { o.creds = c } }

// WithDirectory puts the tables in dir inside the database (the tests give
// each store a fresh one).
func WithDirectory(dir string) Option { return func(o *options) { o.dir = strings.Trim(dir, "/") } }

// txRunner runs transactions: the driver's query client, or a test's.
type txRunner interface {
	DoTx(ctx context.Context, op query.TxOperation, opts ...query.DoTxOption) error
}

// DB is an open driver and the place of the tables; open one per process
// and share it (the driver pools sessions and reconnects).
type DB struct {
	driver *ydbsdk.Driver
	txs    txRunner // driver.Query()
	clock  clock.Clock
	dir    string // relative to the database root; "" for the root
	prefix string // PRAGMA line naming dir's absolute path; "" for the root
}

// Open connects to dsn (grpcs://ydb.serverless.yandexcloud.net:2135/?database=…,
// grpc://localhost:2136/local). ctx bounds the connection only: the driver
// outlives the call that opened it.
func Open(ctx context.Context, dsn string, clk clock.Clock, opts ...Option) (*DB, error) {
	o := options{creds: EnvironCredentials}
	for _, opt := range opts {
		opt(&o)
	}
	if dsn == "" {
		return nil, fmt.Errorf("open YDB: %w", errNoDSN)
	}
	sdkOpts := []ydbsdk.Option{
		yc.WithInternalCA(), // Yandex Cloud's CA, for grpcs:// endpoints
		ydbsdk.WithApplicationName("transcriber"),
		// The scheme client tries once: Migrate paces schema operations and
		// waits out a quota refusal itself (schema_ops.go).
		ydbsdk.With(config.WithNoAutoRetry()),
	}
	switch o.creds {
	case MetadataCredentials:
		sdkOpts = append(sdkOpts, yc.WithMetadataCredentials())
	default:
		sdkOpts = append(sdkOpts, environ.WithEnvironCredentials())
	}
	drv, err := ydbsdk.Open(ctx, dsn, sdkOpts...)
	if err != nil {
		return nil, fmt.Errorf("open YDB: %w", translate(err))
	}
	db := &DB{driver: drv, txs: drv.Query(), clock: clk, dir: o.dir}
	if o.dir != "" {
		// https://ydb.tech/docs/en/yql/reference/syntax/pragma#table-path-prefix
		db.prefix = fmt.Sprintf("PRAGMA TablePathPrefix(%q);\n", path.Join(drv.Name(), o.dir))
	}
	return db, nil
}

// Close closes the driver; every later call fails as unavailable.
func (db *DB) Close(ctx context.Context) error { return translate(db.driver.Close(ctx)) }

// OpenSet opens dsn as Open does and returns its stores (store.NewSet);
// the set's Close closes the driver.
func OpenSet(ctx context.Context, dsn string, clk clock.Clock, opts ...Option) (store.Set, error) {
	db, err := Open(ctx, dsn, clk, opts...)
	if err != nil {
		return store.Set{}, err
	}
	return newSet(db), nil
}

// now is the clock at the store's precision, milliseconds, as SQLite keeps.
func (db *DB) now() time.Time { return db.clock.Now().UTC().Truncate(time.Millisecond) }

func (db *DB) text(stmt string) string { return db.prefix + stmt }

// bound gives ctx a deadline d away unless it has one.
func bound(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, d)
}

// writeOptions mark every write idempotent, so the SDK also retries an
// error that leaves its commit unknown ("conditionally retryable", ydb-go-sdk
// v3.127.0 retry/mode.go), e.g. a connection that died while the instance
// slept: every write recognizes what a lost-answer commit of its own wrote.
// A lazy transaction begins with its first statement, one round trip less
// (query.WithLazyTx, experimental in v3.127.0).
func writeOptions() []query.DoTxOption {
	return []query.DoTxOption{query.WithIdempotent(), query.WithLazyTx(true)}
}

// update runs fn in a serializable read-write transaction, retried by the
// SDK. fn resets its results first and, after an earlier run's commit may
// have landed (earlierCommit), recognizes what that run wrote. The commit
// is made here, inside the retried operation, so the call knows how each
// run's commit ended and a conflict found only at the commit reads as a
// statement's.
func (db *DB) update(ctx context.Context, fn func(ctx context.Context, tx query.TxActor) error) error {
	ctx, cancel := bound(ctx, DefaultCallTimeout)
	defer cancel()
	unsure := false // an earlier run's commit may have committed
	return translate(db.txs.DoTx(ctx, func(ctx context.Context, tx query.TxActor) error {
		if err := fn(context.WithValue(ctx, earlierCommitKey{}, unsure), tx); err != nil {
			return err
		}
		err := commit(ctx, tx)
		unsure = unsure || (err != nil && commitUnknown(err))
		// YDB may defer writes to the commit and find a taken key only
		// there: run again, the INSERT's read of its key finds the row.
		return retryKeyConflict(err)
	}, writeOptions()...))
}

type earlierCommitKey struct{}

// earlierCommit reports whether an earlier run's commit got no answer that
// says it failed. Only then may a write take a row like its own for its
// own: after a sure failure (locks broken), such a row is another's.
func earlierCommit(ctx context.Context) bool {
	unsure, _ := ctx.Value(earlierCommitKey{}).(bool)
	return unsure
}

type committer interface {
	CommitTx(ctx context.Context) error
}

// commit commits tx; the SDK's own commit after the closure then does
// nothing (internal/query/transaction.go).
func commit(ctx context.Context, tx query.TxActor) error {
	c, ok := tx.(committer)
	if !ok {
		return nil
	}
	return c.CommitTx(ctx)
}

// commitUnknown reports whether a failed commit may have landed: no answer
// from YDB, or UNDETERMINED, TIMEOUT, CANCELLED, SESSION_EXPIRED. Any other
// status says it did not
// (https://ydb.tech/docs/en/reference/ydb-sdk/ydb-status-codes).
func commitUnknown(err error) bool {
	return !ydbsdk.IsOperationError(err) ||
		ydbsdk.IsOperationError(err, Ydb.StatusIds_UNDETERMINED, Ydb.StatusIds_TIMEOUT, Ydb.StatusIds_CANCELLED,
			Ydb.StatusIds_SESSION_EXPIRED)
}

// read runs fn in a snapshot read-only transaction: one view, no locks,
// safe to retry.
func (db *DB) read(ctx context.Context, fn func(ctx context.Context, tx query.TxActor) error) error {
	ctx, cancel := bound(ctx, DefaultCallTimeout)
	defer cancel()
	return translate(db.txs.DoTx(ctx, fn,
		query.WithTxSettings(query.TxSettings(query.WithSnapshotReadOnly())),
		query.WithIdempotent(), query.WithLazyTx(true)))
}

func (db *DB) exec(ctx context.Context, tx query.TxActor, stmt string, p params) error {
	qp, err := p.build()
	if err != nil {
		return err
	}
	return tx.Exec(ctx, db.text(stmt), query.WithParameters(qp))
}

// rows calls each for every row of stmt's result.
func (db *DB) rows(ctx context.Context, tx query.TxActor, stmt string, p params, each func(query.Row) error) error {
	qp, err := p.build()
	if err != nil {
		return err
	}
	rs, err := tx.QueryResultSet(ctx, db.text(stmt), query.WithParameters(qp))
	if err != nil {
		return err
	}
	defer func() { _ = rs.Close(ctx) }()
	for {
		row, err := rs.NextRow(ctx)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := each(row); err != nil {
			return err
		}
	}
}

// inTx runs fn in run (db.read or db.update) and returns the result of its
// last run.
func inTx[T any](ctx context.Context, run func(context.Context, func(context.Context, query.TxActor) error) error,
	fn func(context.Context, query.TxActor) (T, error)) (T, error) {
	var out T
	err := run(ctx, func(ctx context.Context, tx query.TxActor) error {
		var err error
		out, err = fn(ctx, tx)
		return err
	})
	if err != nil {
		var zero T
		return zero, err
	}
	return out, nil
}

// scanAll scans every row of stmt's result.
func scanAll[T any](ctx context.Context, db *DB, tx query.TxActor, stmt string, p params, scan func(query.Row) (T, error)) ([]T, error) {
	var out []T
	err := db.rows(ctx, tx, stmt, p, func(row query.Row) error {
		v, err := scan(row)
		out = append(out, v)
		return err
	})
	return out, err
}

// scanOne is the last row of stmt's result (there is at most one), and whether there is one.
func scanOne[T any](ctx context.Context, db *DB, tx query.TxActor, stmt string, p params, scan func(query.Row) (T, error)) (T, bool, error) {
	all, err := scanAll(ctx, db, tx, stmt, p, scan)
	if err != nil || len(all) == 0 {
		var zero T
		return zero, false, err
	}
	return all[len(all)-1], true, nil
}

// readAll scans every row of one statement in a snapshot.
func readAll[T any](ctx context.Context, db *DB, stmt string, p params, scan func(query.Row) (T, error)) ([]T, error) {
	return inTx(ctx, db.read, func(ctx context.Context, tx query.TxActor) ([]T, error) {
		return scanAll(ctx, db, tx, stmt, p, scan)
	})
}
