package s3

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"transcriber/internal/errs"
)

// secretURL stands for what errors may carry: the bucket, the key and, for
// presigned requests, the signature.
const secretURL = "https://storage.yandexcloud.net/secret-bucket/jobs/secret-key?X-Amz-Signature=abc"

// sdkErr is the store's answer with status and code, quoting secretURL.
func sdkErr(status int, code string) error {
	return fmt.Errorf("request to %s: %w", secretURL, &apiError{Status: status, Code: code, Message: "about " + secretURL})
}

// sendErr is a request that got no answer, as net/http returns it.
func sendErr(err error) error { return &url.Error{Op: "Head", URL: secretURL, Err: err} }

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout talking to " + secretURL }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func TestTranslate(t *testing.T) {
	opErr := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}
	cases := []struct {
		name string
		err  error
		kind errs.Kind
		code string
	}{
		{"NoSuchKey", sdkErr(404, "NoSuchKey"), errs.NotFound, "object_not_found"},
		{"NotFound (a HEAD)", sdkErr(404, "NotFound"), errs.NotFound, "object_not_found"},
		{"a bare 404", sdkErr(404, ""), errs.NotFound, "object_not_found"},
		{"NoSuchBucket", sdkErr(404, "NoSuchBucket"), errs.Unavailable, "storage_bucket_missing"},
		{"NoSuchUpload", sdkErr(404, "NoSuchUpload"), errs.Unavailable, "storage_unavailable"},
		{"AccessDenied", sdkErr(403, "AccessDenied"), errs.Unavailable, "storage_access_denied"},
		{"InvalidAccessKeyId", sdkErr(403, "InvalidAccessKeyId"), errs.Unavailable, "storage_access_denied"},
		{"SignatureDoesNotMatch", sdkErr(403, "SignatureDoesNotMatch"), errs.Unavailable, "storage_access_denied"},
		{"a bare 403", sdkErr(403, ""), errs.Unavailable, "storage_access_denied"},
		{"SlowDown", sdkErr(503, "SlowDown"), errs.Unavailable, "storage_unavailable"},
		{"Throttling on a 400", sdkErr(400, "Throttling"), errs.Unavailable, "storage_unavailable"},
		{"RequestTimeout on a 400", sdkErr(400, "RequestTimeout"), errs.Unavailable, "storage_unavailable"},
		{"a bare 500", sdkErr(500, ""), errs.Unavailable, "storage_unavailable"},
		{"a bare 502", sdkErr(502, ""), errs.Unavailable, "storage_unavailable"},
		{"a bare 429", sdkErr(429, ""), errs.Unavailable, "storage_unavailable"},
		{"a refused connection", sendErr(opErr), errs.Unavailable, "storage_unavailable"},
		{"a timeout", sendErr(timeoutErr{}), errs.Unavailable, "storage_unavailable"},
		{"a body cut short", fmt.Errorf("read %s: %w", secretURL, io.ErrUnexpectedEOF), errs.Unavailable, "storage_unavailable"},
		{"a deadline", fmt.Errorf("%s: %w", secretURL, context.DeadlineExceeded), errs.Unavailable, "storage_unavailable"},
		{"a cancel", fmt.Errorf("%s: %w", secretURL, context.Canceled), errs.Unavailable, "storage_unavailable"},
		{"InvalidArgument", sdkErr(400, "InvalidArgument"), errs.Internal, "storage_failed"},
		{"EntityTooLarge", sdkErr(400, "EntityTooLarge"), errs.Internal, "storage_failed"},
		{"an unknown error", fmt.Errorf("something about %s", secretURL), errs.Internal, "storage_failed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := translate(tc.err, "get")
			require.Equal(t, tc.kind, errs.KindOf(got))
			require.Equal(t, tc.code, errs.CodeOf(got))
			msg := errs.MessageOf(got)
			for _, secret := range []string{"secret", "storage.yandexcloud.net", "X-Amz", "http", "S3"} {
				require.NotContains(t, msg, secret)
			}
			require.ErrorIs(t, got, tc.err, "the SDK error stays in the chain")
			require.True(t, strings.HasPrefix(errors.Unwrap(got).Error(), "s3 get: "), "the cause names the operation")
		})
	}

	t.Run("nil is nil", func(t *testing.T) {
		require.NoError(t, translate(nil, "get"))
	})

	t.Run("a classified error keeps its kind, code and message", func(t *testing.T) {
		inner := errs.New(errs.Permanent, "no_audio_stream", "the file has no audio")
		got := translate(fmt.Errorf("read multipart upload data failed, %w", inner), "upload")
		require.Equal(t, errs.Permanent, errs.KindOf(got))
		require.Equal(t, "no_audio_stream", errs.CodeOf(got))
		require.Equal(t, "the file has no audio", errs.MessageOf(got))
	})
}
