package s3

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/errs"
)

// copyRecorder keeps the copy requests it received and answers each with
// answer.
type copyRecorder struct {
	answer func(w http.ResponseWriter)

	mu   sync.Mutex
	reqs []*http.Request
}

func (c *copyRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	c.mu.Lock()
	c.reqs = append(c.reqs, r)
	c.mu.Unlock()
	c.answer(w)
}

func copyResult(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/xml")
	_, _ = io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><CopyObjectResult><ETag>"abc"</ETag></CopyObjectResult>`)
}

func TestCopySendsTheSourceAndItsETag(t *testing.T) {
	rec := &copyRecorder{answer: copyResult}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	st, _ := testStore(t, srv.URL, 1)

	require.NoError(t, st.Copy(context.Background(), "sources/a b", "audio/x/source", `"etag-1"`))
	require.Len(t, rec.reqs, 1)
	r := rec.reqs[0]
	require.Equal(t, http.MethodPut, r.Method)
	require.Equal(t, "/secret-bucket/audio/x/source", r.URL.Path)
	require.Equal(t, "/secret-bucket/sources/a%20b", r.Header.Get("X-Amz-Copy-Source"))
	require.Equal(t, `"etag-1"`, r.Header.Get("X-Amz-Copy-Source-If-Match"))
	require.Contains(t, r.Header.Get("Authorization"), "x-amz-copy-source;x-amz-copy-source-if-match",
		"the source and its precondition are signed")
}

func TestCopyWithoutETagSetsNoPrecondition(t *testing.T) {
	rec := &copyRecorder{answer: copyResult}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	st, _ := testStore(t, srv.URL, 1)

	require.NoError(t, st.Copy(context.Background(), "a", "b", ""))
	require.Empty(t, rec.reqs[0].Header.Values("X-Amz-Copy-Source-If-Match"))
}

func TestCopyFailures(t *testing.T) {
	cases := []struct {
		name   string
		answer func(w http.ResponseWriter)
		kind   errs.Kind
		code   string
	}{
		{"412 PreconditionFailed: the source changed", answer(http.StatusPreconditionFailed, "PreconditionFailed"), errs.Unavailable, CodeChanged},
		{"412 without a body", answer(http.StatusPreconditionFailed, ""), errs.Unavailable, CodeChanged},
		{"404 NoSuchKey: no source", answer(http.StatusNotFound, "NoSuchKey"), errs.NotFound, "object_not_found"},
		{"200 with an error document", func(w http.ResponseWriter) {
			w.WriteHeader(http.StatusOK)
			_, _ = io.WriteString(w, `<Error><Code>InternalError</Code><Message>copy broke</Message></Error>`)
		}, errs.Unavailable, codeUnavailable},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(&copyRecorder{answer: tc.answer})
			defer srv.Close()
			st, _ := testStore(t, srv.URL, 1)
			err := st.Copy(context.Background(), "sources/x", "audio/x/source", `"e"`)
			requireKindCode(t, err, tc.kind, tc.code)
		})
	}
}

func TestHeadReturnsTheETag(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("ETag", `"d41d8cd9"`)
		w.Header().Set("Content-Length", "7")
	}))
	defer srv.Close()
	st, _ := testStore(t, srv.URL, 1)
	info, err := st.Head(context.Background(), "k")
	require.NoError(t, err)
	require.Equal(t, `"d41d8cd9"`, info.ETag)
}

// Origin is the scheme and host of the URLs the store presigns, path-style
// or virtual-hosted.
func TestOriginIsThePresignedURLsOrigin(t *testing.T) {
	for _, pathStyle := range []bool{true, false} {
		st, err := New(Config{Endpoint: "https://storage.example:8443", Bucket: "media-bucket", AccessKeyID: "AKID",
			SecretAccessKey: testSecret, PathStyle: pathStyle})
		require.NoError(t, err)
		u, err := st.PresignGet(context.Background(), "sources/x", time.Minute)
		require.NoError(t, err)
		require.True(t, strings.HasPrefix(u, st.Origin()+"/"), "%s under %s", u, st.Origin())
	}
}
