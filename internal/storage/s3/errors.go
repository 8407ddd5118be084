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

// CodeChanged: an object changed while it was read (a failed ETag
// precondition); callers that check an object themselves give it too.
const (
	CodeChanged = "storage_object_changed"
	MsgChanged  = "the file changed in storage while it was being read; it will be read again"
)

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

// The messages never quote the store, a key, the bucket or a URL.
const (
	msgNotFound      = "the file was not found in storage"
	msgUnavailable   = "file storage is unavailable; try again later"
	msgAccessDenied  = "file storage refused the service's credentials; its storage settings need fixing"
	msgBucketMissing = "the service's storage bucket does not exist; its storage settings need fixing"
	msgFailed        = "file storage failed"
	msgChanged       = MsgChanged
)

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
		"NoSuchUpload":    true, // our multipart upload was aborted; uploading again may pass
	}
)

// Outage reports whether the store is unavailable to every caller (5xx,
// throttling, a time-out, no answer), not this object or these keys wrong.
func Outage(err error) bool { return errs.CodeOf(err) == codeUnavailable }

// translate classifies an error of operation op ("head", "upload", …); the
// error, which may hold a URL, goes only into the cause. An errs.Error (a
// reader's, given to Upload) keeps its classification.
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

type class uint8

const (
	classOther class = iota
	classNotFound
	classDenied
	classNoBucket
	classUnavailable // may pass by itself
	classChanged     // an ETag precondition failed
)

// classify sorts err. A missing bucket is a configuration to fix, like
// refused keys, not the object's absence (which fails a job for good).
func classify(err error) class {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return classUnavailable
	}
	var answer *apiError
	if errors.As(err, &answer) {
		switch code := answer.Code; {
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
		switch status := answer.Status; {
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
	var netErr net.Error // *url.Error is one: no answer
	if errors.As(err, &netErr) || errors.Is(err, io.ErrUnexpectedEOF) {
		return classUnavailable
	}
	return classOther
}
