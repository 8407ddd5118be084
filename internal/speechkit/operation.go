package speechkit

import (
	"context"

	stt "github.com/yandex-cloud/go-genproto/yandex/cloud/ai/stt/v3"
	"github.com/yandex-cloud/go-genproto/yandex/cloud/operation"
	"google.golang.org/grpc/status"

	"transcriber/internal/errs"
)

// Check reports whether the recognition is finished; poll sparingly (quota:
// 5 checks a second; recognition takes about 10 s a minute of mono audio).
// A recognition that failed is done with its error classified; a failed
// call is not done (an unknown operation is CodeExpired).
func (c *Client) Check(ctx context.Context, operationID string) (done bool, err error) {
	ctx, err = c.onOperation(ctx, operationID)
	if err != nil {
		return false, err
	}
	op, err := c.ops.Get(ctx, &operation.GetOperationRequest{OperationId: operationID})
	if err != nil {
		return false, c.classify(callCheck, err)
	}
	// An error may be set before done; either way no result will come.
	if e := op.GetError(); e != nil {
		return true, c.classify(callOperation, status.ErrorProto(e))
	}
	return op.GetDone(), nil
}

// Delete removes the result (else kept 3 days); one already gone is no error.
func (c *Client) Delete(ctx context.Context, operationID string) error {
	ctx, err := c.onOperation(ctx, operationID)
	if err != nil {
		return err
	}
	_, err = c.stt.DeleteRecognition(ctx, &stt.DeleteRecognitionRequest{OperationId: operationID})
	return c.classify(callDelete, err)
}

// onOperation is outgoing for a call on an operation, which must be named.
func (c *Client) onOperation(ctx context.Context, operationID string) (context.Context, error) {
	if operationID == "" {
		return nil, errs.New(errs.Invalid, CodeNoOperation, "no recognition operation was given")
	}
	return c.outgoing(ctx)
}
