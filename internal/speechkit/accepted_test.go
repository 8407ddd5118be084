package speechkit_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	stt "github.com/yandex-cloud/go-genproto/yandex/cloud/ai/stt/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"transcriber/internal/speechkit"
	"transcriber/internal/speechkit/speechkittest"
)

// What a failed submission says of its request, over the wire: refused
// before it was accepted (it does not count against the quota), or
// perhaps accepted (it does).
func TestNotAcceptedTellsTheRefusalsBeforeAcceptance(t *testing.T) {
	srv := speechkittest.Start(t)
	c := mustClient(t, srv.Config())
	submit := func(plan speechkittest.Plan) error {
		srv.Script(func(*stt.RecognizeFileRequest) speechkittest.Plan { return plan })
		_, err := c.Submit(context.Background(), uriRequest)
		return err
	}
	for name, tc := range map[string]struct {
		plan        speechkittest.Plan
		notAccepted bool
	}{
		"UNAVAILABLE":        {speechkittest.Plan{Err: status.Error(codes.Unavailable, "down")}, true},
		"RESOURCE_EXHAUSTED": {speechkittest.Plan{Err: status.Error(codes.ResourceExhausted, "quota")}, true},
		"DEADLINE_EXCEEDED":  {speechkittest.Plan{Err: status.Error(codes.DeadlineExceeded, "slow")}, false},
		"INTERNAL":           {speechkittest.Plan{Err: status.Error(codes.Internal, "oops")}, false},
		"INVALID_ARGUMENT":   {speechkittest.Plan{Err: status.Error(codes.InvalidArgument, "bad")}, false},
	} {
		err := submit(tc.plan)
		require.Error(t, err, name)
		require.Equal(t, tc.notAccepted, speechkit.NotAccepted(err), name)
	}
	require.False(t, speechkit.NotAccepted(submit(speechkittest.DefaultPlan())), "no error")

	_, err := c.Submit(context.Background(), speechkit.Request{Container: speechkit.OggOpus})
	require.Error(t, err)
	require.True(t, speechkit.NotAccepted(err), "a request that was not valid never left")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = c.Submit(ctx, uriRequest)
	require.Error(t, err)
	require.False(t, speechkit.NotAccepted(err), "given up by us: perhaps sent")

	srv.Stop()
	_, err = c.Submit(context.Background(), uriRequest)
	require.Error(t, err)
	require.True(t, speechkit.NotAccepted(err), "no connection: nothing was sent")
}
