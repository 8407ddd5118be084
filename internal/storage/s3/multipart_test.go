package s3_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"transcriber/internal/errs"
	"transcriber/internal/storage/s3"
	"transcriber/internal/storage/s3/s3test"
)

// partWatch sits in front of the in-process server and watches the
// multipart traffic: the parts sent (number and size), how many were in
// flight at once, and the aborts. fail, if set, may answer a request
// itself (returning true) instead of the server.
type partWatch struct {
	next http.Handler
	fail func(w http.ResponseWriter, r *http.Request) bool

	mu          sync.Mutex
	parts       map[int]int64 // part number → bytes
	inFlight    int
	maxInFlight int
	initiated   int
	aborted     int
	puts        int // PUTs of whole objects
}

func watchParts(t *testing.T, srv *s3test.Server) (*partWatch, string) {
	t.Helper()
	pw := &partWatch{next: srv.Handler(), parts: map[int]int64{}}
	hs := httptest.NewServer(pw)
	t.Cleanup(hs.Close)
	return pw, hs.URL
}

func (pw *partWatch) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	part := r.Method == http.MethodPut && q.Has("partNumber")
	pw.mu.Lock()
	switch {
	case part:
		pw.inFlight++
		pw.maxInFlight = max(pw.maxInFlight, pw.inFlight)
	case r.Method == http.MethodPost && q.Has("uploads"):
		pw.initiated++
	case r.Method == http.MethodDelete && q.Has("uploadId"):
		pw.aborted++
	case r.Method == http.MethodPut:
		pw.puts++
	}
	pw.mu.Unlock()
	if part {
		defer func() {
			pw.mu.Lock()
			pw.inFlight--
			pw.mu.Unlock()
		}()
	}
	if pw.fail != nil && pw.fail(w, r) {
		return
	}
	if part {
		n, err := strconv.Atoi(q.Get("partNumber"))
		if err == nil {
			pw.mu.Lock()
			pw.parts[n] = r.ContentLength
			pw.mu.Unlock()
		}
	}
	pw.next.ServeHTTP(w, r)
}

// sizes returns the part sizes by part number, 1 first.
func (pw *partWatch) sizes() []int64 {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	nums := make([]int, 0, len(pw.parts))
	for n := range pw.parts {
		nums = append(nums, n)
	}
	slices.Sort(nums)
	out := make([]int64, 0, len(nums))
	for i, n := range nums {
		if n != i+1 {
			return nil // a gap: numbered wrong
		}
		out = append(out, pw.parts[n])
	}
	return out
}

func (pw *partWatch) counts() (initiated, aborted, puts, maxInFlight int) {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	return pw.initiated, pw.aborted, pw.puts, pw.maxInFlight
}

// TestMultipartBoundaries uploads around one part's size to the in-process
// server (upload_internal_test.go covers many sizes and concurrencies with
// small parts).
func TestMultipartBoundaries(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name        string
		size        int64
		concurrency int
		parts       []int64 // nil: one PUT
	}{
		{"one byte over a part", 5*mib + 1, 2, []int64{5 * mib, 1}},
		{"exactly one part is one PUT", 5 * mib, 2, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := s3test.Start(t)
			created := recordCreates(srv)
			pw, url := watchParts(t, srv)
			st := mustStore(t, srv, withEndpoint(url), withParts(5*mib, tc.concurrency))

			n, err := st.Upload(ctx, "jobs/1/audio.ogg", newGen(tc.size), "audio/ogg")
			require.NoError(t, err)
			require.Equal(t, tc.size, n)
			require.Equal(t, genBytes(t, tc.size), srv.Object(t, "jobs/1/audio.ogg"))
			require.Equal(t, []createdEvent{{srv.Bucket, "jobs/1/audio.ogg", tc.size}}, created())
			require.Zero(t, srv.PendingUploads(t))
			info, err := st.Head(ctx, "jobs/1/audio.ogg")
			require.NoError(t, err)
			require.Equal(t, "audio/ogg", info.ContentType)

			initiated, aborted, puts, maxInFlight := pw.counts()
			require.Zero(t, aborted)
			if tc.parts == nil {
				require.Zero(t, initiated)
				require.Equal(t, 1, puts)
				require.Empty(t, pw.sizes())
				return
			}
			require.Equal(t, 1, initiated)
			require.Zero(t, puts)
			require.Equal(t, tc.parts, pw.sizes())
			require.LessOrEqual(t, maxInFlight, tc.concurrency, "parts in flight at once")
		})
	}
}

func TestUploadAbortsOnError(t *testing.T) {
	ctx := context.Background()
	internalError := func(w http.ResponseWriter, status int) {
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, `<Error><Code>InternalError</Code><Message>We encountered an internal error.</Message></Error>`)
	}

	t.Run("a part the store refuses", func(t *testing.T) {
		srv := s3test.Start(t)
		created := recordCreates(srv)
		pw, url := watchParts(t, srv)
		pw.fail = func(w http.ResponseWriter, r *http.Request) bool {
			if r.URL.Query().Get("partNumber") == "2" {
				internalError(w, http.StatusInternalServerError)
				return true
			}
			return false
		}
		st := mustStore(t, srv, withEndpoint(url), withParts(5*mib, 1), func(c *storeSpec) { c.attempts = 1 })

		n, err := st.Upload(ctx, "jobs/1/audio.ogg", newGen(11*mib), "")
		require.Zero(t, n)
		requireKind(t, err, errs.Unavailable, "storage_unavailable")
		require.Contains(t, err.Error(), "InternalError", "the cause names the store's code")
		_, aborted, _, _ := pw.counts()
		require.Equal(t, 1, aborted)
		require.Zero(t, srv.PendingUploads(t))
		require.False(t, srv.Has("jobs/1/audio.ogg"))
		require.Empty(t, created())
		require.Len(t, pw.sizes(), 1, "no part is sent after the failure with one at a time (part 1 only)")
	})

	t.Run("a completion that fails inside a 200", func(t *testing.T) {
		srv := s3test.Start(t)
		created := recordCreates(srv)
		pw, url := watchParts(t, srv)
		pw.fail = func(w http.ResponseWriter, r *http.Request) bool {
			if r.Method == http.MethodPost && r.URL.Query().Has("uploadId") {
				internalError(w, http.StatusOK)
				return true
			}
			return false
		}
		st := mustStore(t, srv, withEndpoint(url), withParts(5*mib, 2), func(c *storeSpec) { c.attempts = 1 })

		_, err := st.Upload(ctx, "jobs/1/audio.ogg", newGen(11*mib), "")
		requireKind(t, err, errs.Unavailable, "storage_unavailable")
		_, aborted, _, _ := pw.counts()
		require.Equal(t, 1, aborted)
		require.Zero(t, srv.PendingUploads(t))
		require.False(t, srv.Has("jobs/1/audio.ogg"))
		require.Empty(t, created())
	})

	t.Run("a reader failing after some parts", func(t *testing.T) {
		srv := s3test.Start(t)
		pw, url := watchParts(t, srv)
		st := mustStore(t, srv, withEndpoint(url), withParts(5*mib, 2))
		bad := errs.New(errs.Permanent, "no_audio_stream", "the file has no audio")

		_, err := st.Upload(ctx, "jobs/1/audio.ogg", io.MultiReader(newGen(11*mib), errReader{bad}), "")
		requireKind(t, err, errs.Permanent, "no_audio_stream")
		require.ErrorIs(t, err, bad)
		_, aborted, _, maxInFlight := pw.counts()
		require.Equal(t, 1, aborted)
		require.LessOrEqual(t, maxInFlight, 2)
		require.Zero(t, srv.PendingUploads(t))
		require.False(t, srv.Has("jobs/1/audio.ogg"))
	})

	t.Run("a reader failing within the first part sends nothing", func(t *testing.T) {
		srv := s3test.Start(t)
		pw, url := watchParts(t, srv)
		st := mustStore(t, srv, withEndpoint(url), withParts(5*mib, 2))

		_, err := st.Upload(ctx, "jobs/1/audio.ogg", io.MultiReader(newGen(mib), errReader{io.ErrUnexpectedEOF}), "")
		requireKind(t, err, errs.Unavailable, "storage_unavailable")
		initiated, aborted, puts, _ := pw.counts()
		require.Zero(t, initiated+aborted+puts)
	})
}

// TestVirtualHostedRequests sends every operation to bucket.host/key (the
// addressing Yandex gets by default) and checks what arrives.
func TestVirtualHostedRequests(t *testing.T) {
	srv := s3test.Start(t)
	var mu sync.Mutex
	var hosts []string
	// The store sees bucket.s3.test:port/key; the in-process server wants
	// path style, so the handler moves the bucket into the path.
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hosts = append(hosts, r.Host)
		mu.Unlock()
		r2 := r.Clone(r.Context())
		bucket, _, _ := strings.Cut(r.Host, ".")
		r2.URL.Path = "/" + bucket + r.URL.Path
		r2.URL.RawPath = "/" + bucket + r.URL.EscapedPath()
		r2.RequestURI = r2.URL.RequestURI()
		srv.Handler().ServeHTTP(w, r2)
	}))
	t.Cleanup(hs.Close)
	addr := strings.TrimPrefix(hs.URL, "http://")
	_, port, err := net.SplitHostPort(addr)
	require.NoError(t, err)
	dialer := &net.Dialer{}
	st := mustStore(t, srv, withParts(5*mib, 2), func(c *storeSpec) {
		c.Endpoint = "http://s3.test:" + port
		c.PathStyle = false
		c.client = &http.Client{Transport: &http.Transport{
			DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				return dialer.DialContext(ctx, network, addr)
			},
		}}
	})
	ctx := context.Background()
	key := "jobs/1/a b+c=д.txt"

	require.NoError(t, st.Put(ctx, key, []byte("hello"), "text/plain"))
	rc, err := st.Get(ctx, key)
	require.NoError(t, err)
	got, err := io.ReadAll(rc)
	require.NoError(t, err)
	require.NoError(t, rc.Close())
	require.Equal(t, "hello", string(got))
	_, err = st.Upload(ctx, key+".big", newGen(5*mib+1), "")
	require.NoError(t, err)
	require.Equal(t, genBytes(t, 5*mib+1), srv.Object(t, key+".big"))
	info, err := st.Head(ctx, key)
	require.NoError(t, err)
	require.NotEmpty(t, info.ETag, "the store names the content")
	info.ETag = ""
	require.Equal(t, s3.ObjectInfo{Size: 5, ContentType: "text/plain"}, info)
	require.NoError(t, st.Delete(ctx, key))
	require.False(t, srv.Has(key))

	require.NotEmpty(t, hosts)
	for _, h := range hosts {
		require.Equal(t, srv.Bucket+".s3.test:"+port, h)
	}
	// URI stays path style, whatever the addressing.
	require.Equal(t, "http://s3.test:"+port+"/"+srv.Bucket+"/jobs/1/a%20b+c=%D0%B4.txt", st.URI(key))
}
