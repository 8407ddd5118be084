// Package s3test starts an in-process s3local server for a test: Start's
// is lenient (no signature checked, CORS for every origin), StartVerifying's
// checks requests as the local stack's does.
package s3test

import (
	"encoding/xml"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"transcriber/internal/storage/s3/s3local"
)

// DefaultBucket is the bucket the servers have.
const DefaultBucket = "transcriber-test"

// The lenient server's key (log scans look for the secret).
const (
	AccessKeyID     = "s3test-key-id"
	SecretAccessKey = "s3test-secret-access-key"
)

// Server is a server listening until the test ends.
type Server struct{ *s3local.Server }

// Start runs a lenient server.
func Start(tb testing.TB) *Server {
	return StartVerifying(tb, s3local.Options{AccessKeyID: AccessKeyID, SecretAccessKey: SecretAccessKey, Lenient: true})
}

// StartVerifying runs a server with o.
func StartVerifying(tb testing.TB, o s3local.Options) *Server {
	tb.Helper()
	s, err := s3local.New(DefaultBucket, o)
	if err != nil {
		tb.Fatalf("s3test: %v", err)
	}
	hs := httptest.NewServer(s.Handler())
	tb.Cleanup(hs.Close)
	s.URL = hs.URL
	return &Server{s}
}

// Object is the content stored under key; the test fails if there is none.
func (s *Server) Object(tb testing.TB, key string) []byte {
	tb.Helper()
	b, err := s.Server.Object(key)
	if err != nil {
		tb.Fatalf("s3test: object %q: %v", key, err)
	}
	return b
}

// Has reports whether key exists.
func (s *Server) Has(key string) bool {
	_, err := s.Server.Object(key)
	return err == nil
}

// PendingUploads counts the multipart uploads neither completed nor
// aborted, on a lenient server.
func (s *Server) PendingUploads(tb testing.TB) int {
	tb.Helper()
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/"+s.Bucket+"?uploads", nil))
	body := rec.Body.String()
	if rec.Code == http.StatusNotFound && strings.Contains(body, "NoSuchUpload") {
		return 0 // gofakes3's answer for a bucket that never had one
	}
	if rec.Code != http.StatusOK {
		tb.Fatalf("s3test: list multipart uploads: status %d: %s", rec.Code, body)
	}
	var list struct {
		Uploads []struct{} `xml:"Upload"`
	}
	if err := xml.Unmarshal(rec.Body.Bytes(), &list); err != nil {
		tb.Fatalf("s3test: list multipart uploads: %v", err)
	}
	return len(list.Uploads)
}
