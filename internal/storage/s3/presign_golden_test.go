package s3_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/clock/clocktest"
	"transcriber/internal/storage/s3"
)

// TestPresignedURLsAsBefore holds URLs that the package made when it was
// built on aws-sdk-go-v2 (v1.41.2, service/s3 v1.96.2), recorded with the
// same keys, clock and config: the URLs are the same byte for byte. It
// needs no SDK, so it stays meaningful if the SDK ever leaves go.mod.
func TestPresignedURLsAsBefore(t *testing.T) {
	at := time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)
	cases := []struct {
		pathStyle bool
		key       string
		put, get  string
	}{
		{
			false, "jobs/1/input",
			"https://transcriber-media.storage.yandexcloud.net/jobs/1/input?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKID%2F20250304%2Fru-central1%2Fs3%2Faws4_request&X-Amz-Date=20250304T050607Z&X-Amz-Expires=3600&X-Amz-SignedHeaders=content-length%3Bcontent-type%3Bhost&x-id=PutObject&X-Amz-Signature=83af7c7d668dd115c735195af6f7a7985183b780a2eb6a4bfb77b7fe0e1f4171",
			"https://transcriber-media.storage.yandexcloud.net/jobs/1/input?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKID%2F20250304%2Fru-central1%2Fs3%2Faws4_request&X-Amz-Date=20250304T050607Z&X-Amz-Expires=3600&X-Amz-SignedHeaders=host&x-id=GetObject&X-Amz-Signature=a81d02a3aa9f3ac000c6e7a0eec5fe9b82425d3791289867abc8d3e6f17edead",
		},
		{
			false, "a b/c+d=e/привет~!*'()&$@:,;?#[]%",
			"https://transcriber-media.storage.yandexcloud.net/a%20b/c%2Bd%3De/%D0%BF%D1%80%D0%B8%D0%B2%D0%B5%D1%82~%21%2A%27%28%29%26%24%40%3A%2C%3B%3F%23%5B%5D%25?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKID%2F20250304%2Fru-central1%2Fs3%2Faws4_request&X-Amz-Date=20250304T050607Z&X-Amz-Expires=3600&X-Amz-SignedHeaders=content-length%3Bcontent-type%3Bhost&x-id=PutObject&X-Amz-Signature=bce7fb53d39b55300f04a8a08d0a8413103ce093c68d882fe6eaeadd0691351a",
			"https://transcriber-media.storage.yandexcloud.net/a%20b/c%2Bd%3De/%D0%BF%D1%80%D0%B8%D0%B2%D0%B5%D1%82~%21%2A%27%28%29%26%24%40%3A%2C%3B%3F%23%5B%5D%25?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKID%2F20250304%2Fru-central1%2Fs3%2Faws4_request&X-Amz-Date=20250304T050607Z&X-Amz-Expires=3600&X-Amz-SignedHeaders=host&x-id=GetObject&X-Amz-Signature=2a842d799cd7681c886840c19e4d67de81d37f005a10d4a0f5c5eea0375c6479",
		},
		{
			true, "jobs/1/input",
			"https://storage.yandexcloud.net/transcriber-media/jobs/1/input?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKID%2F20250304%2Fru-central1%2Fs3%2Faws4_request&X-Amz-Date=20250304T050607Z&X-Amz-Expires=3600&X-Amz-SignedHeaders=content-length%3Bcontent-type%3Bhost&x-id=PutObject&X-Amz-Signature=79643a3c557a75cb23323e2141c89d01a4c9eebe61d2157582810776e0231f98",
			"https://storage.yandexcloud.net/transcriber-media/jobs/1/input?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKID%2F20250304%2Fru-central1%2Fs3%2Faws4_request&X-Amz-Date=20250304T050607Z&X-Amz-Expires=3600&X-Amz-SignedHeaders=host&x-id=GetObject&X-Amz-Signature=ea74c6264201097ae856cb24fefd367f1bb3346a1cbe529431b19a342226a36b",
		},
		{
			true, "a b/c+d=e/привет~!*'()&$@:,;?#[]%",
			"https://storage.yandexcloud.net/transcriber-media/a%20b/c%2Bd%3De/%D0%BF%D1%80%D0%B8%D0%B2%D0%B5%D1%82~%21%2A%27%28%29%26%24%40%3A%2C%3B%3F%23%5B%5D%25?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKID%2F20250304%2Fru-central1%2Fs3%2Faws4_request&X-Amz-Date=20250304T050607Z&X-Amz-Expires=3600&X-Amz-SignedHeaders=content-length%3Bcontent-type%3Bhost&x-id=PutObject&X-Amz-Signature=6d71bc2a885d1d6bb000432629733bd461682e035b3b58874253280c94b1d425",
			"https://storage.yandexcloud.net/transcriber-media/a%20b/c%2Bd%3De/%D0%BF%D1%80%D0%B8%D0%B2%D0%B5%D1%82~%21%2A%27%28%29%26%24%40%3A%2C%3B%3F%23%5B%5D%25?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKID%2F20250304%2Fru-central1%2Fs3%2Faws4_request&X-Amz-Date=20250304T050607Z&X-Amz-Expires=3600&X-Amz-SignedHeaders=host&x-id=GetObject&X-Amz-Signature=2cc8594a54f90b89df44ada3f91491dff0c428c95aef153fb0216da515a6b135",
		},
	}
	for _, tc := range cases {
		st, err := s3.New(s3.Config{
			Bucket: "transcriber-media", AccessKeyID: "AKID", SecretAccessKey: "SECRET",
			PathStyle: tc.pathStyle, Clock: clocktest.NewFake(at),
		})
		require.NoError(t, err)
		p, err := st.PresignPut(context.Background(), tc.key, 123, "audio/ogg", time.Hour)
		require.NoError(t, err)
		require.Equal(t, tc.put, p.URL)
		require.Equal(t, map[string]string{"Content-Length": "123", "Content-Type": "audio/ogg"}, p.Headers)
		require.Equal(t, at.Add(time.Hour), p.ExpiresAt)
		u, err := st.PresignGet(context.Background(), tc.key, time.Hour)
		require.NoError(t, err)
		require.Equal(t, tc.get, u)
	}
}
