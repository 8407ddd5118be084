package s3

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"

	"transcriber/internal/errs"
)

// CodeChanged is the code of an error about an object that changed while
// it was read (a failed ETag precondition): callers that check an object
// themselves give it too.
const (
	CodeChanged = "storage_object_changed"
	MsgChanged  = "the file changed in storage while it was being read; it will be read again"
)

// The codes of the errors a Store returns (the package comment lists them
// with their kinds).
const (
	codeNotFound      = "object_not_found"
	codeUnavailable   = "storage_unavailable"
	codeAccessDenied  = "storage_access_denied"
	codeBucketMissing = "storage_bucket_missing"
	codeFailed        = "storage_failed"
	codeTooLarge      = "object_too_large"
	codeEmpty         = "empty_file"
	codeChanged       = CodeChanged
)

// The messages: fixed sentences, fit for a person, that never quote the
// store, a key, the bucket or a URL.
const (
	msgNotFound      = "the file was not found in storage"
	msgUnavailable   = "file storage is unavailable; try again later"
	msgAccessDenied  = "file storage refused the service's credentials; its storage settings need fixing"
	msgBucketMissing = "the service's storage bucket does not exist; its storage settings need fixing"
	msgFailed        = "file storage failed"
	msgChanged       = MsgChanged
)

// S3 error codes by what they mean to us. A HEAD answer has no body, so its
// code is the status's name ("NotFound", "Forbidden"; see apiError).
var (
	notFoundCodes = map[string]bool{"NoSuchKey": true, "NotFound": true}
	deniedCodes   = map[string]bool{
		"AccessDenied": true, "InvalidAccessKeyId": true, "SignatureDoesNotMatch": true,
		"Forbidden": true, "AllAccessDisabled": true, "AccountProblem": true,
		"InvalidSecurity": true, "InvalidToken": true, "ExpiredToken": true,
	}
	unavailableCodes = map[string]bool{
		"InternalError": true, "ServiceUnavailable": true, "SlowDown": true,
		"RequestTimeout": true, "RequestTimeTooSkewed": true, "OperationAborted": true,
		"TooManyRequests": true,
		// A 404 about the upload, not the object: something aborted our
		// multipart upload; uploading again may pass.
		"NoSuchUpload": true,
	}
)

// Outage reports whether err says the object store is unavailable to
// every caller (a 5xx, throttling, a time-out, no answer), not that this
// object or these credentials are wrong.
func Outage(err error) bool { return errs.CodeOf(err) == codeUnavailable }

// translate classifies an error from operation op ("head", "upload", …) as
// an errs.Error. The error, which may hold the request URL or the store's
// message, goes only into the cause, prefixed with op for the logs; the
// Message is fixed. An error that is already classified (a reader's, given
// to Upload) keeps its kind, code and message.
func translate(err error, op string) error {
	if err == nil {
		return nil
	}
	cause := fmt.Errorf("s3 %s: %w", op, err)
	var classified *errs.Error
	if errors.As(err, &classified) {
		return cause
	}
	switch classify(err) {
	case classNotFound:
		return errs.Wrap(cause, errs.NotFound, codeNotFound, msgNotFound)
	case classDenied:
		return errs.Wrap(cause, errs.Unavailable, codeAccessDenied, msgAccessDenied)
	case classNoBucket:
		return errs.Wrap(cause, errs.Unavailable, codeBucketMissing, msgBucketMissing)
	case classUnavailable:
		return errs.Wrap(cause, errs.Unavailable, codeUnavailable, msgUnavailable)
	case classChanged:
		return errs.Wrap(cause, errs.Unavailable, codeChanged, msgChanged)
	default:
		return errs.Wrap(cause, errs.Internal, codeFailed, msgFailed)
	}
}

// class is what an error means to us; translate turns it into an
// errs.Error.
type class uint8

const (
	classOther       class = iota // a bug or an answer we do not expect
	classNotFound                 // the object is not there
	classDenied                   // our keys or the bucket policy refuse us
	classNoBucket                 // the configured bucket is not there
	classUnavailable              // may pass by itself: throttling, 5xx, network
	classChanged                  // a precondition on the object's ETag failed: it was replaced
)

// The methods classify reads an error by: the store's answer (apiError) has
// them, and so have the AWS SDK's errors, whose shapes the tests still use.
type (
	codedError    interface{ ErrorCode() string }
	statusError   interface{ HTTPStatusCode() int }
	connectionErr interface{ ConnectionError() bool }
)

// classify sorts err into a class. A missing bucket is not the object's
// absence (NotFound would fail a job for good) but a configuration to fix,
// like refused keys: both become Unavailable with codes of their own.
func classify(err error) class {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return classUnavailable
	}
	var coded codedError
	if errors.As(err, &coded) {
		code := coded.ErrorCode()
		switch {
		case notFoundCodes[code]:
			return classNotFound
		case code == "NoSuchBucket":
			return classNoBucket
		case code == "PreconditionFailed":
			return classChanged
		case deniedCodes[code]:
			return classDenied
		case unavailableCodes[code], retryableCode(code):
			return classUnavailable
		}
	}
	// A request that got no answer has no status (or 0), so the status
	// decides only when there is one.
	var withStatus statusError
	if errors.As(err, &withStatus) {
		switch status := withStatus.HTTPStatusCode(); {
		case status == http.StatusNotFound:
			return classNotFound
		case status == http.StatusPreconditionFailed:
			return classChanged
		case status == http.StatusForbidden || status == http.StatusUnauthorized:
			return classDenied
		case status == http.StatusTooManyRequests || status == http.StatusRequestTimeout || status >= 500:
			return classUnavailable
		}
	}
	// No answer from the store: the request could not be sent, or the
	// connection broke, or timed out.
	var conn connectionErr
	var netErr net.Error
	if (errors.As(err, &conn) && conn.ConnectionError()) || errors.As(err, &netErr) ||
		errors.Is(err, io.ErrUnexpectedEOF) {
		return classUnavailable
	}
	return classOther
}
