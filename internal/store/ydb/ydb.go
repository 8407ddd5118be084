// Package ydb is the cloud store: job state and API tokens in serverless
// YDB, through ydb-go-sdk's Query service.
//
// Every read-check-write runs inside one db.Query().DoTx: a serializable
// read-write transaction in which the store reads the rows, the job domain
// decides (job.ApplyClaim, ApplySave, ApplyRelease, ApplyDelete), and the
// store writes. YDB's locks are optimistic: when another transaction
// committed a change to a row this one read, the commit fails with ABORTED
// ("Transaction locks invalidated") and the SDK runs the closure again, so
// a claim is a conditional update without UPDATE … RETURNING. The closures
// touch nothing but the database and their own result variables, which
// they reset on every run.
//
// The statements are constants in statements.go, the schema steps in
// schema.go (applied by Migrate, from `transcriber migrate`), and errors are
// read in one place, translate. docs/database.md describes the tables.
package ydb

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
	"time"

	environ "github.com/ydb-platform/ydb-go-sdk-auth-environ"
	ydbsdk "github.com/ydb-platform/ydb-go-sdk/v3"
	"github.com/ydb-platform/ydb-go-sdk/v3/config"
	"github.com/ydb-platform/ydb-go-sdk/v3/query"
	yc "github.com/ydb-platform/ydb-go-yc"

	"transcriber/internal/clock"
)

// Credentials says where the driver gets its credentials.
type Credentials int

const (
	// EnvironCredentials reads them from the YDB_* environment variables
	// of ydb-go-sdk-auth-environ (YDB_ACCESS_TOKEN_CREDENTIALS,
	// YDB_SERVICE_ACCOUNT_KEY_FILE_CREDENTIALS, YDB_METADATA_CREDENTIALS,
	// YDB_ANONYMOUS_CREDENTIALS, …); none set means anonymous, as a local
	// YDB wants. For the command line, the tests and a local YDB.
	EnvironCredentials Credentials = iota
	// MetadataCredentials asks the metadata service for the IAM token of
	// the function's service account (ydb-go-yc). For Cloud Functions.
	MetadataCredentials
)

// DefaultCallTimeout bounds a store call whose context has no deadline:
// DoTx retries retryable errors for as long as its context lives.
const DefaultCallTimeout = 30 * time.Second

// Option configures Open.
type Option func(*options)

type options struct {
	creds       Credentials
	dir         string
	callTimeout time.Duration
}

// WithCredentials chooses where credentials come from (default
// EnvironCredentials). The caller decides from its configuration: this
// package reads no environment of its own.
func WithCredentials(c Credentials) Option { return func(o *options) { o.creds = c } }

// WithDirectory puts the store's tables in dir, a directory inside the
// database (made by Migrate), instead of the database's root: the tests
// give each store a fresh one.
func WithDirectory(dir string) Option { return func(o *options) { o.dir = strings.Trim(dir, "/") } }

// WithCallTimeout changes DefaultCallTimeout.
func WithCallTimeout(d time.Duration) Option { return func(o *options) { o.callTimeout = d } }

// DB is an open YDB driver and the place of the store's tables. Open one
// per process (per function instance) and share it: the driver keeps a
// session pool and reconnects by itself.
type DB struct {
	driver      *ydbsdk.Driver
	clock       clock.Clock
	dir         string // relative to the database root; "" for the root
	prefix      string // PRAGMA line naming dir's absolute path; "" for the root
	callTimeout time.Duration
}

// Open connects to the database named by dsn (for example
// grpcs://ydb.serverless.yandexcloud.net:2135/?database=/ru-central1/…/…,
// or grpc://localhost:2136/local). Time is read from clk. ctx bounds the
// connection only: give it a timeout, and not a request's context, since
// the driver outlives the call that opened it.
func Open(ctx context.Context, dsn string, clk clock.Clock, opts ...Option) (*DB, error) {
	o := options{creds: EnvironCredentials, callTimeout: DefaultCallTimeout}
	for _, opt := range opts {
		opt(&o)
	}
	if dsn == "" {
		return nil, fmt.Errorf("open YDB: %w", errNoDSN)
	}
	sdkOpts := []ydbsdk.Option{
		// Yandex Cloud's CA, so grpcs:// endpoints of serverless YDB verify
		// from a function and from a workstation alike.
		yc.WithInternalCA(),
		ydbsdk.WithApplicationName("transcriber"),
		// The scheme client (listing a directory) tries a call once: the
		// one caller, Migrate, paces its schema operations and waits out a
		// refusal for the quota itself (schema_ops.go), which the SDK
		// would retry at once. The table and query clients retry as
		// before.
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
	db := &DB{driver: drv, clock: clk, dir: o.dir, callTimeout: o.callTimeout}
	if o.dir != "" {
		// https://ydb.tech/docs/en/yql/reference/syntax/pragma#table-path-prefix
		db.prefix = fmt.Sprintf("PRAGMA TablePathPrefix(%q);\n", path.Join(drv.Name(), o.dir))
	}
	return db, nil
}

// Close closes the driver; every later call fails as unavailable.
func (db *DB) Close(ctx context.Context) error { return translate(db.driver.Close(ctx)) }

// now is the store's reading of the clock, at the precision it keeps:
// milliseconds, like the embedded store, which Timestamp holds exactly.
func (db *DB) now() time.Time { return db.clock.Now().UTC().Truncate(time.Millisecond) }

// text is a statement as sent: with the table path prefix when the tables
// live in a directory.
func (db *DB) text(stmt string) string { return db.prefix + stmt }

// bound returns ctx with the call timeout when it has no deadline.
func (db *DB) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok || db.callTimeout <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, db.callTimeout)
}

// update runs fn in a serializable read-write transaction, retried by the
// SDK when its locks are invalidated. fn must touch nothing outside the
// database but its own results, and reset them first.
func (db *DB) update(ctx context.Context, fn func(ctx context.Context, tx query.TxActor) error) error {
	ctx, cancel := db.bound(ctx)
	defer cancel()
	return translate(db.driver.Query().DoTx(ctx, fn))
}

// read runs fn in a snapshot read-only transaction: one consistent view
// for its reads, no locks, and safe to retry whatever failed.
func (db *DB) read(ctx context.Context, fn func(ctx context.Context, tx query.TxActor) error) error {
	ctx, cancel := db.bound(ctx)
	defer cancel()
	return translate(db.driver.Query().DoTx(ctx, fn,
		query.WithTxSettings(query.TxSettings(query.WithSnapshotReadOnly())),
		query.WithIdempotent()))
}

// exec runs a statement that returns no rows inside tx.
func (db *DB) exec(ctx context.Context, tx query.TxActor, stmt string, p params) error {
	qp, err := p.build()
	if err != nil {
		return err
	}
	return tx.Exec(ctx, db.text(stmt), query.WithParameters(qp))
}

// rows runs a statement inside tx and calls each for every row of its
// result.
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
