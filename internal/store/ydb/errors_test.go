package ydb

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/ydb-platform/ydb-go-genproto/protos/Ydb"
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
type statusConn struct{ code Ydb.StatusIds_StatusCode }

func (c statusConn) Invoke(_ context.Context, _ string, _, reply any, _ ...grpc.CallOption) error {
	switch r := reply.(type) {
	case *Ydb_Operations.CancelOperationResponse:
		r.Status = c.code
		r.Issues = nil
	default:
		return fmt.Errorf("statusConn: unexpected reply %T", reply)
	}
	return nil
}

func (statusConn) NewStream(context.Context, *grpc.StreamDesc, string, ...grpc.CallOption) (grpc.ClientStream, error) {
	return nil, errors.New("statusConn: no streams")
}

// operationError is the SDK's error for a YDB answer with status code.
func operationError(t *testing.T, code Ydb.StatusIds_StatusCode) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	err := operation.New(ctx, statusConn{code: code}).Cancel(ctx, "op")
	require.Error(t, err)
	return err
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
		{"PRECONDITION_FAILED: an INSERT onto a key taken", operationError(t, Ydb.StatusIds_PRECONDITION_FAILED), errs.Conflict, "store_conflict"},
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
	t.Run("an INSERT onto a taken key is recognized", func(t *testing.T) {
		require.True(t, isKeyExists(operationError(t, Ydb.StatusIds_PRECONDITION_FAILED)))
		require.False(t, isKeyExists(operationError(t, Ydb.StatusIds_GENERIC_ERROR)))
	})
}
