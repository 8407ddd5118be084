package ydb

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/ydb-platform/ydb-go-genproto/protos/Ydb"
	"github.com/ydb-platform/ydb-go-genproto/protos/Ydb_Issue"
	"github.com/ydb-platform/ydb-go-genproto/protos/Ydb_Operations"
	"github.com/ydb-platform/ydb-go-sdk/v3/operation"
	"github.com/ydb-platform/ydb-go-sdk/v3/retry"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"transcriber/internal/errs"
	"transcriber/internal/job"
)

// statusConn is a gRPC connection whose every call answers an operation
// status: it lets the SDK itself make the operation error it makes when
// YDB answers that status, with no YDB.
type statusConn struct {
	code   Ydb.StatusIds_StatusCode
	issues []*Ydb_Issue.IssueMessage
}

func (c statusConn) Invoke(_ context.Context, _ string, _, reply any, _ ...grpc.CallOption) error {
	switch r := reply.(type) {
	case *Ydb_Operations.CancelOperationResponse:
		r.Status = c.code
		r.Issues = c.issues
	default:
		return fmt.Errorf("statusConn: unexpected reply %T", reply)
	}
	return nil
}

func (statusConn) NewStream(context.Context, *grpc.StreamDesc, string, ...grpc.CallOption) (grpc.ClientStream, error) {
	return nil, errors.New("statusConn: no streams")
}

// operationError is the SDK's error for a YDB answer with status code and
// issues.
func operationError(t *testing.T, code Ydb.StatusIds_StatusCode, issues ...*Ydb_Issue.IssueMessage) error {
	t.Helper()
	// The SDK retries a retryable answer until the context ends: a short
	// one gives back the answer's error soon.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	err := operation.New(ctx, statusConn{code: code, issues: issues}).Cancel(ctx, "op")
	require.Error(t, err)
	return err
}

// keyConflict is the issue tree YDB sends with an INSERT onto a taken key:
// the constraint violation under the query's own issue.
func keyConflict() *Ydb_Issue.IssueMessage {
	return &Ydb_Issue.IssueMessage{
		Message:  "Execution",
		Severity: 1,
		Issues: []*Ydb_Issue.IssueMessage{{
			Message:   "Conflict with existing key.",
			IssueCode: issueConstraintViolation,
			Severity:  1,
		}},
	}
}

// wrongShardState is a PRECONDITION_FAILED that is no key conflict: issue
// KIKIMR_PRECONDITION_FAILED (2029), "Wrong shard state".
func wrongShardState() *Ydb_Issue.IssueMessage {
	return &Ydb_Issue.IssueMessage{Message: "Wrong shard state", IssueCode: 2029, Severity: 1}
}

func TestTranslate(t *testing.T) {
	secretText := "table /ru-central1/b1g/etn/jobs: key 01jd… conflict"
	cases := []struct {
		name string
		err  error
		kind errs.Kind
		code string
	}{
		{"transport: the connection dropped", status.Error(codes.Unavailable, secretText), errs.Unavailable, codeUnavailable},
		{"transport: deadline on the wire", status.Error(codes.DeadlineExceeded, secretText), errs.Unavailable, codeUnavailable},
		{"an error the SDK would retry", retry.RetryableError(errors.New(secretText)), errs.Unavailable, codeUnavailable},
		{"a closed driver", fmt.Errorf("query: %w", errors.New("closed pool")), errs.Unavailable, codeUnavailable},
		{"NOT_FOUND: a database or path not there yet", operationError(t, Ydb.StatusIds_NOT_FOUND), errs.Unavailable, codeUnavailable},
		{"SCHEME_ERROR: a table not migrated yet", operationError(t, Ydb.StatusIds_SCHEME_ERROR), errs.Unavailable, codeUnavailable},
		{"PRECONDITION_FAILED with a constraint violation: an INSERT onto a key taken", operationError(t, Ydb.StatusIds_PRECONDITION_FAILED, keyConflict()), errs.Conflict, "store_conflict"},
		{"PRECONDITION_FAILED for anything else", operationError(t, Ydb.StatusIds_PRECONDITION_FAILED, wrongShardState()), errs.Internal, codeFailed},
		{"PRECONDITION_FAILED with no issue", operationError(t, Ydb.StatusIds_PRECONDITION_FAILED), errs.Internal, codeFailed},
		{"GENERIC_ERROR: a bug in a statement", operationError(t, Ydb.StatusIds_GENERIC_ERROR), errs.Internal, codeFailed},
		{"BAD_REQUEST", operationError(t, Ydb.StatusIds_BAD_REQUEST), errs.Internal, codeFailed},
		{"anything else", errors.New(secretText), errs.Internal, codeFailed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := translate(c.err)
			require.Equal(t, c.kind, errs.KindOf(got), "%v", got)
			require.Equal(t, c.code, errs.CodeOf(got))
			require.ErrorIs(t, got, c.err, "the cause is kept for logs")
			require.NotContains(t, errs.MessageOf(got), "ru-central1", "YDB's text never reaches a message")
			require.NotContains(t, errs.MessageOf(got), "table")
		})
	}

	t.Run("nil is nil", func(t *testing.T) { require.NoError(t, translate(nil)) })
	t.Run("the domain's errors pass unchanged", func(t *testing.T) {
		in := fmt.Errorf("claim: %w", job.ErrNotClaimable)
		require.Same(t, in, translate(in))
		require.ErrorIs(t, translate(job.ErrNotFound), job.ErrNotFound)
	})
	t.Run("a cancelled context passes unchanged and is unavailable", func(t *testing.T) {
		in := fmt.Errorf("query: %w", context.Canceled)
		require.Same(t, in, translate(in))
		require.Equal(t, errs.Unavailable, errs.KindOf(translate(in)))
	})
	t.Run("an INSERT onto a taken key is recognized by its issue", func(t *testing.T) {
		require.True(t, isKeyExists(operationError(t, Ydb.StatusIds_PRECONDITION_FAILED, keyConflict())))
		require.True(t, isKeyExists(fmt.Errorf("create job: %w", operationError(t, Ydb.StatusIds_PRECONDITION_FAILED, keyConflict().Issues...))),
			"the issue at the top of the tree, and the error wrapped")
		require.False(t, isKeyExists(operationError(t, Ydb.StatusIds_PRECONDITION_FAILED)), "PRECONDITION_FAILED alone")
		require.False(t, isKeyExists(operationError(t, Ydb.StatusIds_PRECONDITION_FAILED, wrongShardState())))
		require.False(t, isKeyExists(operationError(t, Ydb.StatusIds_GENERIC_ERROR, keyConflict())), "the issue under another status")
		require.False(t, isKeyExists(errors.New("Conflict with existing key.")))
	})
	t.Run("only a key conflict is retried", func(t *testing.T) {
		// createOnce and the bot's insert run again on a key conflict; any
		// other PRECONDITION_FAILED is final, as the SDK judges it.
		conflict := operationError(t, Ydb.StatusIds_PRECONDITION_FAILED, keyConflict())
		require.True(t, retry.Check(retryKeyConflict(conflict)).MustRetry(false))
		require.ErrorIs(t, retryKeyConflict(conflict), conflict)
		for _, other := range []error{
			operationError(t, Ydb.StatusIds_PRECONDITION_FAILED, wrongShardState()),
			operationError(t, Ydb.StatusIds_PRECONDITION_FAILED),
		} {
			require.Same(t, other, retryKeyConflict(other))
			require.False(t, retry.Check(retryKeyConflict(other)).MustRetry(false))
		}
		require.NoError(t, retryKeyConflict(nil))
	})
}
