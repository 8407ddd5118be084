package loadsim

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/yandex-cloud/go-genproto/yandex/cloud/operation"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"transcriber/internal/errs"
	"transcriber/internal/speechkit"
)

func newRecognizer(s *Sched) *Recognizer {
	o := NewObjects(s, &Media{sched: s, Speed: 95})
	o.PutRecording("audio/j/source", 1000, (6 * time.Minute).Milliseconds(), "ogg", "opus")
	return &Recognizer{sched: s, objects: o, PerMinute: 10 * time.Second, Fixed: 3 * time.Second, ChecksPerSecond: 5}
}

// Six minutes of audio are recognized in 6 × 10 s + 3 s.
func TestARecognitionTakesTimeForItsAudio(t *testing.T) {
	s := NewSched(t0)
	r := newRecognizer(s)
	ctx := context.Background()
	var before, after bool
	s.Go(func() {
		id, err := r.Submit(ctx, speechkit.Request{URI: r.objects.URI("audio/j/source")})
		require.NoError(t, err)
		_ = s.Sleep(ctx, 63*time.Second-time.Millisecond)
		before, err = r.Check(ctx, id)
		require.NoError(t, err)
		_ = s.Sleep(ctx, time.Millisecond)
		after, err = r.Check(ctx, id)
		require.NoError(t, err)
		_, err = r.Submit(ctx, speechkit.Request{URI: r.objects.URI("audio/missing")})
		require.Equal(t, speechkit.CodeRejected, errs.CodeOf(err))
	})
	<-s.Idle()
	require.False(t, before)
	require.True(t, after)
	require.Len(t, r.Submissions(), 1)
}

// Five checks are answered in any closed second; the sixth is refused
// and does not count; a second later the five still count, its start
// included, and a moment after that checks are answered again.
func TestChecksPastTheRateAreRefused(t *testing.T) {
	s := NewSched(t0)
	r := newRecognizer(s)
	ctx := context.Background()
	var errsSeen []error
	s.Go(func() {
		id, err := r.Submit(ctx, speechkit.Request{URI: r.objects.URI("audio/j/source")})
		require.NoError(t, err)
		for range 6 {
			_, err := r.Check(ctx, id)
			errsSeen = append(errsSeen, err)
		}
		_ = s.Sleep(ctx, time.Second)
		_, err = r.Check(ctx, id) // the five are still within this second, its start included
		errsSeen = append(errsSeen, err)
		_ = s.Sleep(ctx, time.Millisecond)
		_, err = r.Check(ctx, id)
		errsSeen = append(errsSeen, err)
	})
	<-s.Idle()
	for i, err := range errsSeen {
		if i == 5 || i == 6 {
			require.Equal(t, errs.Unavailable, errs.KindOf(err), "check %d: a refusal may pass", i)
			continue
		}
		require.NoError(t, err, "check %d", i)
	}
	require.Equal(t, 2, r.refused)
	require.Equal(t, 7, r.peakChecks, "the peak counts what was asked")
	require.Equal(t, t0, r.firstRefused)
}

// quotaOperations answers every status check with RESOURCE_EXHAUSTED.
type quotaOperations struct {
	operation.UnimplementedOperationServiceServer
}

func (quotaOperations) Get(context.Context, *operation.GetOperationRequest) (*operation.Operation, error) {
	return nil, status.Error(codes.ResourceExhausted, "quota")
}

// The refusal is the error the real client gives for a check SpeechKit
// answers with RESOURCE_EXHAUSTED: same kind, code and message.
func TestCheckRateErrorIsTheClients(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := grpc.NewServer()
	operation.RegisterOperationServiceServer(srv, quotaOperations{})
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)

	addr := lis.Addr().String()
	c, err := speechkit.New(speechkit.Config{Endpoint: addr, OperationEndpoint: addr, APIKey: "key", Insecure: true})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, real := c.Check(ctx, "op")
	require.Error(t, real)

	fake := errCheckRate()
	require.Equal(t, errs.KindOf(real), errs.KindOf(fake))
	require.Equal(t, errs.CodeOf(real), errs.CodeOf(fake))
	require.Equal(t, errs.MessageOf(real), errs.MessageOf(fake))
}
