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
	codeUnavailable = "storage_unavailable"
	codeFailed      = "storage_failed"
	codeTooLarge    = "object_too_large"
	codeEmpty       = "empty_file"
)

// The classes translate gives; their messages never quote the store, a
// key, the bucket or a URL.
var (
	classNotFound    = errs.New(errs.NotFound, "object_not_found", "the file was not found in storage")
	classDenied      = errs.New(errs.Unavailable, "storage_access_denied", "file storage refused the service's credentials; its storage settings need fixing")
	classNoBucket    = errs.New(errs.Unavailable, "storage_bucket_missing", "the service's storage bucket does not exist; its storage settings need fixing")
	classUnavailable = errs.New(errs.Unavailable, codeUnavailable, "file storage is unavailable; try again later") // may pass by itself
	classChanged     = errs.New(errs.Unavailable, CodeChanged, MsgChanged)
	classOther       = errs.New(errs.Internal, codeFailed, "file storage failed")
)

// codeClasses sorts S3's error codes; a code not here is sorted by status.
var codeClasses = map[string]*errs.Error{
	"NoSuchKey": classNotFound, "NotFound": classNotFound,
	"NoSuchBucket":       classNoBucket,
	"PreconditionFailed": classChanged,
	"AccessDenied":       classDenied, "InvalidAccessKeyId": classDenied, "SignatureDoesNotMatch": classDenied,
	"Forbidden": classDenied, "AllAccessDisabled": classDenied, "AccountProblem": classDenied,
	"InvalidSecurity": classDenied, "InvalidToken": classDenied, "ExpiredToken": classDenied,
	"InternalError": classUnavailable, "ServiceUnavailable": classUnavailable, "SlowDown": classUnavailable,
	"RequestTimeout": classUnavailable, "RequestTimeTooSkewed": classUnavailable, "OperationAborted": classUnavailable,
	"TooManyRequests": classUnavailable,
	"NoSuchUpload":    classUnavailable, // our multipart upload was aborted; uploading again may pass
}

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
	c := classify(err)
	return errs.Wrap(cause, c.Kind, c.Code, c.Message)
}

// classify sorts err. A missing bucket is a configuration to fix, like
// refused keys, not the object's absence (which fails a job for good).
func classify(err error) *errs.Error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return classUnavailable
	}
	var answer *apiError
	if errors.As(err, &answer) {
		if c := codeClasses[answer.Code]; c != nil {
			return c
		}
		switch status := answer.Status; {
		case retryableCode(answer.Code):
			return classUnavailable
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
