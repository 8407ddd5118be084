// Package s3local is the local stack's object store, and the tests': an S3
// server (gofakes3) with one bucket, its objects in memory or as files on
// disk, that checks every request as Object Storage does: AWS Signature
// Version 4 in the Authorization header (X-Amz-Date within MaxClockSkew,
// the payload hash signed and checked) or in a presigned URL's query (at
// most MaxPresignExpires, refused once expired). The signature is
// recomputed with the AWS SDK's signer over the request as received,
// restricted to its signed headers, and compared in constant time. A
// refusal is S3's XML error; docs/configuration.md lists every one
// (TestEveryRefusalIsDocumented). CORS is answered as a bucket's CORS rule
// does, for Options.AllowedOrigins only.
//
// Beyond gofakes3, a copy's x-amz-copy-source-if-match is honoured (412
// PreconditionFailed), and OnCreate plays Object Storage's ObjectCreate
// trigger.
package s3local

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3afero"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/spf13/afero"

	"transcriber/internal/clock"
	"transcriber/internal/storage/s3"
)

// Options are a server's key, and what it allows.
type Options struct {
	AccessKeyID     string // required, as is the secret: Config signs with them
	SecretAccessKey string
	// AllowedOrigins get CORS headers for GET, HEAD and PUT; "*" allows
	// every origin.
	AllowedOrigins []string
	Clock          clock.Clock // what signing times and expiries are checked against; default clock.System()
	// Dir keeps the objects as files (Dir/<bucket>/<key>) that outlive the
	// process; empty: in memory.
	Dir string
	// Lenient (tests only) checks no signature and gives every origin
	// CORS for every method.
	Lenient bool
}

// Server is an S3 server with one bucket. It does not listen: whoever
// serves Handler sets URL.
type Server struct {
	URL     string
	Bucket  string
	opt     Options
	backend gofakes3.Backend
	handler http.Handler

	mu    sync.Mutex
	hooks []func(bucket, key string, size int64)
}

// New returns a server for bucket, made if it does not exist.
func New(bucket string, o Options) (*Server, error) {
	if o.AccessKeyID == "" || o.SecretAccessKey == "" {
		return nil, errors.New("the object store needs an access key id and a secret access key")
	}
	if o.Clock == nil {
		o.Clock = clock.System()
	}
	var backend gofakes3.Backend = s3mem.New()
	if o.Dir != "" {
		if err := os.MkdirAll(o.Dir, 0o750); err != nil {
			return nil, fmt.Errorf("object directory: %w", err)
		}
		var err error
		if backend, err = s3afero.MultiBucket(afero.NewBasePathFs(afero.NewOsFs(), o.Dir)); err != nil {
			return nil, fmt.Errorf("object directory %s: %w", o.Dir, err)
		}
	}
	if ok, err := backend.BucketExists(bucket); err != nil {
		return nil, fmt.Errorf("bucket %q: %w", bucket, err)
	} else if !ok {
		if err := backend.CreateBucket(bucket); err != nil {
			return nil, fmt.Errorf("create bucket %q: %w", bucket, err)
		}
	}
	s := &Server{Bucket: bucket, opt: o, backend: backend}
	inner := s.watch(s.preconditions(gofakes3.New(backend).Server()))
	if o.Lenient {
		s.handler = withCORS(func(string) bool { return true }, "GET, HEAD, PUT, POST, DELETE", inner)
	} else {
		s.handler = withCORS(originIn(o.AllowedOrigins), "GET, HEAD, PUT", newVerifier(o).wrap(inner))
	}
	return s, nil
}

// Config is a Store config for this server: path-style, at URL, with the
// server's key.
func (s *Server) Config() s3.Config {
	return s3.Config{
		Endpoint: s.URL, Region: s3.DefaultRegion, Bucket: s.Bucket, PathStyle: true,
		AccessKeyID: s.opt.AccessKeyID, SecretAccessKey: s.opt.SecretAccessKey,
	}
}

// Handler serves the S3 protocol, with verification, CORS and the OnCreate
// hooks.
func (s *Server) Handler() http.Handler { return s.handler }

// OnCreate registers fn to run for every object created (a PUT, a copy or
// a completed multipart upload; never a part or a failed request), in the
// request's goroutine before the client sees the end of the answer: when
// an upload returns, its hooks have run.
func (s *Server) OnCreate(fn func(bucket, key string, size int64)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hooks = append(s.hooks, fn)
}

// Object is the content stored under key.
func (s *Server) Object(key string) ([]byte, error) {
	obj, err := s.backend.GetObject(s.Bucket, key, nil)
	if err != nil {
		return nil, err
	}
	defer obj.Contents.Close()
	return io.ReadAll(obj.Contents)
}

// Keys lists the keys under prefix, in key order.
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

// withCORS answers preflights itself: from an allowed origin for one of
// methods, 200 with the Access-Control-* headers, any other 403. Other
// requests from an allowed origin may read the answer and its ETag
// (gofakes3 alone sets no Access-Control-Allow-Origin on them).
func withCORS(allowed func(string) bool, methods string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		method := r.Header.Get("Access-Control-Request-Method")
		preflight := r.Method == http.MethodOptions && origin != "" && method != ""
		if origin == "" || (!preflight && !allowed(origin)) {
			next.ServeHTTP(w, r)
			return
		}
		if preflight && (!allowed(origin) || !listed(methods, method)) {
			writeError(w, r, refuse(http.StatusForbidden, "AccessForbidden",
				"CORSResponse: This CORS request is not allowed. This is usually because the evalution of Origin, request method / Access-Control-Request-Method or Access-Control-Request-Headers are not whitelisted by the resource's CORS spec."))
			return
		}
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", origin)
		h.Add("Vary", "Origin")
		if !preflight {
			h.Set("Access-Control-Expose-Headers", "ETag")
			next.ServeHTTP(w, r)
			return
		}
		h.Set("Access-Control-Allow-Methods", methods)
		if hdr := r.Header.Get("Access-Control-Request-Headers"); hdr != "" {
			h.Set("Access-Control-Allow-Headers", hdr)
		}
		h.Set("Access-Control-Max-Age", "600")
		h.Add("Vary", "Access-Control-Request-Method")
		h.Add("Vary", "Access-Control-Request-Headers")
		w.WriteHeader(http.StatusOK)
	})
}

func listed(list, method string) bool {
	for _, m := range strings.Split(list, ",") {
		if strings.TrimSpace(m) == method {
			return true
		}
	}
	return false
}

// watch runs the OnCreate hooks after a request that created an object,
// and passes on only the first answer (gofakes3 writes an error after a GET
// whose client went away mid-body: a superfluous WriteHeader).
func (s *Server) watch(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &firstAnswer{ResponseWriter: w}
		bucket, key, creates := createsObject(r)
		next.ServeHTTP(rec, r)
		if !creates || (rec.code != 0 && rec.code/100 != 2) { // 0: nothing written, 200
			return
		}
		obj, err := s.backend.HeadObject(bucket, key)
		if err != nil {
			return // deleted by a concurrent request
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

// createsObject tells whether r, if it succeeds, creates an object, routed
// as gofakes3 routes it: PUT /bucket/key with no sub-resource, or POST
// /bucket/key?uploadId=… (CompleteMultipartUpload).
func createsObject(r *http.Request) (bucket, key string, ok bool) {
	bucket, key, _ = strings.Cut(strings.Trim(r.URL.Path, "/"), "/")
	if bucket == "" || key == "" {
		return "", "", false
	}
	q := r.URL.Query()
	versioned := len(q["versionId"]) > 0 && q["versionId"][0] != "" && q["versionId"][0] != "null" // gofakes3 ignores "" and "null"
	switch {
	case q.Get("uploadId") != "":
		return bucket, key, r.Method == http.MethodPost
	case q.Has("uploads"), q.Has("versioning"), q.Has("versions"), versioned:
		return "", "", false
	}
	return bucket, key, r.Method == http.MethodPut
}

// firstAnswer records the status written and drops a second answer.
type firstAnswer struct {
	http.ResponseWriter
	code  int
	again bool
}

func (r *firstAnswer) WriteHeader(code int) {
	if r.code != 0 {
		r.again = true
		return
	}
	r.code = code
	r.ResponseWriter.WriteHeader(code)
}

func (r *firstAnswer) Write(b []byte) (int, error) {
	if r.again {
		return len(b), nil
	}
	if r.code == 0 {
		r.code = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the real writer.
func (r *firstAnswer) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// preconditions refuses a copy whose x-amz-copy-source-if-match names
// another ETag than the source's (gofakes3 copies without looking). A
// conditional copy runs alone: no other write runs between its check and
// its copy.
func (s *Server) preconditions(next http.Handler) http.Handler {
	var writes sync.RWMutex
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
			next.ServeHTTP(w, r)
			return
		}
		source := r.Header.Get("X-Amz-Copy-Source")
		want := r.Header.Get("X-Amz-Copy-Source-If-Match")
		bucket, key, ok := copySource(source)
		switch {
		case r.Method != http.MethodPut || source == "":
		case !ok:
			writeError(w, r, refuse(http.StatusBadRequest, "InvalidArgument", "Copy Source must mention the source bucket and key: sourcebucket/sourcekey"))
			return
		case want != "":
			writes.Lock()
			defer writes.Unlock()
			if obj, err := s.backend.HeadObject(bucket, key); err == nil { // a missing source: gofakes3 answers NoSuchKey
				_ = obj.Contents.Close()
				if !etagMatches(want, obj.Hash) {
					writeError(w, r, refuse(http.StatusPreconditionFailed, "PreconditionFailed",
						"At least one of the pre-conditions you specified did not hold"))
					return
				}
			}
			next.ServeHTTP(w, r)
			return
		}
		writes.RLock()
		defer writes.RUnlock()
		next.ServeHTTP(w, r)
	})
}

// copySource parses x-amz-copy-source as gofakes3 does: [/]bucket/key, the
// key URL-escaped, an optional ?versionId after it.
func copySource(source string) (bucket, key string, ok bool) {
	bucket, rest, ok := strings.Cut(strings.TrimPrefix(source, "/"), "/")
	if !ok || bucket == "" {
		return "", "", false
	}
	rest, _, _ = strings.Cut(rest, "?")
	key, err := url.QueryUnescape(rest)
	return bucket, key, err == nil && key != ""
}

// etagMatches tells whether an If-Match list (comma-separated, quoted or
// not, or *) names the object whose MD5 is hash.
func etagMatches(list string, hash []byte) bool {
	etag := hex.EncodeToString(hash)
	for _, t := range strings.Split(list, ",") {
		if t = strings.TrimSpace(t); t == "*" || strings.Trim(t, `"`) == etag {
			return true
		}
	}
	return false
}
