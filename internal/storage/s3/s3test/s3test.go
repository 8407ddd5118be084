// Package s3test runs an S3 server in the test's process: gofakes3 over
// plain HTTP, with one bucket, its objects in memory (New, Start) or as files
// on disk (NewOnDisk, the local stack's store). The project's client talks to
// it through s3.Store, so tests exercise real requests, multipart uploads
// and presigned URLs without a cloud.
//
// Strictness is chosen by the constructor, never by default:
//
//   - New and Start are lenient: they check no signature and no expiry, and
//     answer browsers as a bucket with an open CORS rule does (a preflight
//     from any origin is allowed, every response to a request with an Origin
//     carries Access-Control-Allow-Origin and exposes ETag). A test that
//     cares about a presigned URL's signed headers or lifetime must read the
//     URL itself, or use a verifying server.
//   - NewOnDisk and StartVerifying verify every request as Object Storage
//     does, with the key in their Verify: AWS Signature Version 4 in the
//     Authorization header (X-Amz-Date within MaxClockSkew of the server's
//     clock, X-Amz-Content-Sha256 signed and, unless UNSIGNED-PAYLOAD,
//     checked against the body) or in a presigned URL's query (X-Amz-Expires
//     at most MaxPresignExpires, refused once expired). The signature is
//     recomputed with the AWS SDK's signer over the request as received,
//     restricted to its signed headers (host must be one; a signed
//     Content-Length or Content-Type is the one the request carries), and
//     compared in constant time. The credential must name the key id and a
//     scope of the signing day, Verify.Region and s3. Anything else is
//     refused with S3's XML error: 403 AccessDenied for an unsigned request,
//     an expired URL ("Request has expired") or one dated more than
//     MaxClockSkew ahead ("Request is not yet valid"), SignatureDoesNotMatch,
//     InvalidAccessKeyId, RequestTimeTooSkewed for a header-signed request
//     more than MaxClockSkew off; 400 AuthorizationQueryParametersError or
//     AuthorizationHeaderMalformed for a malformed signature (the full list:
//     docs/configuration.md, TestEveryRefusalIsDocumented).
//     Only Verify.AllowedOrigins get CORS headers, for GET, HEAD and PUT;
//     a preflight from another origin, or for another method, is refused
//     with 403.
//
// Both answer a copy (PUT with x-amz-copy-source) whose
// x-amz-copy-source-if-match names another ETag than the source's with 412
// PreconditionFailed, as S3 does (gofakes3 alone ignores it). Both answer a
// Range GET with 200, a correct Content-Range and the right bytes (S3
// answers 206).
//
// OnCreate stands in for Object Storage's ObjectCreate trigger: the local
// stack and the end-to-end tests use it to start ingest when an object is
// created (a copy included).
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

// The keys Config gives the lenient server's clients. The lenient server
// checks neither; a verifying server (Verify) is given its own. Log scans
// look for SecretAccessKey.
const (
	AccessKeyID     = "s3test-key-id"
	SecretAccessKey = "s3test-secret-access-key"
)

// Server is a running in-process S3 server with one bucket.
type Server struct {
	URL    string // http://127.0.0.1:port, the endpoint
	Bucket string

	backend gofakes3.Backend
	handler http.Handler // what clients reach
	inner   http.Handler // the S3 protocol behind CORS and verification
	verify  *Verify      // nil: lenient

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
	return newServer(bucket, s3mem.New(), nil)
}

// StartVerifying is Start with a server that verifies every request with
// v's key (see the package comment); its Config carries that key.
func StartVerifying(tb testing.TB, v Verify) *Server {
	tb.Helper()
	s, err := newServer(DefaultBucket, s3mem.New(), &v)
	if err != nil {
		tb.Fatalf("s3test: %v", err)
	}
	srv := httptest.NewServer(s.handler)
	tb.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

// NewOnDisk returns a server that verifies every request with v's key (see
// the package comment), with the objects kept as files under dir
// (dir/<bucket>/<key>, with gofakes3's metadata beside them), so they
// outlive the process: the local stack's store. An existing bucket is
// reused. Like New it is not listening yet.
func NewOnDisk(bucket, dir string, v Verify) (*Server, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("object directory: %w", err)
	}
	backend, err := s3afero.MultiBucket(afero.NewBasePathFs(afero.NewOsFs(), dir))
	if err != nil {
		return nil, fmt.Errorf("object directory %s: %w", dir, err)
	}
	return newServer(bucket, backend, &v)
}

func newServer(bucket string, backend gofakes3.Backend, v *Verify) (*Server, error) {
	if bucket == "" {
		bucket = DefaultBucket
	}
	s := &Server{Bucket: bucket, backend: backend, verify: v}
	var vf *verifier
	if v != nil {
		var err error
		if vf, err = newVerifier(*v); err != nil {
			return nil, err
		}
	}
	exists, err := backend.BucketExists(bucket)
	if err != nil {
		return nil, fmt.Errorf("bucket %q: %w", bucket, err)
	}
	if !exists {
		if err := backend.CreateBucket(bucket); err != nil {
			return nil, fmt.Errorf("create bucket %q: %w", bucket, err)
		}
	}
	s.inner = s.watch(s.preconditions(gofakes3.New(backend).Server()))
	if vf == nil {
		s.handler = withCORS(anyOrigin, lenientMethods, s.inner)
		return s, nil
	}
	s.handler = withCORS(originIn(v.AllowedOrigins), strictMethods, vf.wrap(s.inner))
	return s, nil
}

// Config returns a Store config for this server: path-style addressing,
// the server's URL as the endpoint, and the verifying key, or dummy keys
// for a lenient server.
func (s *Server) Config() s3.Config {
	cfg := s3.Config{
		Endpoint:        s.URL,
		Region:          s3.DefaultRegion,
		Bucket:          s.Bucket,
		AccessKeyID:     AccessKeyID,
		SecretAccessKey: SecretAccessKey,
		PathStyle:       true,
	}
	if v := s.verify; v != nil {
		cfg.AccessKeyID, cfg.SecretAccessKey = v.AccessKeyID, v.SecretAccessKey
		if v.Region != "" {
			cfg.Region = v.Region
		}
	}
	return cfg
}

// Handler is the S3 protocol handler, OnCreate hooks, CORS and (for a
// verifying server) the verification included, for serving elsewhere or
// wrapping (a test that records the requests the SDK sends).
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
	s.inner.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/"+s.Bucket+"?uploads", nil))
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

// Methods a browser may use, by strictness.
const (
	lenientMethods = "GET, HEAD, PUT, POST, DELETE"
	strictMethods  = "GET, HEAD, PUT"
)

func anyOrigin(string) bool { return true }

// originIn allows the origins listed, or every origin if one is "*".
func originIn(list []string) func(string) bool {
	allowed := map[string]bool{}
	for _, o := range list {
		if o = strings.TrimSuffix(strings.TrimSpace(o), "/"); o != "" {
			allowed[o] = true
		}
	}
	return func(origin string) bool { return allowed["*"] || allowed[origin] }
}

// withCORS answers CORS preflights itself, as a bucket's CORS rule does:
// from an allowed origin for one of methods (any request headers), 200 with
// the Access-Control-* headers; any other preflight 403 with S3's error.
// Other requests from an allowed origin get Access-Control-Allow-Origin and
// may read the ETag; from any other origin they get no CORS headers, so a
// browser keeps the answer from the page. (gofakes3 answers a preflight,
// but sets no Access-Control-Allow-Origin on the request that follows, so a
// browser would refuse the answer to its PUT.)
func withCORS(allowed func(string) bool, methods string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		method := r.Header.Get("Access-Control-Request-Method")
		preflight := r.Method == http.MethodOptions && origin != "" && method != ""
		if origin == "" || (!preflight && !allowed(origin)) {
			next.ServeHTTP(w, r)
			return
		}
		h := w.Header()
		if preflight && (!allowed(origin) || !listed(methods, method)) {
			writeError(w, r, refuse(http.StatusForbidden, "AccessForbidden",
				"CORSResponse: This CORS request is not allowed. This is usually because the evalution of Origin, request method / Access-Control-Request-Method or Access-Control-Request-Headers are not whitelisted by the resource's CORS spec."))
			return
		}
		h.Set("Access-Control-Allow-Origin", origin)
		h.Add("Vary", "Origin")
		if preflight {
			h.Set("Access-Control-Allow-Methods", methods)
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

// listed tells whether method is in the comma-separated list.
func listed(list, method string) bool {
	for _, m := range strings.Split(list, ",") {
		if strings.TrimSpace(m) == method {
			return true
		}
	}
	return false
}

// watch wraps the S3 handler to call the OnCreate hooks, and keeps it from
// answering twice (gofakes3 writes an error answer after a GET whose client
// went away mid-body, which net/http would log as a superfluous
// WriteHeader).
func (s *Server) watch(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w}
		bucket, key, creates := createsObject(r)
		next.ServeHTTP(rec, r)
		if !creates || rec.status() < 200 || rec.status() > 299 {
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

// statusRecorder remembers the status the handler wrote, and passes on
// only the first answer: a second WriteHeader, and whatever is written
// after it, is dropped.
type statusRecorder struct {
	http.ResponseWriter
	code  int
	again bool // a second answer was begun
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.code != 0 {
		r.again = true
		return
	}
	r.code = code
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.again {
		return len(b), nil
	}
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
