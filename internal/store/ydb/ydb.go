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
// they reset on every run. Every write is marked idempotent, and so may
// also run again after its commit when the commit's answer was lost: each
// recognizes what an earlier run of its call wrote (see writeOptions).
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

// txRunner runs transactions: the driver's query client, or a test's.
type txRunner interface {
	DoTx(ctx context.Context, op query.TxOperation, opts ...query.DoTxOption) error
}

// DB is an open YDB driver and the place of the store's tables. Open one
// per process (per function instance) and share it: the driver keeps a
// session pool and reconnects by itself.
type DB struct {
	driver      *ydbsdk.Driver
	txs         txRunner // driver.Query()
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
	db := &DB{driver: drv, txs: drv.Query(), clock: clk, dir: o.dir, callTimeout: o.callTimeout}
	if o.dir != "" {
		// https://ydb.tech/docs/en/yql/reference/syntax/pragma#table-path-prefix
		db.prefix = fmt.Sprintf("PRAGMA TablePathPrefix(%q);\n", path.Join(drv.Name(), o.dir))
	}
	return db, nil
}

// Close closes the driver; every later call fails as unavailable.
func (db *DB) Close(ctx context.Context) error { return translate(db.driver.Close(ctx)) }

// OpenSet opens the database at dsn as Open does and returns its stores,
// with its counters spread (store.NewSet); the set's Close closes the
// driver.
func OpenSet(ctx context.Context, dsn string, clk clock.Clock, opts ...Option) (store.Set, error) {
	db, err := Open(ctx, dsn, clk, opts...)
	if err != nil {
		return store.Set{}, err
	}
	return store.NewSet(store.Set{Jobs: NewJobStore(db), Tokens: NewTokenStore(db), Bot: NewBotState(db), Counters: NewCounters(db),
		Outbox: NewOutbox(db), Agenda: NewAgenda(db)}, func() error { return db.Close(context.Background()) }), nil
}

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

// writeOptions are the options of every writing transaction: marked
// idempotent, so the SDK runs it again after an error that leaves its
// commit's fate unknown (a transport error, SESSION_EXPIRED, UNDETERMINED:
// "conditionally retryable", which ydb-go-sdk v3.127.0 retries only for
// an idempotent operation, retry/mode.go). Without it the first write on
// a connection that died while the instance slept fails rather than
// running again on a fresh one. Every write is safe to run twice: after
// a commit whose answer was lost it recognizes what that commit wrote
// (job.Change's rules, job.Claimed, outbox.Same,
// quota.ReserveOnce, and each insert finding its own row). The
// transaction begins lazily (lazyTx).
func writeOptions() []query.DoTxOption {
	return []query.DoTxOption{query.WithIdempotent(), lazyTx()}
}

// lazyTx begins a transaction with its first statement rather than by a
// BeginTransaction call of its own: one round trip less for every
// transaction, a run again included. ydb-go-sdk v3.127.0's query.WithLazyTx
// (marked experimental there): the first statement carries the begin in
// its transaction control, and its answer the transaction's id
// (internal/query/transaction.go). A transaction that ran no statement
// commits as nothing; one rolled back before its first statement (a
// parameter refused by build) closes its session, as the SDK does.
func lazyTx() query.DoTxOption { return query.WithLazyTx(true) }

// update runs fn in a serializable read-write transaction, retried by the
// SDK when its locks are invalidated and, the write being idempotent
// (writeOptions), after a transport error. fn must touch nothing outside
// the database but its own results, reset them first, and, on a run after
// an earlier run's commit may have committed (earlierCommit), recognize
// what that run wrote.
//
// The commit is made here, inside the operation the SDK retries, rather
// than by the SDK after it: so this call knows how each run's commit
// ended, and tells the next run (earlierCommit), and a conflict YDB finds
// only at the commit is read as one found at a statement.
func (db *DB) update(ctx context.Context, fn func(ctx context.Context, tx query.TxActor) error) error {
	ctx, cancel := db.bound(ctx)
	defer cancel()
	unsure := false // an earlier run's commit may have committed
	return translate(db.txs.DoTx(ctx, func(ctx context.Context, tx query.TxActor) error {
		if err := fn(context.WithValue(ctx, earlierCommitKey{}, unsure), tx); err != nil {
			return err
		}
		err := commit(ctx, tx)
		unsure = unsure || (err != nil && commitUnknown(err))
		// YDB may find a conflict only at the commit: a key an INSERT
		// took, or (ABORTED) locks another transaction broke, since it
		// may defer a statement's writes to the commit. The commit's error
		// is read as a statement's: a key taken runs the transaction again
		// (retryKeyConflict), and its first read finds the row (every
		// INSERT reads its key first); ABORTED the SDK runs again itself;
		// what comes out is read by translate.
		return retryKeyConflict(err)
	}, writeOptions()...))
}

// earlierCommitKey marks the context of a run of update's fn after an
// earlier run's commit whose outcome is unknown.
type earlierCommitKey struct{}

// earlierCommit reports whether an earlier run of this call's transaction
// sent its commit and got no answer that says it failed: it may have
// committed, and what it wrote is this call's. A write recognizes its own
// write only then: after a run whose commit failed for sure (its locks
// broken by another writer), a row like the one it meant to write is
// another's.
func earlierCommit(ctx context.Context) bool {
	unsure, _ := ctx.Value(earlierCommitKey{}).(bool)
	return unsure
}

// committer is a transaction the closure can commit itself: the SDK's.
type committer interface {
	CommitTx(ctx context.Context) error
}

// commit commits tx. The SDK's own commit after the closure then does
// nothing (the transaction is completed, internal/query/transaction.go).
// A transaction that is no committer (none in the SDK) is left to the SDK.
func commit(ctx context.Context, tx query.TxActor) error {
	c, ok := tx.(committer)
	if !ok {
		return nil
	}
	return c.CommitTx(ctx)
}

// commitUnknown reports whether a commit that failed with err may have
// committed all the same: YDB did not answer (a transport error, or
// anything but its answer), or answered that the outcome is unknown
// (UNDETERMINED, TIMEOUT, CANCELLED) or that the session carrying it is
// gone (SESSION_EXPIRED). Any other answer is YDB's word that the
// transaction did not commit: ABORTED (its locks broken), PRECONDITION_FAILED
// (a key taken), OVERLOADED, UNAVAILABLE, BAD_SESSION, …
// https://ydb.tech/docs/en/reference/ydb-sdk/ydb-status-codes
func commitUnknown(err error) bool {
	return !ydbsdk.IsOperationError(err) ||
		ydbsdk.IsOperationError(err, Ydb.StatusIds_UNDETERMINED, Ydb.StatusIds_TIMEOUT, Ydb.StatusIds_CANCELLED,
			Ydb.StatusIds_SESSION_EXPIRED)
}

// read runs fn in a snapshot read-only transaction, begun lazily
// (lazyTx): one consistent view for its reads, no locks, and safe to
// retry whatever failed.
func (db *DB) read(ctx context.Context, fn func(ctx context.Context, tx query.TxActor) error) error {
	ctx, cancel := db.bound(ctx)
	defer cancel()
	return translate(db.txs.DoTx(ctx, fn,
		query.WithTxSettings(query.TxSettings(query.WithSnapshotReadOnly())),
		query.WithIdempotent(), lazyTx()))
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
