package s3_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/clock"
	"transcriber/internal/clock/clocktest"
	"transcriber/internal/errs"
	"transcriber/internal/storage/s3"
	"transcriber/internal/storage/s3/s3test"
)

// signedAt is the fake clock's time: whole seconds, far from the real now,
// so a URL signed with the SDK's own clock would show.
var signedAt = time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)

func withClock(c clock.Clock) func(*storeSpec) { return func(cfg *storeSpec) { cfg.Clock = c } }

func mustQuery(tb testing.TB, rawURL string) url.Values {
	tb.Helper()
	u, err := url.Parse(rawURL)
	require.NoError(tb, err)
	return u.Query()
}

func TestPresignPut(t *testing.T) {
	srv := s3test.Start(t)
	created := recordCreates(srv)
	st := mustStore(t, srv, withClock(clocktest.NewFake(signedAt)))
	ctx := context.Background()
	body := genBytes(t, 70_001)
	const ttl = 15 * time.Minute

	p, err := st.PresignPut(ctx, "jobs/1/input", int64(len(body)), "audio/ogg", ttl)
	require.NoError(t, err)

	t.Run("the URL signs length and type for the ttl at the clock's time", func(t *testing.T) {
		require.Equal(t, http.MethodPut, p.Method)
		require.True(t, strings.HasPrefix(p.URL, srv.URL+"/"+srv.Bucket+"/jobs/1/input?"), p.URL)
		q := mustQuery(t, p.URL)
		require.Equal(t, "900", q.Get("X-Amz-Expires"))
		require.Equal(t, "20250304T050607Z", q.Get("X-Amz-Date"))
		require.Equal(t, "AWS4-HMAC-SHA256", q.Get("X-Amz-Algorithm"))
		require.Contains(t, q.Get("X-Amz-Credential"), "/ru-central1/s3/aws4_request")
		require.Equal(t, []string{"content-length", "content-type", "host"}, strings.Split(q.Get("X-Amz-SignedHeaders"), ";"))
		for name := range q {
			require.NotContains(t, strings.ToLower(name), "checksum", "no checksum in a presigned URL")
		}
	})

	t.Run("headers list what the client must send, Host aside", func(t *testing.T) {
		require.Equal(t, map[string]string{
			"Content-Length": strconv.Itoa(len(body)),
			"Content-Type":   "audio/ogg",
		}, p.Headers)
	})

	t.Run("expires at the clock's now plus ttl", func(t *testing.T) {
		require.Equal(t, signedAt.Add(ttl), p.ExpiresAt)
	})

	t.Run("a plain HTTP client uploads with it", func(t *testing.T) {
		req, err := http.NewRequestWithContext(ctx, p.Method, p.URL, bytes.NewReader(body))
		require.NoError(t, err)
		for name, value := range p.Headers {
			if name == "Content-Length" {
				req.ContentLength, err = strconv.ParseInt(value, 10, 64)
				require.NoError(t, err)
				continue
			}
			req.Header.Set(name, value)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		require.Equal(t, http.StatusOK, resp.StatusCode)

		info, err := st.Head(ctx, "jobs/1/input")
		require.NoError(t, err)
		require.NotEmpty(t, info.ETag, "the store names the content")
		info.ETag = ""
		require.Equal(t, s3.ObjectInfo{Size: int64(len(body)), ContentType: "audio/ogg"}, info)
		require.Equal(t, body, srv.Object(t, "jobs/1/input"))
		require.Equal(t, []createdEvent{{srv.Bucket, "jobs/1/input", int64(len(body))}}, created())
	})

	t.Run("without a content type only the length is signed", func(t *testing.T) {
		p, err := st.PresignPut(ctx, "jobs/2/input", 10, "", time.Hour)
		require.NoError(t, err)
		q := mustQuery(t, p.URL)
		require.Equal(t, "content-length;host", q.Get("X-Amz-SignedHeaders"))
		require.Equal(t, "3600", q.Get("X-Amz-Expires"))
		require.Equal(t, map[string]string{"Content-Length": "10"}, p.Headers)
	})

	t.Run("a sub-second clock is cut to the second SigV4 keeps", func(t *testing.T) {
		st := mustStore(t, srv, withClock(clocktest.NewFake(signedAt.Add(700*time.Millisecond))))
		p, err := st.PresignPut(ctx, "jobs/3/input", 1, "", 90*time.Second+400*time.Millisecond)
		require.NoError(t, err)
		require.Equal(t, "20250304T050607Z", mustQuery(t, p.URL).Get("X-Amz-Date"))
		require.Equal(t, "90", mustQuery(t, p.URL).Get("X-Amz-Expires"))
		require.Equal(t, signedAt.Add(90*time.Second), p.ExpiresAt)
	})
}

func TestPresignLimits(t *testing.T) {
	srv := s3test.Start(t)
	st := mustStore(t, srv)
	ctx := context.Background()

	t.Run("more than one PUT may carry is Invalid", func(t *testing.T) {
		_, err := st.PresignPut(ctx, "k", s3.MaxPutSize+1, "", time.Minute)
		requireKind(t, err, errs.Invalid, "object_too_large")
	})
	t.Run("exactly 5 GiB is fine", func(t *testing.T) {
		_, err := st.PresignPut(ctx, "k", s3.MaxPutSize, "", time.Minute)
		require.NoError(t, err)
	})
	for name, ttl := range map[string]time.Duration{"zero": 0, "under a second": time.Millisecond, "over 7 days": s3.MaxPresignTTL + time.Second} {
		t.Run("a ttl of "+name+" is a bug", func(t *testing.T) {
			_, err := st.PresignPut(ctx, "k", 1, "", ttl)
			requireKind(t, err, errs.Internal, "storage_failed")
			_, err = st.PresignGet(ctx, "k", ttl)
			requireKind(t, err, errs.Internal, "storage_failed")
		})
	}
	t.Run("an empty file is Invalid: a zero length would go unsigned", func(t *testing.T) {
		_, err := st.PresignPut(ctx, "k", 0, "", time.Minute)
		requireKind(t, err, errs.Invalid, "empty_file")
	})
	t.Run("a negative size is a bug", func(t *testing.T) {
		_, err := st.PresignPut(ctx, "k", -1, "", time.Minute)
		requireKind(t, err, errs.Internal, "storage_failed")
	})
}

func TestPresignGet(t *testing.T) {
	srv := s3test.Start(t)
	st := mustStore(t, srv, withClock(clocktest.NewFake(signedAt)))
	ctx := context.Background()
	body := genBytes(t, 4096)
	require.NoError(t, st.Put(ctx, "jobs/1/result.txt", body, "text/plain"))

	u, err := st.PresignGet(ctx, "jobs/1/result.txt", 10*time.Minute)
	require.NoError(t, err)

	t.Run("the URL carries the ttl and the clock's time", func(t *testing.T) {
		q := mustQuery(t, u)
		require.Equal(t, "600", q.Get("X-Amz-Expires"))
		require.Equal(t, "20250304T050607Z", q.Get("X-Amz-Date"))
		require.Equal(t, "host", q.Get("X-Amz-SignedHeaders"))
	})

	t.Run("a plain GET fetches the bytes", func(t *testing.T) {
		resp := get(t, u, "")
		require.Equal(t, http.StatusOK, resp.status)
		require.Equal(t, body, resp.body)
	})

	t.Run("a Range GET fetches the range", func(t *testing.T) {
		resp := get(t, u, "bytes=100-199")
		// S3 answers 206; gofakes3 answers 200 with the right range.
		require.Contains(t, []int{http.StatusOK, http.StatusPartialContent}, resp.status)
		require.Equal(t, "bytes 100-199/4096", resp.contentRange)
		require.Equal(t, body[100:200], resp.body)
	})
}

type fetched struct {
	status       int
	contentRange string
	body         []byte
}

func get(tb testing.TB, rawURL, rng string) fetched {
	tb.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, rawURL, nil)
	require.NoError(tb, err)
	if rng != "" {
		req.Header.Set("Range", rng)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(tb, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(tb, err)
	return fetched{resp.StatusCode, resp.Header.Get("Content-Range"), b}
}
