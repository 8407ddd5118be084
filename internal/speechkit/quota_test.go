package speechkit_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	stt "github.com/yandex-cloud/go-genproto/yandex/cloud/ai/stt/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"transcriber/internal/errs"
	"transcriber/internal/speechkit"
	"transcriber/internal/speechkit/speechkittest"
	"transcriber/internal/transcript"
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

// A request larger than the recognizer takes in one gRPC message is
// refused by gRPC itself with RESOURCE_EXHAUSTED, the quota's code. It is
// not the quota: the same audio is as large after any wait, so it fails at
// once, in words that say what is wrong.
func TestARequestOverTheMessageLimitIsNotTheQuota(t *testing.T) {
	srv := speechkittest.StartReceivingAtMost(t, 64<<10)
	c := mustClient(t, srv.Config())

	_, err := c.Submit(context.Background(), speechkit.Request{Content: make([]byte, 100<<10), Container: speechkit.WAV})
	requireErr(t, err, errs.Permanent, speechkit.CodeRequestTooLarge)
	require.Contains(t, err.Error(), "larger than max", "gRPC's own refusal is the cause")
	require.Contains(t, errs.MessageOf(err), "too large to send to the speech recognizer in one request")
	require.NotContains(t, errs.MessageOf(err), "quota")
	require.Zero(t, srv.RecognizeCalls(), "the recognizer never saw it")

	mustSubmit(t, c, speechkit.Request{Content: make([]byte, 32<<10), Container: speechkit.WAV}) // under the limit: taken
}

// An answer larger than this client takes in one gRPC message (4 MB, the
// client's default) is refused by gRPC on our side, with the same code: a
// failure of its own, not a retry that meets the same answer again.
func TestAnAnswerOverTheMessageLimitIsNotRetried(t *testing.T) {
	big := strings.Repeat("слово ", 1<<20) // 6 MiB of UTF-8 in one message
	_, err := resultOf(t, speechkittest.Plan{Utterances: []transcript.Utterance{{EndMs: 1000, Text: big}}})
	requireErr(t, err, errs.Permanent, speechkit.CodeAnswerTooLarge)
	require.Contains(t, err.Error(), "received message larger than max")
}

// The texts of a message over gRPC's size limit, from grpc-go, gRPC's C
// core and grpc-java, in any case, become size refusals wherever the code
// comes: on a submission and inside an operation the request was too
// large; on a status check it is not the check quota. Every other
// RESOURCE_EXHAUSTED keeps its meaning.
func TestSizeRefusalsAreToldFromTheQuotaByTheirText(t *testing.T) {
	srv := speechkittest.Start(t)
	c := mustClient(t, srv.Config())
	for _, text := range []string{
		"grpc: received message larger than max (104857601 vs. 4194304)",
		"grpc: received message larger than max length allowed on current machine (5000000000 vs. 2147483647)",
		"grpc: message after decompression larger than max (5000000 vs. 4194304)",
		"grpc: received message after decompression larger than max 4194304",
		"trying to send message larger than max (70000000 vs. 67108864)",
		"grpc: trying to send message larger than max (70000000 vs. 67108864)",
		"Received message larger than max (70000000 vs. 67108864)",
		"SERVER: Received message larger than max (70000000 vs. 67108864)",
		"Sent message larger than max (70000000 vs. 67108864)",
		"gRPC message exceeds maximum size 67108864: 70000000",
		"Decompressed gRPC message exceeds maximum size 67108864",
		"RECEIVED MESSAGE LARGER THAN MAX",
	} {
		srv.Script(func(*stt.RecognizeFileRequest) speechkittest.Plan {
			return speechkittest.Plan{Err: status.Error(codes.ResourceExhausted, text)}
		})
		_, err := c.Submit(context.Background(), uriRequest)
		requireErr(t, err, errs.Permanent, speechkit.CodeRequestTooLarge)
		require.Contains(t, err.Error(), text, "the cause stays in the error for logs")

		srv.Script(func(*stt.RecognizeFileRequest) speechkittest.Plan {
			return speechkittest.Plan{OpErr: status.New(codes.ResourceExhausted, text)}
		})
		id := mustSubmit(t, c, uriRequest)
		done, err := c.Check(context.Background(), id)
		require.True(t, done)
		requireErr(t, err, errs.Permanent, speechkit.CodeRequestTooLarge)

		srv.Script(func(*stt.RecognizeFileRequest) speechkittest.Plan {
			return speechkittest.Plan{CheckErr: status.Error(codes.ResourceExhausted, text)}
		})
		id = mustSubmit(t, c, uriRequest)
		_, err = c.Check(context.Background(), id)
		requireErr(t, err, errs.Permanent, speechkit.CodeAnswerTooLarge)
	}

	for _, text := range []string{"fake says quota", "Quota exceeded: 500 requests per hour", "too many requests", "the message is large", ""} {
		srv.Script(func(*stt.RecognizeFileRequest) speechkittest.Plan {
			return speechkittest.Plan{Err: status.Error(codes.ResourceExhausted, text)}
		})
		_, err := c.Submit(context.Background(), uriRequest)
		requireErr(t, err, errs.Unavailable, speechkit.CodeRecognitionQuota)
	}
}
