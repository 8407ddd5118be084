package ydb

import (
	"context"
	"os"
	"path"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/ydb-platform/ydb-go-sdk/v3/sugar"

	"transcriber/internal/apitoken"
	"transcriber/internal/apitoken/apitokentest"
	"transcriber/internal/botstate"
	"transcriber/internal/botstate/botstatetest"
	"transcriber/internal/clock"
	"transcriber/internal/clock/clocktest"
	"transcriber/internal/errs"
	"transcriber/internal/ident"
	"transcriber/internal/job"
	"transcriber/internal/job/jobstoretest"
	"transcriber/internal/outbox"
	"transcriber/internal/outbox/outboxtest"
	"transcriber/internal/status/statustest"
)

// The contract suites run against a real YDB when YDB_CONNECTION_STRING
// names one (credentials from the YDB_* variables of
// ydb-go-sdk-auth-environ; none means anonymous, as local-ydb wants). Each
// store gets its tables in a fresh directory of the database, removed
// afterwards, so every opener gives an empty store.

const noYDB = "skipped: no YDB (set YDB_CONNECTION_STRING, e.g. grpc://localhost:2136/local with `make test-ydb`)"

var admin struct {
	once sync.Once
	db   *DB
	err  error
}

// requireYDB skips the test, once for all its subtests, without a YDB.
func requireYDB(t *testing.T) {
	t.Helper()
	if os.Getenv("YDB_CONNECTION_STRING") == "" {
		t.Skip(noYDB)
	}
}

// testDB opens a store whose tables live in a fresh directory, migrated.
func testDB(t *testing.T, clk clock.Clock) *DB {
	t.Helper()
	dsn := os.Getenv("YDB_CONNECTION_STRING")
	if dsn == "" {
		t.Skip(noYDB)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	admin.once.Do(func() { admin.db, admin.err = Open(ctx, dsn, clock.System()) })
	require.NoError(t, admin.err, "open YDB at %s", dsn)

	dir := path.Join("transcriber_test", ident.New())
	db, err := Open(ctx, dsn, clk, WithDirectory(dir))
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = db.Close(ctx)
		// The admin driver removes the directory: the test may have closed
		// the store's.
		require.NoError(t, sugar.RemoveRecursive(ctx, admin.db.driver, dir))
	})
	_, err = Migrate(ctx, db, MigrateOptions{Retention: 90 * 24 * time.Hour})
	require.NoError(t, err)
	return db
}

func TestJobStoreContract(t *testing.T) {
	requireYDB(t)
	jobstoretest.Run(t, func(t *testing.T, clk clock.Clock) (job.Store, func()) {
		db := testDB(t, clk)
		return NewJobStore(db), func() { require.NoError(t, db.Close(context.Background())) }
	})
}

func TestBotStateContract(t *testing.T) {
	requireYDB(t)
	botstatetest.Run(t, func(t *testing.T) (botstate.Store, outbox.Store) {
		db := testDB(t, clocktest.NewFake(botstatetest.Base))
		return NewBotState(db), NewOutbox(db)
	})
}

func TestOutboxContract(t *testing.T) {
	requireYDB(t)
	outboxtest.Run(t, func(t *testing.T) outbox.Store {
		return NewOutbox(testDB(t, clocktest.NewFake(outboxtest.Base)))
	})
}

func TestStatusContract(t *testing.T) {
	requireYDB(t)
	statustest.Run(t, func(t *testing.T, clk clock.Clock) statustest.Stores {
		db := testDB(t, clk)
		return statustest.Stores{Jobs: NewJobStore(db), Outbox: NewOutbox(db)}
	})
}

func TestTokenStoreContract(t *testing.T) {
	requireYDB(t)
	apitokentest.Run(t, func(t *testing.T) apitoken.Store {
		return NewTokenStore(testDB(t, clocktest.NewFake(apitokentest.Start)))
	})
}

func TestMigrate(t *testing.T) {
	requireYDB(t)
	ctx := context.Background()
	db := testDB(t, clock.System())

	t.Run("a second run applies nothing", func(t *testing.T) {
		applied, err := Migrate(ctx, db, MigrateOptions{Retention: 90 * 24 * time.Hour})
		require.NoError(t, err)
		require.Empty(t, applied)
		have, ttl, err := ydbSchema{db: db}.recorded(ctx)
		require.NoError(t, err)
		require.Len(t, have, SchemaVersion())
		want := ttlRecord(90 * 24 * time.Hour)
		require.Equal(t, want, ttl)
	})
	t.Run("the plan of a second run only lists the tables", func(t *testing.T) {
		ops, err := Plan(ctx, db, MigrateOptions{Retention: 90 * 24 * time.Hour})
		require.NoError(t, err)
		require.Equal(t, []string{"list the tables"}, ops)
	})
	t.Run("a step recorded as applied is refused", func(t *testing.T) {
		err := ydbSchema{db: db}.record(ctx, 1, "")
		require.ErrorIs(t, err, ErrStepApplied)
	})
}

// A closed driver is a store that is down: unavailable, and Authenticate
// says so rather than turning the caller away.
func TestTokenStoreDownIsUnavailable(t *testing.T) {
	requireYDB(t)
	ctx := context.Background()
	db := testDB(t, clocktest.NewFake(apitokentest.Start))
	st := NewTokenStore(db)
	tok, secret, err := apitoken.New("ci", apitokentest.Start)
	require.NoError(t, err)
	require.NoError(t, st.Create(ctx, tok))
	require.NoError(t, db.Close(ctx))

	_, err = st.ByHash(ctx, tok.Hash)
	require.Equal(t, errs.Unavailable, errs.KindOf(err), "%v", err)
	_, err = apitoken.Authenticate(ctx, st, secret)
	require.Equal(t, errs.Unavailable, errs.KindOf(err))
	require.NotErrorIs(t, err, apitoken.ErrUnauthorized)
}
