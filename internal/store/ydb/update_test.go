package ydb

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/ydb-platform/ydb-go-genproto/protos/Ydb"
	"github.com/ydb-platform/ydb-go-sdk/v3/query"
	"github.com/ydb-platform/ydb-go-sdk/v3/retry"

	"transcriber/internal/clock/clocktest"
	"transcriber/internal/errs"
)

// scriptedTx is a transaction whose commit fails with the error the
// script gives it; its statements are never run (the closures of these
// tests run none).
type scriptedTx struct {
	query.TxActor
	commitErr error
	committed *int
	completed bool
}

func (tx *scriptedTx) ID() string { return "tx" }

// CommitTx commits once: a completed transaction's commit does nothing,
// as the SDK's.
func (tx *scriptedTx) CommitTx(context.Context) error {
	if tx.completed {
		return nil
	}
	tx.completed = true
	if tx.commitErr == nil {
		*tx.committed++
	}
	return tx.commitErr
}

// sdkRunner runs a transaction as the SDK's DoTx does (internal/query's
// doTx: begin, the operation, commit, all inside retry.Retry with the
// call's retry options), on scriptedTx: run n's commit fails with
// commits[n] (nil: it commits), the runs after them with rest. The retry decisions are the SDK's own
// (retry.Retry, retry.Check); only the backoff is made instant.
type sdkRunner struct {
	commits   []error
	rest      error // the commit's error on the runs after commits
	runs      int
	committed int
}

type noBackoff struct{}

func (noBackoff) Delay(int) time.Duration { return 0 }

// retryOptions are the retry options among a call's DoTx options:
// query.WithIdempotent() is a list of them.
func retryOptions(opts []query.DoTxOption) []retry.Option {
	var out []retry.Option
	for _, o := range opts {
		v := reflect.ValueOf(o)
		if v.Kind() != reflect.Slice {
			continue
		}
		for i := 0; i < v.Len(); i++ {
			if ro, ok := v.Index(i).Interface().(retry.Option); ok {
				out = append(out, ro)
			}
		}
	}
	return out
}

func (r *sdkRunner) DoTx(ctx context.Context, op query.TxOperation, opts ...query.DoTxOption) error {
	ropts := append(retryOptions(opts), retry.WithFastBackoff(noBackoff{}), retry.WithSlowBackoff(noBackoff{}))
	return retry.Retry(ctx, func(ctx context.Context) error {
		commitErr := r.rest
		if r.runs < len(r.commits) {
			commitErr = r.commits[r.runs]
		}
		r.runs++
		tx := &scriptedTx{commitErr: commitErr, committed: &r.committed}
		if err := op(ctx, tx); err != nil {
			return err
		}
		return tx.CommitTx(ctx) // the SDK's own commit: nothing to do once the closure committed
	}, ropts...)
}

// runUpdate runs db.update on a transaction whose commits fail as
// scripted, and returns what each run of the closure was told of the
// earlier runs (earlierCommit), and update's error.
func runUpdate(t *testing.T, commits ...error) (*sdkRunner, []bool, error) {
	t.Helper()
	r := &sdkRunner{commits: commits}
	db := &DB{txs: r, clock: clocktest.NewFake(time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC))}
	var told []bool
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := db.update(ctx, func(ctx context.Context, _ query.TxActor) error {
		told = append(told, earlierCommit(ctx))
		return nil
	})
	return r, told, err
}

// The first write after an instance slept meets a connection that died:
// marked idempotent, the write whose commit's outcome is unknown runs
// again, and that run is told an earlier commit may have landed, so it
// recognizes what it wrote. A commit YDB refused (ABORTED: its locks
// broken) runs again too, told nothing: the row it finds is another's.
func TestUpdateRunsAgainAndSaysWhetherAnEarlierCommitMayHaveLanded(t *testing.T) {
	undetermined := operationError(t, Ydb.StatusIds_UNDETERMINED)
	expired := operationError(t, Ydb.StatusIds_SESSION_EXPIRED)
	aborted := operationError(t, Ydb.StatusIds_ABORTED)

	r, told, err := runUpdate(t, undetermined, nil)
	require.NoError(t, err, "run again, not failed")
	require.Equal(t, 2, r.runs)
	require.Equal(t, []bool{false, true}, told)
	require.Equal(t, 1, r.committed)

	_, told, err = runUpdate(t, expired, nil)
	require.NoError(t, err)
	require.Equal(t, []bool{false, true}, told, "a session lost with the commit in it")

	_, told, err = runUpdate(t, aborted, nil)
	require.NoError(t, err)
	require.Equal(t, []bool{false, false}, told, "YDB said it did not commit")

	_, told, err = runUpdate(t, undetermined, aborted, nil)
	require.NoError(t, err)
	require.Equal(t, []bool{false, true, true}, told, "a later run does not forget an earlier unknown commit")
}

// The SDK's rule this relies on: an error whose commit's outcome is
// unknown is conditionally retryable, run again only for an operation
// marked idempotent (ydb-go-sdk v3.127.0, retry/mode.go). Without the
// mark, the call fails as unavailable.
func TestWithoutTheMarkAnUnknownCommitIsNotRunAgain(t *testing.T) {
	r := &sdkRunner{commits: []error{operationError(t, Ydb.StatusIds_UNDETERMINED), nil}}
	err := translate(r.DoTx(context.Background(), func(ctx context.Context, tx query.TxActor) error {
		return commit(ctx, tx)
	}))
	require.Error(t, err)
	require.Equal(t, errs.Unavailable, errs.KindOf(err))
	require.Equal(t, 1, r.runs)
}

func TestCommitUnknown(t *testing.T) {
	for _, code := range []Ydb.StatusIds_StatusCode{Ydb.StatusIds_UNDETERMINED, Ydb.StatusIds_TIMEOUT,
		Ydb.StatusIds_CANCELLED, Ydb.StatusIds_SESSION_EXPIRED} {
		require.True(t, commitUnknown(operationError(t, code)), code.String())
	}
	require.True(t, commitUnknown(errors.New("connection reset")), "no answer from YDB")
	for _, code := range []Ydb.StatusIds_StatusCode{Ydb.StatusIds_ABORTED, Ydb.StatusIds_PRECONDITION_FAILED,
		Ydb.StatusIds_OVERLOADED, Ydb.StatusIds_UNAVAILABLE, Ydb.StatusIds_BAD_SESSION} {
		require.False(t, commitUnknown(operationError(t, code)), code.String())
	}
}

// YDB may find a conflict only at the commit. A key taken, found at the
// commit, runs the transaction again as one found at the statement does
// (its first read then finds the row); without the store's reading the
// SDK would not run it again (PRECONDITION_FAILED is no retryable status)
// and the call would fail as a conflict. Broken locks (ABORTED) at the
// commit run it again too, and, when they go on until the deadline, the
// call fails as unavailable, as at a statement.
func TestConflictsFoundAtTheCommit(t *testing.T) {
	conflict := operationError(t, Ydb.StatusIds_PRECONDITION_FAILED, keyConflict())

	t.Run("a key taken, at the commit", func(t *testing.T) {
		r, told, err := runUpdate(t, conflict, nil)
		require.NoError(t, err, "run again, and the run finds the row")
		require.Equal(t, 2, r.runs)
		require.Equal(t, []bool{false, false}, told, "the commit refused: nothing of this call was written")
	})

	t.Run("a key taken, at the statement: the same", func(t *testing.T) {
		r := &sdkRunner{}
		db := &DB{txs: r, clock: clocktest.NewFake(time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC))}
		runs := 0
		err := db.update(context.Background(), func(context.Context, query.TxActor) error {
			runs++
			if runs == 1 {
				return retryKeyConflict(conflict)
			}
			return nil
		})
		require.NoError(t, err)
		require.Equal(t, 2, r.runs)
	})

	t.Run("without the store's reading, the SDK does not run it again", func(t *testing.T) {
		r := &sdkRunner{commits: []error{conflict, nil}}
		err := translate(r.DoTx(context.Background(), func(ctx context.Context, tx query.TxActor) error {
			return commit(ctx, tx)
		}, writeOptions()...))
		require.Equal(t, 1, r.runs)
		require.Equal(t, errs.Conflict, errs.KindOf(err), "%v", err)
	})

	t.Run("broken locks at the commit", func(t *testing.T) {
		aborted := operationError(t, Ydb.StatusIds_ABORTED)
		r, _, err := runUpdate(t, aborted, aborted, nil)
		require.NoError(t, err)
		require.Equal(t, 3, r.runs)

		always := &sdkRunner{rest: aborted}
		db := &DB{txs: always, clock: clocktest.NewFake(time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC))}
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		err = db.update(ctx, func(context.Context, query.TxActor) error { return nil })
		require.Error(t, err)
		require.Equal(t, errs.Unavailable, errs.KindOf(err), "%v", err)
		require.Zero(t, always.committed)
	})
}
