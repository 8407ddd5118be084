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

// Codes and messages of the store's own errors. Messages never hold YDB's
// text: the cause is kept for logs only (errs.Error.Err).
const (
	codeUnavailable = "store_unavailable"
	msgUnavailable  = "the job store is unavailable"
	codeFailed      = "store_failed"
)

// errNoDSN: Open was given no connection string.
var errNoDSN = errs.New(errs.Invalid, "ydb_dsn_missing", "no YDB connection string (YDB_CONNECTION_STRING)")

// translate reads an error of the SDK into the service's vocabulary; it is
// the one place that does. Errors already classified (the domain's, from
// inside a transaction) and a cancelled or expired context pass unchanged.
// What may pass by itself is Unavailable: the transport, an overloaded or
// unavailable database, an error the SDK would retry (ydb-go-sdk v3.127 has
// no ydb.IsRetryableError; retry.Check is its verdict, and DoTx gave up
// retrying), a missing table or database (a schema not yet migrated, a
// database being created). Anything else is Internal.
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
		// An INSERT found its key taken; the stores check first, so this
		// is a write that raced past a check.
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

// issueConstraintViolation is YDB's issue code KIKIMR_CONSTRAINT_VIOLATION
// (TIssuesIds in YQL's issue_id.proto), which an INSERT onto a key already
// present carries, with the message "Conflict with existing key."
const issueConstraintViolation = 2012

// isKeyExists reports an INSERT onto a key already present
// (https://ydb.tech/docs/en/yql/reference/syntax/insert_into): status
// PRECONDITION_FAILED with a constraint-violation issue, at any depth of
// the issue tree. PRECONDITION_FAILED alone is not enough: YDB answers it
// for any query that "cannot be executed in the current state", an existing
// key being one example (https://ydb.tech/docs/en/reference/ydb-sdk/ydb-status-codes),
// a data shard in the wrong state another; those are no key conflict, and
// retrying them as one would spin until the call's deadline.
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

// retryKeyConflict marks an INSERT's key conflict retryable, so DoTx runs
// the transaction again and it reads the row a concurrent one committed.
// Any other error is returned as it is, for the SDK to judge. It reads a
// statement's error and the commit's alike (update): YDB may report the
// conflict at either.
func retryKeyConflict(err error) error {
	if isKeyExists(err) {
		return retry.RetryableError(err)
	}
	return err
}

// isClosed reports a call on a closed driver: its session pool is closed.
// The SDK exports no sentinel for it, so its text is matched; the text
// stays in the cause, never in a message.
func isClosed(err error) bool { return strings.Contains(err.Error(), "closed pool") }
