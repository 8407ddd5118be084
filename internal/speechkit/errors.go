package speechkit

import (
	"context"
	"errors"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"transcriber/internal/errs"
)

// The codes of the errors this package returns. Their messages are for
// people; SDK and gRPC text goes only into the wrapped cause.
const (
	// Retry later (errs.Unavailable).
	CodeUnavailable       = "speechkit_unavailable"   // a call failed in a way that may pass
	CodeAccessDenied      = "speechkit_access_denied" // Unauthenticated or PermissionDenied: credentials or roles
	CodeRecognitionFailed = "recognition_failed"      // the operation itself ended in a transient error: submit again
	// CodeRecognitionQuota: a submission met the recognizer's quota of
	// recognition requests (RESOURCE_EXHAUSTED; SpeechKit allows 500 an
	// hour). No fault of the job's: the caller waits for the quota to free
	// instead of counting an attempt.
	CodeRecognitionQuota = "recognition_quota"
	// CodeCheckQuota: a status check met the recognizer's quota of checks
	// (RESOURCE_EXHAUSTED on OperationService.Get; SpeechKit allows 5 a
	// second). The recognition runs on; the caller checks again later and
	// counts no attempt.
	CodeCheckQuota      = "check_quota"
	codeAuthUnavailable = "speechkit_auth_unavailable"

	// Give up (errs.Permanent).
	CodeRejected = "speechkit_rejected"  // the recognizer refused the request or the audio
	CodeExpired  = "recognition_expired" // the operation or its result is gone (results are kept 3 days)
	// CodeRequestTooLarge: the request with the audio is larger than a
	// gRPC message may be, ours to send or the recognizer's to receive
	// (RESOURCE_EXHAUSTED, as the quota, but with gRPC's "larger than max"
	// text). The same request is as large next time: no wait helps.
	CodeRequestTooLarge = "audio_too_large_for_request"
	// CodeAnswerTooLarge: an answer of the recognizer (a status, a piece of
	// the result) is larger than this client takes in one gRPC message.
	CodeAnswerTooLarge = "recognizer_answer_too_large"

	// The caller's request is wrong (errs.Invalid).
	CodeNoAudio             = "speechkit_no_audio"
	CodeAudioTooLarge       = "audio_too_large"
	CodeUnsupportedFormat   = "unsupported_audio_format"
	CodeUnsupportedLanguage = "unsupported_language"
	CodeNoOperation         = "speechkit_no_operation"
	CodeNoSummaryModel      = "summary_unavailable" // a summary asked for without a model or an instruction

	// Anything else (errs.Internal).
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

// call names what was being done when an error came back, because the same
// gRPC code means different things on different calls.
type call uint8

const (
	callSubmit    call = iota // RecognizeFile
	callCheck                 // OperationService.Get
	callResult                // GetRecognition
	callDelete                // DeleteRecognition
	callOperation             // the error inside a finished operation
)

// classify is the one place SpeechKit's errors become the service's error
// vocabulary. It returns nil when the outcome is not an error for this call
// (NotFound on Delete: the result is already gone).
//
//   - ResourceExhausted with gRPC's text of a message over its size limit
//     (sizeRefusal): errs.Permanent, never a quota. On Submit and inside an
//     operation CodeRequestTooLarge, the request with the audio was too
//     large; elsewhere CodeAnswerTooLarge, the recognizer's answer was.
//   - ResourceExhausted on Submit: errs.Unavailable CodeRecognitionQuota,
//     the request quota is used up; wait for it.
//   - Unavailable, DeadlineExceeded, ResourceExhausted, Aborted, Internal,
//     Unknown, Canceled: errs.Unavailable, retry. Inside a finished operation
//     the code is CodeRecognitionFailed: polling again will not help, a new
//     Submit may.
//   - InvalidArgument, FailedPrecondition, OutOfRange, Unimplemented:
//     errs.Permanent CodeRejected.
//   - NotFound: on Check and Result the operation or its result is gone,
//     errs.Permanent CodeExpired; on Submit and inside an operation the audio
//     was not found, CodeRejected; on Delete, nil.
//   - Unauthenticated, PermissionDenied: errs.Unavailable CodeAccessDenied
//     (a key, a token or a role is wrong; someone must fix it, and the job
//     may then go on).
//   - anything else: errs.Internal.
func (c *Client) classify(k call, err error) error {
	if err == nil {
		return nil
	}
	var done *errs.Error
	if errors.As(err, &done) {
		return err // classified already (a token failure, a closed client)
	}
	cause := c.redact(err)
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

// sizeRefusal reports whether a RESOURCE_EXHAUSTED status's message is
// gRPC's refusal of a message over its size limit rather than a quota:
// gRPC gives both the one code. The texts are the libraries' own, matched
// without case and without the numbers:
//
//   - grpc-go (rpc_util.go, stream.go, server.go): "grpc: received message
//     larger than max (N vs. M)", "grpc: received message larger than max
//     length allowed on current machine", "grpc: message after
//     decompression larger than max", "[grpc: ]trying to send message
//     larger than max (N vs. M)";
//   - gRPC's C core (the servers of most other languages): "Received
//     message larger than max (N vs. M)", "Sent message larger than max";
//   - grpc-java: "gRPC message exceeds maximum size M: N", and its
//     "Decompressed …" form.
func sizeRefusal(msg string) bool {
	msg = strings.ToLower(msg)
	return strings.Contains(msg, "larger than max") || strings.Contains(msg, "message exceeds maximum size")
}

// NotAccepted reports whether a failed Submit's request surely did not
// reach recognition, so it does not count against the recognizer's quota
// of requests:
//
//   - the request never left: it was not valid (errs.Invalid), or no IAM
//     token could be had for it;
//   - the recognizer refused it before accepting it: UNAVAILABLE (the
//     service's own refusal, and gRPC's code for a connection that could
//     not be made) and RESOURCE_EXHAUSTED for the quota.
//
// Anything else may have been accepted, and is counted: an operation that
// came back (even one that ended in an error), DEADLINE_EXCEEDED or
// CANCELLED (the request may have been read before the answer was given
// up), a message over gRPC's size limit (told apart only by its text,
// which an operation's own error may carry too), and every other answer
// given after the request was read (INTERNAL, UNKNOWN, ABORTED,
// INVALID_ARGUMENT and the other refusals: whether SpeechKit counts a
// request it refuses is not documented). docs/platform.md says which
// answers are counted and which are uncertain.
func NotAccepted(err error) bool {
	if err == nil {
		return false
	}
	switch errs.CodeOf(err) {
	case codeAuthUnavailable, CodeRecognitionQuota:
		return true
	case CodeUnavailable:
		st, ok := status.FromError(err)
		return ok && st.Code() == codes.Unavailable
	}
	return errs.KindOf(err) == errs.Invalid
}

// Outage reports whether err says the recognizer is unavailable to every
// caller, not that this request is wrong: UNAVAILABLE, a time-out, no
// connection or a transport error, an error on the recognizer's side
// (INTERNAL, UNKNOWN, ABORTED; a 5xx of the synchronous endpoint), or no
// IAM token to be had. The caller tells its own stops (a cancelled
// context) apart.
func Outage(err error) bool {
	switch errs.CodeOf(err) {
	case CodeUnavailable, codeAuthUnavailable:
		return true
	}
	return false
}
