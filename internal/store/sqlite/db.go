// Package sqlite is the embedded store: the service's state in one SQLite
// file (modernc.org/sqlite, pure Go), for the local stack and the tests.
//
// Writes run in BEGIN IMMEDIATE transactions, one writer at a time, so a
// read, the domain's check and a write are a conditional update. WAL keeps
// readers from waiting; a busy timeout lets a second process wait its turn.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"transcriber/internal/clock"
	"transcriber/internal/errs"
	"transcriber/internal/store"
)

// BusyTimeout is how long a write waits for another connection's before
// failing as unavailable.
const BusyTimeout = 10 * time.Second

// timeLayout is the one form of time: fixed width, so text order is time
// order; queries compare times as text, so they write this layout too.
const timeLayout = "2006-01-02T15:04:05.000Z"

type DB struct {
	sql   *sql.DB
	clock clock.Clock
	// writer queues this process's writers: one that finds SQLite's lock
	// taken sleeps tens of milliseconds in the busy handler
	// (BenchmarkClaims).
	writer sync.Mutex
	// lose (LoseAnswers, tests) runs a committed transaction again, as
	// YDB's SDK runs one whose answer was lost: the model by which the
	// tests hold every write safe to run twice.
	lose func() bool
}

// Open opens or creates the file at path and migrates its schema.
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

// OpenSet opens path as Open does and returns its stores (store.NewSet).
func OpenSet(ctx context.Context, path string, clk clock.Clock) (store.Set, error) {
	db, err := Open(ctx, path, clk)
	if err != nil {
		return store.Set{}, err
	}
	return store.NewSet(store.Set{Jobs: NewJobStore(db), Tokens: NewTokenStore(db), Bot: NewBotState(db), Counters: NewCounters(db),
		Outbox: NewOutbox(db), Agenda: NewAgenda(db)}, db.Close), nil
}

func (db *DB) Close() error { return db.sql.Close() }

func (db *DB) now() time.Time { return db.clock.Now().UTC().Truncate(time.Millisecond) }

// tx runs fn in a write transaction; fn may run more than once (lose) and
// resets its results first.
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

// txResult runs fn in db.tx and returns its last run's result.
func txResult[T any](ctx context.Context, db *DB, fn func(*sql.Tx) (T, error)) (T, error) {
	var out T
	err := db.tx(ctx, func(tx *sql.Tx) error {
		var err error
		out, err = fn(tx)
		return err
	})
	if err != nil {
		var zero T
		return zero, err
	}
	return out, nil
}

// exec runs a statement that returns no rows, its error translated.
func exec(ctx context.Context, tx *sql.Tx, query string, args ...any) error {
	_, err := tx.ExecContext(ctx, query, args...)
	return translate(err)
}

// execCount runs a statement and returns how many rows it changed.
func execCount(ctx context.Context, tx *sql.Tx, query string, args ...any) (int, error) {
	res, err := tx.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, translate(err)
	}
	n, err := res.RowsAffected()
	return int(n), translate(err)
}

var errUnavailable = "the job store is unavailable"

// translate: busy, locked, I/O, full disk and a closed database are
// Unavailable (they may pass); anything else is a bug.
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

// scanRow scans row; none when there is no row.
func scanRow[T any](row *sql.Row, scan func(scanner) (T, error), none error) (T, error) {
	v, err := scan(row)
	if errors.Is(err, sql.ErrNoRows) {
		var zero T
		return zero, none
	}
	return v, translate(err)
}

// marks is n "?" placeholders.
func marks(n int) string { return strings.TrimSuffix(strings.Repeat("?, ", n), ", ") }

func formatTime(t time.Time) string { return t.UTC().Format(timeLayout) }

func nullTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return formatTime(t)
}

// orZero scans a column that may be NULL into p, NULL as the zero value.
func orZero[T any](p *T) sql.Scanner { return nullScanner[T]{p} }

type nullScanner[T any] struct{ p *T }

func (n nullScanner[T]) Scan(v any) error {
	var x sql.Null[T]
	err := x.Scan(v)
	*n.p = x.V
	return err
}

// timeText scans a time kept as text into p, NULL as the zero time.
func timeText(p *time.Time) sql.Scanner { return timeScanner{p} }

type timeScanner struct{ p *time.Time }

func (t timeScanner) Scan(v any) (err error) {
	var s sql.NullString
	if err := s.Scan(v); err != nil || !s.Valid {
		*t.p = time.Time{}
		return err
	}
	if *t.p, err = time.Parse(timeLayout, s.String); err != nil {
		return fmt.Errorf("stored time %q: %w", s.String, err)
	}
	return nil
}

// earliest scans row's one time, a MIN: found is false for NULL.
func earliest(row *sql.Row) (t time.Time, found bool, err error) {
	err = translate(row.Scan(timeText(&t)))
	return t, err == nil && !t.IsZero(), err
}
