package speechkit

import (
	"context"

	stt "github.com/yandex-cloud/go-genproto/yandex/cloud/ai/stt/v3"
	"github.com/yandex-cloud/go-genproto/yandex/cloud/operation"
	"google.golang.org/grpc/status"

	"transcriber/internal/errs"
)

// Check asks whether the recognition is finished. SpeechKit's quota is 5
// status checks per second (API v3, "Quotas and limits"), and it needs about
// 10 s per minute of mono audio, so callers should poll sparingly.
//
// It returns (false, nil) while the recognition runs and (true, nil) when its
// result is ready. A recognition that ended in an error returns done = true
// with the error classified: errs.Permanent CodeRejected (CodeRequestTooLarge
// for a request over gRPC's message size) when the audio or the request is at
// fault, errs.Unavailable CodeRecognitionFailed when submitting again may
// succeed. A failed call returns done = false: an unknown operation
// is errs.Permanent CodeExpired, the rest as classify says.
func (c *Client) Check(ctx context.Context, operationID string) (done bool, err error) {
	if operationID == "" {
		return false, errNoOperation()
	}
	ctx, err = c.outgoing(ctx)
	if err != nil {
		return false, err
	}
	op, err := c.ops.Get(ctx, &operation.GetOperationRequest{OperationId: operationID})
	if err != nil {
		return false, c.classify(callCheck, err)
	}
	// The Operation contract: an error may be set before done when a failure
	// is detected; either way the recognition will not produce a result.
	if e := op.GetError(); e != nil {
		return true, c.classify(callOperation, status.ErrorProto(e))
	}
	return op.GetDone(), nil
}

// Delete removes the recognition's result from SpeechKit (it would otherwise
// be kept 3 days). A result that is already gone is not an error.
func (c *Client) Delete(ctx context.Context, operationID string) error {
	if operationID == "" {
		return errNoOperation()
	}
	ctx, err := c.outgoing(ctx)
	if err != nil {
		return err
	}
	_, err = c.stt.DeleteRecognition(ctx, &stt.DeleteRecognitionRequest{OperationId: operationID})
	return c.classify(callDelete, err)
}

func errNoOperation() error {
	return errs.New(errs.Invalid, CodeNoOperation, "no recognition operation was given")
}
