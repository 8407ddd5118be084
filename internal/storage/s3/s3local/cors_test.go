package s3local_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/storage/s3"
	"transcriber/internal/storage/s3/s3local"
	"transcriber/internal/storage/s3/s3test"
)

// A page on another origin PUTs to a presigned URL as a browser does: a
// preflight first, then the PUT, whose answer it may read (ETag included).
// Both the in-memory and the on-disk server answer so.
func TestBrowserUploadFromAnotherOrigin(t *testing.T) {
	const origin = "http://127.0.0.1:8080"
	srv := s3test.Start(t)
	store, err := s3.New(srv.Config())
	require.NoError(t, err)
	created := record(srv)
	ctx := context.Background()
	put, err := store.PresignPut(ctx, "sources/page", 5, "audio/ogg", time.Minute)
	require.NoError(t, err)

	req, err := http.NewRequestWithContext(ctx, http.MethodOptions, put.URL, nil)
	require.NoError(t, err)
	req.Header.Set("Origin", origin)
	req.Header.Set("Access-Control-Request-Method", http.MethodPut)
	req.Header.Set("Access-Control-Request-Headers", "content-type")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, origin, resp.Header.Get("Access-Control-Allow-Origin"))
	require.Contains(t, resp.Header.Get("Access-Control-Allow-Methods"), http.MethodPut)
	require.Equal(t, "content-type", resp.Header.Get("Access-Control-Allow-Headers"))
	require.Empty(t, created(), "a preflight creates nothing")
	require.False(t, srv.Has("sources/page"))

	req, err = http.NewRequestWithContext(ctx, put.Method, put.URL, strings.NewReader("hello"))
	require.NoError(t, err)
	req.Header.Set("Origin", origin)
	for k, v := range put.Headers {
		req.Header.Set(k, v)
	}
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, origin, resp.Header.Get("Access-Control-Allow-Origin"))
	require.Equal(t, "ETag", resp.Header.Get("Access-Control-Expose-Headers"))
	require.NotEmpty(t, resp.Header.Get("ETag"))
	require.Equal(t, []byte("hello"), srv.Object(t, "sources/page"))
	require.Len(t, created(), 1, "the PUT still makes its event")

	// Without an Origin nothing changes: the SDK's requests get no CORS
	// headers.
	status, _ := do(t, http.MethodGet, srv.URL+"/"+srv.Bucket+"/sources/page", nil, nil)
	require.Equal(t, http.StatusOK, status)
	req, err = http.NewRequestWithContext(ctx, http.MethodHead, srv.URL+"/"+srv.Bucket+"/sources/page", nil)
	require.NoError(t, err)
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Empty(t, resp.Header.Get("Access-Control-Allow-Origin"))
}

// The on-disk server allows only its listed origins, and only the methods
// a page uploads and reads with.
func TestOnDiskServerAnswersPreflights(t *testing.T) {
	v := testKey()
	v.AllowedOrigins = []string{"http://localhost:8080", "https://app.example/"}
	v.Dir = t.TempDir()
	srv, err := s3local.New("local", v)
	require.NoError(t, err)
	preflight := func(origin, method string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodOptions, "/local/sources/x", nil)
		req.Header.Set("Origin", origin)
		req.Header.Set("Access-Control-Request-Method", method)
		req.Header.Set("Access-Control-Request-Headers", "content-type")
		rec := httptest.NewRecorder()
		srv.Handler().ServeHTTP(rec, req)
		return rec
	}
	for _, origin := range []string{"http://localhost:8080", "https://app.example"} {
		rec := preflight(origin, http.MethodPut)
		require.Equal(t, http.StatusOK, rec.Code, origin)
		require.Equal(t, origin, rec.Header().Get("Access-Control-Allow-Origin"))
		require.Equal(t, "GET, HEAD, PUT", rec.Header().Get("Access-Control-Allow-Methods"))
		require.Equal(t, "content-type", rec.Header().Get("Access-Control-Allow-Headers"))
	}
	for _, tc := range []struct{ origin, method string }{
		{"https://evil.example", http.MethodPut},
		{"http://localhost:8081", http.MethodGet},
		{"http://localhost:8080", http.MethodDelete},
		{"http://localhost:8080", http.MethodPost},
	} {
		rec := preflight(tc.origin, tc.method)
		require.Equal(t, http.StatusForbidden, rec.Code, "%+v", tc)
		require.Equal(t, "application/xml", rec.Header().Get("Content-Type"))
		require.Contains(t, rec.Body.String(), "<Code>AccessForbidden</Code>")
		require.Empty(t, rec.Header().Get("Access-Control-Allow-Origin"), "%+v", tc)
		require.Empty(t, rec.Header().Get("Access-Control-Allow-Methods"), "%+v", tc)
	}
}
