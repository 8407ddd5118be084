package s3_test

import (
	"encoding/binary"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"transcriber/internal/errs"
	"transcriber/internal/storage/s3"
	"transcriber/internal/storage/s3/s3test"
)

// storeSpec is a Store's config and what only tests tune (s3.Tuned).
type storeSpec struct {
	s3.Config
	partSize              int64
	concurrency, attempts int
	client                *http.Client
}

// mustStore builds a Store on srv, after edit changes its spec.
func mustStore(tb testing.TB, srv *s3test.Server, edit ...func(*storeSpec)) *s3.Store {
	tb.Helper()
	spec := storeSpec{Config: srv.Config()}
	for _, fn := range edit {
		fn(&spec)
	}
	st, err := s3.Tuned(spec.Config, spec.partSize, spec.concurrency, spec.attempts, spec.client)
	require.NoError(tb, err)
	return st
}

// withEndpoint points a config at another server (a recorder or a fake).
func withEndpoint(url string) func(*storeSpec) {
	return func(c *storeSpec) { c.Endpoint = url }
}

// genReader yields size deterministic, well-mixed bytes and nothing else:
// no Seek, no ReadAt, no WriteTo, so the uploader must stream it.
type genReader struct {
	off, size int64
}

func newGen(size int64) *genReader { return &genReader{size: size} }

func (g *genReader) Read(p []byte) (int, error) {
	if g.off >= g.size {
		return 0, io.EOF
	}
	if rem := g.size - g.off; int64(len(p)) > rem {
		p = p[:rem]
	}
	n := len(p)
	for len(p) > 0 {
		word := splitmix(uint64(g.off / 8))
		if g.off%8 == 0 && len(p) >= 8 {
			binary.LittleEndian.PutUint64(p, word)
			p, g.off = p[8:], g.off+8
			continue
		}
		p[0] = byte(word >> (8 * (g.off % 8)))
		p, g.off = p[1:], g.off+1
	}
	return n, nil
}

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

func genBytes(tb testing.TB, size int64) []byte {
	tb.Helper()
	b, err := io.ReadAll(newGen(size))
	require.NoError(tb, err)
	return b
}

// createdEvent is one OnCreate call.
type createdEvent struct {
	Bucket, Key string
	Size        int64
}

// recordCreates collects srv's OnCreate calls.
func recordCreates(srv *s3test.Server) func() []createdEvent {
	var mu sync.Mutex
	var got []createdEvent
	srv.OnCreate(func(bucket, key string, size int64) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, createdEvent{bucket, key, size})
	})
	return func() []createdEvent {
		mu.Lock()
		defer mu.Unlock()
		return append([]createdEvent(nil), got...)
	}
}

// seenRequest is what a recorder saw of one request.
type seenRequest struct {
	Method string
	Path   string
	Query  string
	Header http.Header
}

// recorder serves next and remembers every request's method, path, query
// and headers.
type recorder struct {
	mu   sync.Mutex
	seen []seenRequest
}

func startRecorder(tb testing.TB, next http.Handler) (*recorder, string) {
	tb.Helper()
	rec := &recorder{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.mu.Lock()
		rec.seen = append(rec.seen, seenRequest{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Clone()})
		rec.mu.Unlock()
		next.ServeHTTP(w, r)
	}))
	tb.Cleanup(srv.Close)
	return rec, srv.URL
}

func (r *recorder) requests() []seenRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]seenRequest(nil), r.seen...)
}

// requireKind checks err's kind and code, and that the text a person may see
// names none of secrets.
func requireKind(tb testing.TB, err error, kind errs.Kind, code string, secrets ...string) {
	tb.Helper()
	require.Error(tb, err)
	require.Equal(tb, kind, errs.KindOf(err), "kind of %v", err)
	require.Equal(tb, code, errs.CodeOf(err), "code of %v", err)
	msg := errs.MessageOf(err)
	for _, s := range append(secrets, "http", "X-Amz", "operation error", "api error") {
		require.NotContains(tb, strings.ToLower(msg), strings.ToLower(s), "message %q", msg)
	}
}
