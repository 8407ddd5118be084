package s3test

import (
	"encoding/hex"
	"net/http"
	"net/url"
	"strings"
	"sync"
)

// preconditions answers a copy whose x-amz-copy-source-if-match names an
// ETag other than the source's current one with 412 PreconditionFailed, as
// S3 does; gofakes3 copies without looking. A conditional copy runs alone:
// no other write of the server runs between its check and its copy.
func (s *Server) preconditions(next http.Handler) http.Handler {
	var writes sync.RWMutex
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		source := r.Header.Get("X-Amz-Copy-Source")
		if r.Method == http.MethodGet || r.Method == http.MethodHead || r.Method == http.MethodOptions {
			next.ServeHTTP(w, r)
			return
		}
		if r.Method != http.MethodPut || source == "" {
			writes.RLock()
			defer writes.RUnlock()
			next.ServeHTTP(w, r)
			return
		}
		bucket, key, ok := copySource(source)
		if !ok {
			writeError(w, r, refuse(http.StatusBadRequest, "InvalidArgument", "Copy Source must mention the source bucket and key: sourcebucket/sourcekey"))
			return
		}
		want := r.Header.Get("X-Amz-Copy-Source-If-Match")
		if want == "" {
			writes.RLock()
			defer writes.RUnlock()
			next.ServeHTTP(w, r)
			return
		}
		writes.Lock()
		defer writes.Unlock()
		if obj, err := s.backend.HeadObject(bucket, key); err == nil {
			_ = obj.Contents.Close()
			if !etagMatches(want, obj.Hash) {
				writeError(w, r, refuse(http.StatusPreconditionFailed, "PreconditionFailed",
					"At least one of the pre-conditions you specified did not hold"))
				return
			}
		} // a missing source: gofakes3 answers NoSuchKey
		next.ServeHTTP(w, r)
	})
}

// copySource parses x-amz-copy-source as gofakes3 does: /bucket/key or
// bucket/key, the key URL-escaped, an optional ?versionId after it.
func copySource(source string) (bucket, key string, ok bool) {
	bucket, rest, ok := strings.Cut(strings.TrimPrefix(source, "/"), "/")
	if !ok || bucket == "" {
		return "", "", false
	}
	rest, _, _ = strings.Cut(rest, "?")
	key, err := url.QueryUnescape(rest)
	if err != nil || key == "" {
		return "", "", false
	}
	return bucket, key, true
}

// etagMatches tells whether an If-Match list (comma-separated, quoted or
// not, or *) names the object whose MD5 is hash.
func etagMatches(list string, hash []byte) bool {
	etag := hex.EncodeToString(hash)
	for _, t := range strings.Split(list, ",") {
		t = strings.TrimSpace(t)
		if t == "*" || strings.Trim(t, `"`) == etag {
			return true
		}
	}
	return false
}
