package s3_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/errs"
	"transcriber/internal/storage/s3"
	"transcriber/internal/storage/s3/s3test"
)

// fakeStore answers every request with status and an S3 error document
// carrying code (none when code is empty), and counts the requests.
func fakeStore(tb testing.TB, status int, code string) (*httptest.Server, *atomic.Int32) {
	tb.Helper()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if code == "" || r.Method == http.MethodHead {
			w.WriteHeader(status)
			return
		}
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>` + code +
			`</Code><Message>details ` + r.URL.Path + `</Message><Resource>` + r.URL.Path + `</Resource><RequestId>1</RequestId></Error>`))
	}))
	tb.Cleanup(srv.Close)
	return srv, &hits
}

func fakeStoreAt(url string, attempts int, client *http.Client) (*s3.Store, error) {
	return s3.Tuned(s3.Config{
		Endpoint: url, Bucket: "secret-bucket", AccessKeyID: "id", SecretAccessKey: "key", PathStyle: true,
	}, 0, 0, attempts, client)
}

// everyOp runs each Store operation that talks to the store on key.
func everyOp(st *s3.Store, key string) map[string]error {
	ctx := context.Background()
	_, head := st.Head(ctx, key)
	_, get := st.Get(ctx, key)
	_, upload := st.Upload(ctx, key, strings.NewReader("x"), "")
	return map[string]error{
		"head":   head,
		"get":    get,
		"put":    st.Put(ctx, key, []byte("x"), ""),
		"upload": upload,
		"delete": st.Delete(ctx, key),
	}
}

func TestStoreFailures(t *testing.T) {
	const key = "jobs/01jsecretkey/input.ogg"

	cases := []struct {
		name   string
		status int
		code   string
		kind   errs.Kind
		want   string
	}{
		{"503 is Unavailable", http.StatusServiceUnavailable, "", errs.Unavailable, "storage_unavailable"},
		{"503 SlowDown is Unavailable", http.StatusServiceUnavailable, "SlowDown", errs.Unavailable, "storage_unavailable"},
		{"500 InternalError is Unavailable", http.StatusInternalServerError, "InternalError", errs.Unavailable, "storage_unavailable"},
		{"429 is Unavailable", http.StatusTooManyRequests, "", errs.Unavailable, "storage_unavailable"},
		{"403 AccessDenied asks for a config fix", http.StatusForbidden, "AccessDenied", errs.Unavailable, "storage_access_denied"},
		{"403 SignatureDoesNotMatch asks for a config fix", http.StatusForbidden, "SignatureDoesNotMatch", errs.Unavailable, "storage_access_denied"},
		{"403 InvalidAccessKeyId asks for a config fix", http.StatusForbidden, "InvalidAccessKeyId", errs.Unavailable, "storage_access_denied"},
		{"400 InvalidArgument is Internal", http.StatusBadRequest, "InvalidArgument", errs.Internal, "storage_failed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := fakeStore(t, tc.status, tc.code)
			st, err := fakeStoreAt(srv.URL, 1, nil)
			require.NoError(t, err)
			for op, err := range everyOp(st, key) {
				if op == "delete" && tc.kind == errs.NotFound {
					continue
				}
				t.Run(op, func(t *testing.T) {
					requireKind(t, err, tc.kind, tc.want, key, "01jsecretkey", "secret-bucket", srv.URL, "127.0.0.1")
				})
			}
		})
	}

	t.Run("503 is retried MaxAttempts times, 3 by default", func(t *testing.T) {
		srv, hits := fakeStore(t, http.StatusServiceUnavailable, "ServiceUnavailable")
		st, err := fakeStoreAt(srv.URL, 0, nil)
		require.NoError(t, err)
		_, err = st.Head(context.Background(), key)
		requireKind(t, err, errs.Unavailable, "storage_unavailable", key)
		require.Equal(t, int32(s3.DefaultMaxAttempts), hits.Load())
		require.Equal(t, 3, s3.DefaultMaxAttempts)
	})

	t.Run("a refused connection is Unavailable", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		srv.Close()
		st, err := fakeStoreAt(srv.URL, 1, nil)
		require.NoError(t, err)
		for op, err := range everyOp(st, key) {
			t.Run(op, func(t *testing.T) {
				requireKind(t, err, errs.Unavailable, "storage_unavailable", key, srv.URL, "127.0.0.1")
			})
		}
	})

	t.Run("a timeout is Unavailable", func(t *testing.T) {
		release := make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			<-release
		}))
		defer srv.Close()
		defer close(release)
		st, err := fakeStoreAt(srv.URL, 1, &http.Client{Timeout: 50 * time.Millisecond})
		require.NoError(t, err)
		_, err = st.Head(context.Background(), key)
		requireKind(t, err, errs.Unavailable, "storage_unavailable", key, srv.URL)
	})

	t.Run("a cancelled context is Unavailable", func(t *testing.T) {
		srv := s3test.Start(t)
		st := mustStore(t, srv)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := st.Get(ctx, key)
		requireKind(t, err, errs.Unavailable, "storage_unavailable", key)
	})

	t.Run("a missing bucket asks for a config fix", func(t *testing.T) {
		srv := s3test.Start(t)
		st := mustStore(t, srv, func(c *storeSpec) { c.Bucket = "no-such-bucket" })
		_, err := st.Get(context.Background(), key)
		requireKind(t, err, errs.Unavailable, "storage_bucket_missing", key, "no-such-bucket")
		err = st.Put(context.Background(), key, []byte("x"), "")
		requireKind(t, err, errs.Unavailable, "storage_bucket_missing", key, "no-such-bucket")
	})

	t.Run("the cause keeps the SDK's error for the logs", func(t *testing.T) {
		srv, _ := fakeStore(t, http.StatusForbidden, "AccessDenied")
		st, err := fakeStoreAt(srv.URL, 1, nil)
		require.NoError(t, err)
		_, err = st.Get(context.Background(), key)
		require.Contains(t, err.Error(), "s3 get:")
		require.Contains(t, err.Error(), "AccessDenied")
	})
}
