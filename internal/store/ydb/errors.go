package ydb

import (
	"context"
	"errors"
	"strings"

	"github.com/ydb-platform/ydb-go-genproto/protos/Ydb"
	ydbsdk "github.com/ydb-platform/ydb-go-sdk/v3"
	"github.com/ydb-platform/ydb-go-sdk/v3/retry"

	"transcriber/internal/errs"
)

// Messages never hold YDB's text: the cause is kept for logs only.
const (
	codeUnavailable = "store_unavailable"
	msgUnavailable  = "the job store is unavailable"
	codeFailed      = "store_failed"
)

var errNoDSN = errs.New(errs.Invalid, "ydb_dsn_missing", "no YDB connection string (YDB_CONNECTION_STRING)")

// translate reads an SDK error into the service's vocabulary. Classified
// errors and a context's pass unchanged; what may pass by itself (the
// transport, an overloaded database, what the SDK would retry, a schema not
// yet migrated) is Unavailable; the rest Internal.
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
	switch {
	case isKeyExists(err):
		return errs.Wrap(err, errs.Conflict, "store_conflict", "")
	case ydbsdk.IsTransportError(err),
		ydbsdk.IsTimeoutError(err),
		ydbsdk.IsOperationErrorUnavailable(err),
		ydbsdk.IsOperationErrorOverloaded(err),
		ydbsdk.IsOperationErrorNotFoundError(err),
		ydbsdk.IsOperationErrorSchemeError(err),
		ydbsdk.IsOperationErrorTransactionLocksInvalidated(err),
		ydbsdk.IsOperationError(err, Ydb.StatusIds_SESSION_EXPIRED, Ydb.StatusIds_BAD_SESSION,
			Ydb.StatusIds_SESSION_BUSY, Ydb.StatusIds_UNDETERMINED, Ydb.StatusIds_ABORTED,
			Ydb.StatusIds_CANCELLED, Ydb.StatusIds_TIMEOUT),
		ydbsdk.IsRatelimiterAcquireError(err),
		retry.Check(err).MustRetry(true), // the SDK's own verdict: it would retry an idempotent call
		isClosed(err):
		return errs.Wrap(err, errs.Unavailable, codeUnavailable, msgUnavailable)
	}
	return errs.Wrap(err, errs.Internal, codeFailed, "")
}

// issueConstraintViolation is KIKIMR_CONSTRAINT_VIOLATION (YQL's
// issue_id.proto): "Conflict with existing key."
const issueConstraintViolation = 2012

// isKeyExists reports an INSERT onto a taken key: PRECONDITION_FAILED with
// a constraint-violation issue at any depth. The status alone is any query
// that "cannot be executed in the current state"
// (https://ydb.tech/docs/en/reference/ydb-sdk/ydb-status-codes); retried
// as a key conflict it would spin until the deadline.
func isKeyExists(err error) bool {
	if !ydbsdk.IsOperationError(err, Ydb.StatusIds_PRECONDITION_FAILED) {
		return false
	}
	found := false
	ydbsdk.IterateByIssues(err, func(_ string, code Ydb.StatusIds_StatusCode, _ uint32) {
		found = found || code == issueConstraintViolation
	})
	return found
}

// retryKeyConflict marks a key conflict (at a statement or the commit)
// retryable: run again, the transaction reads the winner's row.
func retryKeyConflict(err error) error {
	if isKeyExists(err) {
		return retry.RetryableError(err)
	}
	return err
}

// isClosed reports a closed driver; the SDK has no sentinel for it.
func isClosed(err error) bool { return strings.Contains(err.Error(), "closed pool") }
