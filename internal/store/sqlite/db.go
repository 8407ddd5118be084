// Package sqlite is the embedded store: job state in one SQLite file, for
// the local stack and the tests. It uses modernc.org/sqlite, a pure-Go
// SQLite, so no CGO is needed.
//
// Writes run in BEGIN IMMEDIATE transactions: SQLite then admits one writer
// at a time, so a read, a check by the job domain and a write inside one
// transaction are a conditional update no concurrent writer can slip
// between. The database is in WAL mode so readers do not wait for the writer,
// and a busy timeout lets a second process (an admin command beside the
// local stack) wait its turn instead of failing.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"transcriber/internal/clock"
	"transcriber/internal/errs"
	"transcriber/internal/store"
)

// BusyTimeout is how long a write waits for another connection's write
// transaction before it fails as unavailable.
const BusyTimeout = 10 * time.Second

// timeLayout is the one form of time in this store: RFC 3339, UTC, fixed
// width with milliseconds, so text order is time order. Times are compared
// as text, so every query writes its times with this layout too.
const timeLayout = "2006-01-02T15:04:05.000Z"

// DB is an open database file with the schema applied.
type DB struct {
	sql   *sql.DB
	clock clock.Clock
	// writer lets one write transaction of this process at a time ask
	// SQLite for the write lock. SQLite would serialize them anyway, but a
	// writer that finds the lock taken sleeps in the busy handler for up to
	// tens of milliseconds, so many claimers in one process would spend
	// their time asleep (see BenchmarkClaims). Other processes still wait
	// on the busy timeout.
	writer sync.Mutex
	// lose, when set, is asked after each commit whether its answer is
	// lost (LoseAnswers, in the tests): the transaction then runs again,
	// as YDB's SDK runs an idempotent transaction whose commit's answer
	// it did not get. SQLite itself never loses one; this is the store's
	// model of the cloud store's retry, for the tests that every write
	// is safe to run twice.
	lose func() bool
}

// Open opens (creating if needed) the database file at path and brings its
// schema up to date. Time is read from clk.
func Open(ctx context.Context, path string, clk clock.Clock) (*DB, error) {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", BusyTimeout.Milliseconds()))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Set("_txlock", "immediate")
	dsn := "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()

	sqldb, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open job store: %w", translate(err))
	}
	db := &DB{sql: sqldb, clock: clk}
	if err := db.migrate(ctx); err != nil {
		_ = sqldb.Close()
		return nil, fmt.Errorf("open job store %s: %w", path, err)
	}
	return db, nil
}

// OpenSet opens the database file at path as Open does and returns its
// stores, with its counters spread (store.NewSet); the set's Close closes
// the file.
func OpenSet(ctx context.Context, path string, clk clock.Clock) (store.Set, error) {
	db, err := Open(ctx, path, clk)
	if err != nil {
		return store.Set{}, err
	}
	return store.NewSet(store.Set{Jobs: NewJobStore(db), Tokens: NewTokenStore(db), Bot: NewBotState(db), Counters: NewCounters(db),
		Outbox: NewOutbox(db), Agenda: NewAgenda(db)}, db.Close), nil
}

// Close closes the database.
func (db *DB) Close() error { return db.sql.Close() }

// now is the store's reading of the clock, at the precision it keeps.
func (db *DB) now() time.Time { return db.clock.Now().UTC().Truncate(time.Millisecond) }

// tx runs fn in a write transaction and commits it if fn returns nil.
// fn may run more than once (see lose): it resets its results first.
func (db *DB) tx(ctx context.Context, fn func(*sql.Tx) error) error {
	db.writer.Lock()
	defer db.writer.Unlock()
	if err := db.txOnce(ctx, fn); err != nil {
		return err
	}
	if db.lose != nil && db.lose() {
		return db.txOnce(ctx, fn)
	}
	return nil
}

// txOnce runs fn in one write transaction.
func (db *DB) txOnce(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := db.sql.BeginTx(ctx, nil)
	if err != nil {
		return translate(err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return translate(tx.Commit())
}

var errUnavailable = "the job store is unavailable"

// translate turns a driver error into the service's vocabulary. Busy,
// locked, I/O and full-disk failures and a closed database may pass;
// anything else is a bug.
func translate(err error) error {
	if err == nil {
		return nil
	}
	var classified *errs.Error
	if errors.As(err, &classified) {
		return err
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff { // the primary code; extended codes add bits above
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_IOERR,
			sqlite3.SQLITE_FULL, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_READONLY:
			return errs.Wrap(err, errs.Unavailable, "store_unavailable", errUnavailable)
		}
		return errs.Wrap(err, errs.Internal, "store_failed", "")
	}
	if errors.Is(err, sql.ErrConnDone) || err.Error() == "sql: database is closed" {
		return errs.Wrap(err, errs.Unavailable, "store_unavailable", errUnavailable)
	}
	return errs.Wrap(err, errs.Internal, "store_failed", "")
}

func formatTime(t time.Time) string { return t.UTC().Format(timeLayout) }

func nullTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return formatTime(t)
}

func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(timeLayout, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("stored time %q: %w", s, err)
	}
	return t, nil
}

func parseNullTime(s sql.NullString) (time.Time, error) {
	if !s.Valid {
		return time.Time{}, nil
	}
	return parseTime(s.String)
}
