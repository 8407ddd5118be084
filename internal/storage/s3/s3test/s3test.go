// Package s3test runs an S3 server in the test's process: gofakes3 with its
// in-memory backend, over plain HTTP, with one bucket. The real SDK talks to
// it through s3.Store, so tests exercise real requests, multipart uploads
// and presigned URLs without a cloud.
//
// gofakes3 checks no signatures and no expiry: a test that cares about a
// presigned URL's signed headers or lifetime must read the URL itself. It
// answers a Range GET with 200, a correct Content-Range and the right bytes
// (S3 answers 206).
//
// OnCreate stands in for Object Storage's ObjectCreate trigger: the local
// stack and the end-to-end tests use it to start ingest when an upload lands.
//
// It answers browsers as a bucket with an open CORS rule does: a preflight
// from any origin is allowed, and every response to a request with an
// Origin carries Access-Control-Allow-Origin and exposes ETag, so a page
// served from another origin (the API's upload page) can PUT to a
// presigned URL.
package s3test

import (
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3afero"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/spf13/afero"

	"transcriber/internal/storage/s3"
)

// DefaultBucket is the bucket Start creates.
const DefaultBucket = "transcriber-test"

// Server is a running in-process S3 server with one bucket.
type Server struct {
	URL    string // http://127.0.0.1:port, the endpoint
	Bucket string

	backend gofakes3.Backend
	handler http.Handler

	mu    sync.Mutex
	hooks []func(bucket, key string, size int64)
}

// Start runs a server with the bucket DefaultBucket until the test ends.
func Start(tb testing.TB) *Server {
	tb.Helper()
	s, err := New(DefaultBucket)
	if err != nil {
		tb.Fatalf("s3test: %v", err)
	}
	srv := httptest.NewServer(s.handler)
	tb.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

// New returns a server with an empty bucket (DefaultBucket if bucket is
// empty) that is not listening yet, for a caller that serves Handler itself
// (the local stack): it sets URL to where it serves it.
func New(bucket string) (*Server, error) {
	return newServer(bucket, s3mem.New())
}

// NewOnDisk is New with the objects kept as files under dir (dir/<bucket>/
// <key>, with gofakes3's metadata beside them), so they outlive the
// process: the local stack's store. An existing bucket is reused.
func NewOnDisk(bucket, dir string) (*Server, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("object directory: %w", err)
	}
	backend, err := s3afero.MultiBucket(afero.NewBasePathFs(afero.NewOsFs(), dir))
	if err != nil {
		return nil, fmt.Errorf("object directory %s: %w", dir, err)
	}
	return newServer(bucket, backend)
}

func newServer(bucket string, backend gofakes3.Backend) (*Server, error) {
	if bucket == "" {
		bucket = DefaultBucket
	}
	s := &Server{Bucket: bucket, backend: backend}
	exists, err := backend.BucketExists(bucket)
	if err != nil {
		return nil, fmt.Errorf("bucket %q: %w", bucket, err)
	}
	if !exists {
		if err := backend.CreateBucket(bucket); err != nil {
			return nil, fmt.Errorf("create bucket %q: %w", bucket, err)
		}
	}
	s.handler = withCORS(s.watch(gofakes3.New(backend).Server()))
	return s, nil
}

// Config returns a Store config for this server: path-style addressing,
// dummy keys (no signature is checked), the server's URL as the endpoint.
func (s *Server) Config() s3.Config {
	return s3.Config{
		Endpoint:        s.URL,
		Region:          s3.DefaultRegion,
		Bucket:          s.Bucket,
		AccessKeyID:     "s3test-key-id",
		SecretAccessKey: "s3test-secret",
		PathStyle:       true,
	}
}

// Handler is the S3 protocol handler, OnCreate hooks included, for serving
// elsewhere or wrapping (a test that records the requests the SDK sends).
func (s *Server) Handler() http.Handler { return s.handler }

// OnCreate registers fn to run once for every object created: after a PUT
// of an object (a copy included) or a CompleteMultipartUpload has succeeded;
// never for a part, an initiation, an abort or a failed request. size is the
// stored object's size. Hooks run in the order registered, in the request's
// goroutine, after the handler has finished and before the client sees the
// end of the response: when the client's upload returns, its hooks have run.
// A hook that does slow work, or calls back into this server and waits for
// more than that request, should start a goroutine.
func (s *Server) OnCreate(fn func(bucket, key string, size int64)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hooks = append(s.hooks, fn)
}

// Object returns the bytes stored under key in Bucket, failing the test if
// there are none.
func (s *Server) Object(tb testing.TB, key string) []byte {
	tb.Helper()
	obj, err := s.backend.GetObject(s.Bucket, key, nil)
	if err != nil {
		tb.Fatalf("s3test: object %q: %v", key, err)
	}
	defer obj.Contents.Close()
	b, err := io.ReadAll(obj.Contents)
	if err != nil {
		tb.Fatalf("s3test: read object %q: %v", key, err)
	}
	return b
}

// Keys lists the keys under prefix in Bucket, in key order.
func (s *Server) Keys(prefix string) ([]string, error) {
	var keys []string
	page := gofakes3.ListBucketPage{}
	for {
		list, err := s.backend.ListBucket(s.Bucket, &gofakes3.Prefix{HasPrefix: true, Prefix: prefix}, page)
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", prefix, err)
		}
		for _, c := range list.Contents {
			keys = append(keys, c.Key)
		}
		if !list.IsTruncated || list.NextMarker == "" {
			return keys, nil
		}
		page = gofakes3.ListBucketPage{Marker: list.NextMarker, HasMarker: true}
	}
}

// Has reports whether key exists in Bucket.
func (s *Server) Has(key string) bool {
	obj, err := s.backend.HeadObject(s.Bucket, key)
	if err != nil {
		return false
	}
	_ = obj.Contents.Close()
	return true
}

// PendingUploads returns how many multipart uploads in Bucket were started
// and neither completed nor aborted, failing the test if it cannot tell.
func (s *Server) PendingUploads(tb testing.TB) int {
	tb.Helper()
	rec := httptest.NewRecorder()
	s.handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/"+s.Bucket+"?uploads", nil))
	body := rec.Body.String()
	if rec.Code == http.StatusNotFound && strings.Contains(body, "NoSuchUpload") {
		return 0 // gofakes3's answer for a bucket that never had one
	}
	if rec.Code != http.StatusOK {
		tb.Fatalf("s3test: list multipart uploads: status %d: %s", rec.Code, body)
	}
	var list struct {
		Uploads []struct {
			UploadID string `xml:"UploadId"`
		} `xml:"Upload"`
	}
	if err := xml.Unmarshal(rec.Body.Bytes(), &list); err != nil {
		tb.Fatalf("s3test: list multipart uploads: %v", err)
	}
	return len(list.Uploads)
}

// withCORS answers a CORS preflight itself and lets any origin read any
// response, as a bucket whose CORS rule allows every origin, method and
// header does. (gofakes3 answers a preflight, but sets no
// Access-Control-Allow-Origin on the request that follows, so a browser
// would refuse the answer to its PUT.)
func withCORS(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if origin == "" {
			next.ServeHTTP(w, r)
			return
		}
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", origin)
		h.Add("Vary", "Origin")
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			h.Set("Access-Control-Allow-Methods", "GET, HEAD, PUT, POST, DELETE")
			if hdr := r.Header.Get("Access-Control-Request-Headers"); hdr != "" {
				h.Set("Access-Control-Allow-Headers", hdr)
			}
			h.Set("Access-Control-Max-Age", "600")
			h.Add("Vary", "Access-Control-Request-Method")
			h.Add("Vary", "Access-Control-Request-Headers")
			w.WriteHeader(http.StatusOK)
			return
		}
		h.Set("Access-Control-Expose-Headers", "ETag")
		next.ServeHTTP(w, r)
	})
}

// watch wraps the S3 handler to call the OnCreate hooks.
func (s *Server) watch(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		bucket, key, creates := createsObject(r)
		if !creates {
			next.ServeHTTP(w, r)
			return
		}
		rec := &statusRecorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		if rec.status() < 200 || rec.status() > 299 {
			return
		}
		obj, err := s.backend.HeadObject(bucket, key)
		if err != nil {
			return // gone already: deleted by a concurrent request
		}
		_ = obj.Contents.Close()
		s.mu.Lock()
		hooks := append([]func(string, string, int64){}, s.hooks...)
		s.mu.Unlock()
		for _, fn := range hooks {
			fn(bucket, key, obj.Size)
		}
	})
}

// createsObject tells whether r, if it succeeds, creates an object, routing
// the way gofakes3 does (path-style /bucket/key, the sub-resource in the
// query): PUT /bucket/key with no sub-resource (a part carries uploadId),
// or POST /bucket/key?uploadId=… (CompleteMultipartUpload).
func createsObject(r *http.Request) (bucket, key string, ok bool) {
	bucket, key, _ = strings.Cut(strings.Trim(r.URL.Path, "/"), "/")
	if bucket == "" || key == "" {
		return "", "", false
	}
	q := r.URL.Query()
	switch {
	case q.Get("uploadId") != "":
		return bucket, key, r.Method == http.MethodPost
	case q.Has("uploads"), q.Has("versioning"), q.Has("versions"), versioned(q["versionId"]):
		return "", "", false
	default:
		return bucket, key, r.Method == http.MethodPut
	}
}

// versioned mirrors gofakes3, which ignores an empty or "null" versionId.
func versioned(ids []string) bool { return len(ids) > 0 && ids[0] != "" && ids[0] != "null" }

// statusRecorder remembers the status the handler wrote.
type statusRecorder struct {
	http.ResponseWriter
	code int
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.code == 0 {
		r.code = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.code == 0 {
		r.code = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

func (r *statusRecorder) status() int {
	if r.code == 0 {
		return http.StatusOK
	}
	return r.code
}

// Unwrap lets http.ResponseController reach the real writer.
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
