package speechkit_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	stt "github.com/yandex-cloud/go-genproto/yandex/cloud/ai/stt/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"transcriber/internal/errs"
	"transcriber/internal/speechkit"
	"transcriber/internal/speechkit/speechkittest"
)

// RESOURCE_EXHAUSTED on a submission is the request quota: a code of its
// own, so the pipeline waits for the quota instead of spending an attempt.
// The same code elsewhere keeps its meaning there.
func TestResourceExhaustedIsTheRequestQuotaOnSubmit(t *testing.T) {
	srv := speechkittest.Start(t)
	c := mustClient(t, srv.Config())

	srv.Script(func(*stt.RecognizeFileRequest) speechkittest.Plan {
		return speechkittest.Plan{Err: status.Error(codes.ResourceExhausted, "fake says quota")}
	})
	_, err := c.Submit(context.Background(), uriRequest)
	requireErr(t, err, errs.Unavailable, speechkit.CodeRecognitionQuota)
	require.NotContains(t, errs.MessageOf(err), "fake says", "the cause stays out of the message")

	srv.Script(func(*stt.RecognizeFileRequest) speechkittest.Plan {
		return speechkittest.Plan{OpErr: status.New(codes.ResourceExhausted, "fake says busy")}
	})
	id := mustSubmit(t, c, uriRequest)
	done, err := c.Check(context.Background(), id)
	require.True(t, done)
	requireErr(t, err, errs.Unavailable, speechkit.CodeRecognitionFailed)

	// A status check over the quota of checks: the recognition runs on.
	srv.Script(func(*stt.RecognizeFileRequest) speechkittest.Plan {
		return speechkittest.Plan{CheckErr: status.Error(codes.ResourceExhausted, "fake says too many checks")}
	})
	id = mustSubmit(t, c, uriRequest)
	done, err = c.Check(context.Background(), id)
	require.False(t, done)
	requireErr(t, err, errs.Unavailable, speechkit.CodeCheckQuota)
	require.NotContains(t, errs.MessageOf(err), "fake says")
}
