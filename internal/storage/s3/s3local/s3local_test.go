package s3local_test

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"transcriber/internal/storage/s3"
	"transcriber/internal/storage/s3/s3local"
	"transcriber/internal/storage/s3/s3test"
)

type event struct {
	Bucket, Key string
	Size        int64
}

func record(srv interface {
	OnCreate(func(bucket, key string, size int64))
}) func() []event {
	var mu sync.Mutex
	var got []event
	srv.OnCreate(func(bucket, key string, size int64) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, event{bucket, key, size})
	})
	return func() []event {
		mu.Lock()
		defer mu.Unlock()
		return append([]event(nil), got...)
	}
}

// do sends a raw S3 request (gofakes3 checks no signature) and returns the
// status and body.
func do(tb testing.TB, method, url string, body []byte, header map[string]string) (int, []byte) {
	tb.Helper()
	req, err := http.NewRequestWithContext(context.Background(), method, url, bytes.NewReader(body))
	require.NoError(tb, err)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(tb, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(tb, err)
	return resp.StatusCode, b
}

func initiate(tb testing.TB, srv *s3test.Server, key string) string {
	tb.Helper()
	status, body := do(tb, http.MethodPost, srv.URL+"/"+srv.Bucket+"/"+key+"?uploads", nil, nil)
	require.Equal(tb, http.StatusOK, status, string(body))
	var out struct {
		UploadID string `xml:"UploadId"`
	}
	require.NoError(tb, xml.Unmarshal(body, &out))
	require.NotEmpty(tb, out.UploadID)
	return out.UploadID
}

func TestOnCreate(t *testing.T) {
	srv := s3test.Start(t)
	created := record(srv)
	var second atomic.Int32
	srv.OnCreate(func(string, string, int64) { second.Add(1) })
	obj := srv.URL + "/" + srv.Bucket + "/"

	t.Run("a PUT creates once", func(t *testing.T) {
		status, body := do(t, http.MethodPut, obj+"jobs/a", []byte("hello"), nil)
		require.Equal(t, http.StatusOK, status, string(body))
		require.Equal(t, []event{{srv.Bucket, "jobs/a", 5}}, created())
		require.Equal(t, int32(1), second.Load(), "every hook runs")
		require.Equal(t, []byte("hello"), srv.Object(t, "jobs/a"))
	})

	t.Run("a multipart upload creates once, on completion", func(t *testing.T) {
		id := initiate(t, srv, "jobs/b")
		part1 := bytes.Repeat([]byte{1}, 5<<20)
		for n, part := range [][]byte{part1, []byte("tail")} {
			status, body := do(t, http.MethodPut, obj+"jobs/b?partNumber="+strconv.Itoa(n+1)+"&uploadId="+id, part, nil)
			require.Equal(t, http.StatusOK, status, string(body))
		}
		require.Len(t, created(), 1, "no event for the initiation or the parts")
		require.Equal(t, 1, srv.PendingUploads(t))

		complete := `<CompleteMultipartUpload>` +
			`<Part><PartNumber>1</PartNumber><ETag>` + etag(t, srv, "jobs/b", id, 1) + `</ETag></Part>` +
			`<Part><PartNumber>2</PartNumber><ETag>` + etag(t, srv, "jobs/b", id, 2) + `</ETag></Part>` +
			`</CompleteMultipartUpload>`
		status, body := do(t, http.MethodPost, obj+"jobs/b?uploadId="+id, []byte(complete), nil)
		require.Equal(t, http.StatusOK, status, string(body))
		require.Equal(t, event{srv.Bucket, "jobs/b", 5<<20 + 4}, created()[1])
		require.Len(t, created(), 2)
		require.Zero(t, srv.PendingUploads(t))
	})

	t.Run("an aborted multipart upload creates nothing", func(t *testing.T) {
		id := initiate(t, srv, "jobs/c")
		status, _ := do(t, http.MethodPut, obj+"jobs/c?partNumber=1&uploadId="+id, []byte("part"), nil)
		require.Equal(t, http.StatusOK, status)
		status, _ = do(t, http.MethodDelete, obj+"jobs/c?uploadId="+id, nil, nil)
		require.Equal(t, http.StatusNoContent, status)
		require.Len(t, created(), 2)
		require.False(t, srv.Has("jobs/c"))
	})

	t.Run("failed requests create nothing", func(t *testing.T) {
		status, _ := do(t, http.MethodPut, srv.URL+"/no-such-bucket/jobs/d", []byte("x"), nil)
		require.Equal(t, http.StatusNotFound, status)
		status, _ = do(t, http.MethodPut, obj+"jobs/e", []byte("x"), map[string]string{"Content-MD5": "AAAAAAAAAAAAAAAAAAAAAA=="})
		require.Equal(t, http.StatusBadRequest, status)
		status, _ = do(t, http.MethodPost, obj+"jobs/f?uploadId=nope", []byte(`<CompleteMultipartUpload></CompleteMultipartUpload>`), nil)
		require.Equal(t, http.StatusNotFound, status)
		require.Len(t, created(), 2)
	})

	t.Run("reads and deletes create nothing", func(t *testing.T) {
		status, _ := do(t, http.MethodGet, obj+"jobs/a", nil, nil)
		require.Equal(t, http.StatusOK, status)
		status, _ = do(t, http.MethodHead, obj+"jobs/a", nil, nil)
		require.Equal(t, http.StatusOK, status)
		status, _ = do(t, http.MethodDelete, obj+"jobs/a", nil, nil)
		require.Equal(t, http.StatusNoContent, status)
		require.Len(t, created(), 2)
	})
}

// etag lists the upload's parts and returns part n's ETag.
func etag(tb testing.TB, srv *s3test.Server, key, id string, n int) string {
	tb.Helper()
	status, body := do(tb, http.MethodGet, srv.URL+"/"+srv.Bucket+"/"+key+"?uploadId="+id, nil, nil)
	require.Equal(tb, http.StatusOK, status, string(body))
	var out struct {
		Parts []struct {
			PartNumber int    `xml:"PartNumber"`
			ETag       string `xml:"ETag"`
		} `xml:"Part"`
	}
	require.NoError(tb, xml.Unmarshal(body, &out))
	for _, p := range out.Parts {
		if p.PartNumber == n {
			return p.ETag
		}
	}
	tb.Fatalf("part %d not listed: %s", n, body)
	return ""
}

func TestStoreOnServer(t *testing.T) {
	srv := s3test.Start(t)
	created := record(srv)
	cfg := srv.Config()
	require.True(t, cfg.PathStyle)
	require.Equal(t, srv.URL, cfg.Endpoint)
	require.Equal(t, s3test.DefaultBucket, cfg.Bucket)

	st, err := s3.New(cfg)
	require.NoError(t, err)
	data := bytes.Repeat([]byte("0123456789"), 10_000) // one PUT; the s3 tests cover multipart
	n, err := st.Upload(context.Background(), "jobs/x", io.MultiReader(bytes.NewReader(data)), "")
	require.NoError(t, err)
	require.Equal(t, int64(len(data)), n)
	require.Equal(t, []event{{srv.Bucket, "jobs/x", int64(len(data))}}, created())
	require.Equal(t, data, srv.Object(t, "jobs/x"))
}

func TestNew(t *testing.T) {
	srv, err := s3local.New("local-media", testKey())
	require.NoError(t, err)
	require.Equal(t, "local-media", srv.Config().Bucket)
	keys, err := srv.Keys("")
	require.NoError(t, err, "the bucket exists")
	require.Empty(t, keys)
}

// testKey is a verifying server's key in tests.
func testKey() s3local.Options {
	return s3local.Options{AccessKeyID: "test-key-id", SecretAccessKey: "test-secret-access-key"}
}

// brokenWriter is a client gone mid-answer: every Write fails. It notes
// what net/http would log as a superfluous WriteHeader: one after the
// answer began.
type brokenWriter struct {
	header      http.Header
	began       bool
	superfluous int
}

func (w *brokenWriter) Header() http.Header { return w.header }

func (w *brokenWriter) WriteHeader(int) {
	if w.began {
		w.superfluous++
	}
	w.began = true
}

func (w *brokenWriter) Write([]byte) (int, error) {
	w.began = true
	return 0, errors.New("connection reset by peer")
}

// A GET whose client goes away mid-body gets no second answer (gofakes3
// writes an error answer after the failed body).
func TestNoSecondAnswer(t *testing.T) {
	srv := s3test.Start(t)
	status, _ := do(t, http.MethodPut, srv.URL+"/"+srv.Bucket+"/results/a.json", bytes.Repeat([]byte("x"), 1<<16), nil)
	require.Equal(t, http.StatusOK, status)
	w := &brokenWriter{header: http.Header{}}
	srv.Handler().ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/"+srv.Bucket+"/results/a.json", nil))
	require.True(t, w.began)
	require.Zero(t, w.superfluous)
}
