package speechkit

import (
	"context"
	"errors"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"transcriber/internal/errs"
)

// Error codes; SDK and gRPC text goes only into the wrapped cause.
const (
	// errs.Unavailable: retry later.
	CodeUnavailable       = "speechkit_unavailable"
	CodeAccessDenied      = "speechkit_access_denied" // credentials or roles
	CodeRecognitionFailed = "recognition_failed"      // the operation failed transiently: submit again
	CodeRecognitionQuota  = "recognition_quota"       // Submit met the 500-an-hour quota: wait, count no attempt
	CodeCheckQuota        = "check_quota"             // Check met the 5-a-second quota: check later, count no attempt
	codeAuthUnavailable   = "speechkit_auth_unavailable"

	// errs.Permanent: give up.
	CodeRejected        = "speechkit_rejected"
	CodeExpired         = "recognition_expired"         // the operation or its result is gone (kept 3 days)
	CodeRequestTooLarge = "audio_too_large_for_request" // over gRPC's message size: as large next time
	CodeAnswerTooLarge  = "recognizer_answer_too_large" // an answer over this client's message size

	// errs.Invalid: the caller's request is wrong.
	CodeNoAudio             = "speechkit_no_audio"
	CodeAudioTooLarge       = "audio_too_large"
	CodeUnsupportedFormat   = "unsupported_audio_format"
	CodeUnsupportedLanguage = "unsupported_language"
	CodeNoOperation         = "speechkit_no_operation"
	CodeNoSummaryModel      = "summary_unavailable" // no summary model or instruction

	codeInternal = "speechkit_error"
)

const (
	msgUnavailable  = "the speech recognizer is unavailable; try again later"
	msgAccessDenied = "the speech recognizer refused this service's credentials; try again later"
	msgFailed       = "the speech recognizer failed on this audio; it will be tried again"
	msgQuota        = "the speech recognizer's request quota is used up for now; it will be tried again"
	msgCheckQuota   = "the speech recognizer is asked too often for now; the recognition is checked again later"
	msgRejected     = "the recognizer could not process this audio"
	msgTooLarge     = "the audio is too large to send to the speech recognizer in one request; a shorter recording may fit"
	msgAnswerLarge  = "the speech recognizer's answer is larger than this service can receive in one message"
	msgExpired      = "the recognition result is no longer available (results are kept for 3 days)"
)

// call is what was being done: a gRPC code means different things on different calls.
type call uint8

const (
	callSubmit    call = iota // RecognizeFile
	callCheck                 // OperationService.Get
	callResult                // GetRecognition
	callDelete                // DeleteRecognition
	callOperation             // the error inside a finished operation
)

// classify turns SpeechKit's errors into the service's codes; nil for
// NotFound on Delete. A size refusal is permanent, never a quota; inside a
// finished operation a transient error is CodeRecognitionFailed (a new
// Submit may pass); access errors are Unavailable (someone fixes a key or
// role and the job goes on).
func (c *Client) classify(k call, err error) error {
	if err == nil {
		return nil
	}
	var done *errs.Error
	if errors.As(err, &done) {
		return err // classified already (a token failure, a closed client)
	}
	cause := c.auth.redact(err)
	st, ok := status.FromError(err)
	if !ok {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return errs.Wrap(cause, errs.Unavailable, CodeUnavailable, msgUnavailable)
		}
		return errs.Wrap(cause, errs.Internal, codeInternal, "")
	}
	switch st.Code() {
	case codes.ResourceExhausted:
		if sizeRefusal(st.Message()) {
			if k == callSubmit || k == callOperation {
				return errs.Wrap(cause, errs.Permanent, CodeRequestTooLarge, msgTooLarge)
			}
			return errs.Wrap(cause, errs.Permanent, CodeAnswerTooLarge, msgAnswerLarge)
		}
		switch k {
		case callSubmit:
			return errs.Wrap(cause, errs.Unavailable, CodeRecognitionQuota, msgQuota)
		case callOperation:
			return errs.Wrap(cause, errs.Unavailable, CodeRecognitionFailed, msgFailed)
		case callCheck:
			return errs.Wrap(cause, errs.Unavailable, CodeCheckQuota, msgCheckQuota)
		}
		return errs.Wrap(cause, errs.Unavailable, CodeUnavailable, msgUnavailable)
	case codes.Unavailable, codes.DeadlineExceeded,
		codes.Aborted, codes.Internal, codes.Unknown, codes.Canceled:
		if k == callOperation {
			return errs.Wrap(cause, errs.Unavailable, CodeRecognitionFailed, msgFailed)
		}
		return errs.Wrap(cause, errs.Unavailable, CodeUnavailable, msgUnavailable)
	case codes.InvalidArgument, codes.FailedPrecondition, codes.OutOfRange, codes.Unimplemented:
		return errs.Wrap(cause, errs.Permanent, CodeRejected, msgRejected)
	case codes.NotFound:
		switch k {
		case callDelete:
			return nil
		case callCheck, callResult:
			return errs.Wrap(cause, errs.Permanent, CodeExpired, msgExpired)
		default:
			return errs.Wrap(cause, errs.Permanent, CodeRejected, msgRejected)
		}
	case codes.Unauthenticated, codes.PermissionDenied:
		return errs.Wrap(cause, errs.Unavailable, CodeAccessDenied, msgAccessDenied)
	default:
		return errs.Wrap(cause, errs.Internal, codeInternal, "")
	}
}

// sizeRefusal reports whether a RESOURCE_EXHAUSTED message is gRPC's size
// refusal, not a quota: grpc-go and the C core say "larger than max",
// grpc-java "message exceeds maximum size".
func sizeRefusal(msg string) bool {
	msg = strings.ToLower(msg)
	return strings.Contains(msg, "larger than max") || strings.Contains(msg, "message exceeds maximum size")
}

// NotAccepted reports whether a failed Submit surely did not reach
// recognition, so it does not count against the request quota: invalid, no
// IAM token, UNAVAILABLE, or the quota itself. Anything else may have been
// read and is counted (docs/platform.md).
func NotAccepted(err error) bool {
	switch errs.CodeOf(err) {
	case codeAuthUnavailable, CodeRecognitionQuota:
		return true
	case CodeUnavailable:
		st, ok := status.FromError(err)
		return ok && st.Code() == codes.Unavailable
	}
	return errs.KindOf(err) == errs.Invalid
}

// Outage reports whether err says the recognizer is down for every caller
// (transport, time-out, 5xx, no IAM token), not that this request is wrong;
// the caller tells its own cancellation apart.
func Outage(err error) bool {
	code := errs.CodeOf(err)
	return code == CodeUnavailable || code == codeAuthUnavailable
}
