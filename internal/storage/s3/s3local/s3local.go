// Package s3local is the local stack's object store, and the tests': a
// gofakes3 server with one bucket that checks every request as Object
// Storage does (SigV4 in the header or a presigned query, recomputed with
// the SDK's signer over the request as received), refusing with S3's XML
// errors (docs/configuration.md lists them, TestEveryRefusalIsDocumented).
// It adds CORS as a bucket rule answers it, x-amz-copy-source-if-match,
// and OnCreate for the ObjectCreate trigger.
package s3local

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3afero"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/spf13/afero"

	"transcriber/internal/clock"
	"transcriber/internal/storage/s3"
)

// Options are a server's key (required) and what it allows.
type Options struct {
	AccessKeyID     string
	SecretAccessKey string
	AllowedOrigins  []string    // get CORS for GET, HEAD and PUT; "*": all
	Clock           clock.Clock // default clock.System()
	Dir             string      // the objects as files under Dir; empty: in memory
	Lenient         bool        // tests: no signature checked, CORS for all
}

// Server does not listen: whoever serves Handler sets URL.
type Server struct {
	URL     string
	Bucket  string
	opt     Options
	backend gofakes3.Backend
	handler http.Handler

	mu    sync.Mutex
	hooks []func(bucket, key string, size int64)
}

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

func (s *Server) Config() s3.Config {
	return s3.Config{
		Endpoint: s.URL, Region: s3.DefaultRegion, Bucket: s.Bucket, PathStyle: true,
		AccessKeyID: s.opt.AccessKeyID, SecretAccessKey: s.opt.SecretAccessKey,
	}
}

func (s *Server) Handler() http.Handler { return s.handler }

// OnCreate runs fn for every object created (a PUT, a copy, a completed
// multipart upload) before the client has the whole answer: when an
// upload returns, its hooks have run.
func (s *Server) OnCreate(fn func(bucket, key string, size int64)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hooks = append(s.hooks, fn)
}

func (s *Server) Object(key string) ([]byte, error) {
	obj, err := s.backend.GetObject(s.Bucket, key, nil)
	if err != nil {
		return nil, err
	}
	defer obj.Contents.Close()
	return io.ReadAll(obj.Contents)
}

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

func originIn(list []string) func(string) bool {
	allowed := map[string]bool{}
	for _, o := range list {
		if o = strings.TrimSuffix(strings.TrimSpace(o), "/"); o != "" {
			allowed[o] = true
		}
	}
	return func(origin string) bool { return allowed["*"] || allowed[origin] }
}

// withCORS answers preflights itself (403 unless allowed), and lets
// allowed origins read answers and their ETag, which gofakes3 alone does
// not.
func withCORS(allowed func(string) bool, methods string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		method := r.Header.Get("Access-Control-Request-Method")
		preflight := r.Method == http.MethodOptions && origin != "" && method != ""
		if origin == "" || (!preflight && !allowed(origin)) {
			next.ServeHTTP(w, r)
			return
		}
		if preflight && (!allowed(origin) || !slices.Contains(strings.Split(methods, ", "), method)) {
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

// watch runs the OnCreate hooks, and passes on only the first answer
// (gofakes3 answers again after a GET whose client went away).
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

// createsObject, routing as gofakes3 does: PUT /bucket/key without a
// sub-resource, or POST /bucket/key?uploadId=….
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

// preconditions honours x-amz-copy-source-if-match, which gofakes3
// ignores; a conditional copy runs alone between its check and its copy.
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

// copySource parses [/]bucket/key[?versionId=…] as gofakes3 does.
func copySource(source string) (bucket, key string, ok bool) {
	bucket, rest, ok := strings.Cut(strings.TrimPrefix(source, "/"), "/")
	if !ok || bucket == "" {
		return "", "", false
	}
	rest, _, _ = strings.Cut(rest, "?")
	key, err := url.QueryUnescape(rest)
	return bucket, key, err == nil && key != ""
}

// etagMatches: an If-Match list (quoted or not, or *) names hash.
func etagMatches(list string, hash []byte) bool {
	etag := hex.EncodeToString(hash)
	for _, t := range strings.Split(list, ",") {
		if t = strings.TrimSpace(t); t == "*" || strings.Trim(t, `"`) == etag {
			return true
		}
	}
	return false
}
