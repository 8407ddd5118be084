package s3

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/errs"
)

const testSecret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"

// scripted answers the i-th request with answers[i] (the last one again
// when they run out) and keeps what it received.
type scripted struct {
	answers []func(w http.ResponseWriter)

	mu     sync.Mutex
	auths  []string
	bodies [][]byte
}

func (s *scripted) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	i := len(s.auths)
	s.auths = append(s.auths, r.Header.Get("Authorization"))
	s.bodies = append(s.bodies, body)
	s.mu.Unlock()
	s.answers[min(i, len(s.answers)-1)](w)
}

func (s *scripted) hits() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.auths)
}

func answer(status int, code string) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		if code != "" {
			w.Header().Set("Content-Type", "application/xml")
		}
		w.Header().Set("X-Amz-Request-Id", "req-1")
		w.WriteHeader(status)
		if code != "" {
			_, _ = io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>`+code+
				`</Code><Message>message for `+code+`</Message><RequestId>req-2</RequestId></Error>`)
		}
	}
}

var answerOK = answer(http.StatusOK, "")

// testStore is a Store on url whose pauses between attempts are recorded,
// not waited.
func testStore(t *testing.T, url string, attempts int) (*Store, *[]time.Duration) {
	t.Helper()
	st, err := Tuned(Config{
		Endpoint: url, Bucket: "secret-bucket", AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: testSecret, PathStyle: true,
	}, 0, 0, attempts, nil)
	require.NoError(t, err)
	var pauses []time.Duration
	st.sleep = func(ctx context.Context, d time.Duration) error {
		pauses = append(pauses, d)
		return ctx.Err()
	}
	return st, &pauses
}

func TestRetries(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name    string
		answers []func(http.ResponseWriter)
		hits    int
		fails   bool
	}{
		{"503 then success", []func(http.ResponseWriter){answer(503, ""), answerOK}, 2, false},
		{"500 InternalError twice then success", []func(http.ResponseWriter){answer(500, "InternalError"), answer(500, "InternalError"), answerOK}, 3, false},
		{"SlowDown three times fails", []func(http.ResponseWriter){answer(503, "SlowDown")}, 3, true},
		{"429 is retried", []func(http.ResponseWriter){answer(429, ""), answerOK}, 2, false},
		{"RequestTimeout on a 400 is retried", []func(http.ResponseWriter){answer(400, "RequestTimeout"), answerOK}, 2, false},
		{"Throttling on a 400 is retried", []func(http.ResponseWriter){answer(400, "Throttling"), answerOK}, 2, false},
		{"400 InvalidArgument is not", []func(http.ResponseWriter){answer(400, "InvalidArgument"), answerOK}, 1, true},
		{"403 AccessDenied is not", []func(http.ResponseWriter){answer(403, "AccessDenied"), answerOK}, 1, true},
		{"404 NoSuchBucket is not", []func(http.ResponseWriter){answer(404, "NoSuchBucket"), answerOK}, 1, true},
		{"501 is not", []func(http.ResponseWriter){answer(501, "NotImplemented"), answerOK}, 1, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			script := &scripted{answers: tc.answers}
			srv := httptest.NewServer(script)
			defer srv.Close()
			st, pauses := testStore(t, srv.URL, 3)

			err := st.Put(ctx, "k", []byte("the body"), "text/plain")
			if tc.fails {
				require.Error(t, err)
			} else {
				require.NoError(t, err)
			}
			require.Equal(t, tc.hits, script.hits())
			require.Len(t, *pauses, tc.hits-1)
			for i, d := range *pauses {
				require.GreaterOrEqual(t, d, time.Duration(0))
				require.Less(t, d, time.Duration(2<<i)*time.Second, "pause %d", i+1)
			}
			for _, body := range script.bodies {
				require.Equal(t, "the body", string(body), "every attempt sends the whole body")
			}
			for _, auth := range script.auths {
				require.True(t, strings.HasPrefix(auth, "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/"), auth)
			}
		})
	}

	t.Run("MaxAttempts 1 tries once", func(t *testing.T) {
		script := &scripted{answers: []func(http.ResponseWriter){answer(503, "")}}
		srv := httptest.NewServer(script)
		defer srv.Close()
		st, pauses := testStore(t, srv.URL, 1)
		_, err := st.Head(ctx, "k")
		requireKindCode(t, err, errs.Unavailable, codeUnavailable)
		require.Equal(t, 1, script.hits())
		require.Empty(t, *pauses)
	})

	t.Run("a refused connection is retried", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		srv.Close()
		st, pauses := testStore(t, srv.URL, 3)
		_, err := st.Head(ctx, "k")
		requireKindCode(t, err, errs.Unavailable, codeUnavailable)
		require.Len(t, *pauses, 2)
	})

	t.Run("a context that ends while waiting stops the retries", func(t *testing.T) {
		script := &scripted{answers: []func(http.ResponseWriter){answer(503, "")}}
		srv := httptest.NewServer(script)
		defer srv.Close()
		st, _ := testStore(t, srv.URL, 5)
		ctx, cancel := context.WithCancel(ctx)
		st.sleep = func(context.Context, time.Duration) error {
			cancel()
			return context.Canceled
		}
		_, err := st.Head(ctx, "k")
		requireKindCode(t, err, errs.Unavailable, codeUnavailable)
		require.Equal(t, 1, script.hits())
	})

	t.Run("a Get is retried before its body is handed out", func(t *testing.T) {
		script := &scripted{answers: []func(http.ResponseWriter){answer(503, ""), func(w http.ResponseWriter) {
			_, _ = io.WriteString(w, "object bytes")
		}}}
		srv := httptest.NewServer(script)
		defer srv.Close()
		st, _ := testStore(t, srv.URL, 3)
		rc, err := st.Get(ctx, "k")
		require.NoError(t, err)
		got, err := io.ReadAll(rc)
		require.NoError(t, err)
		require.NoError(t, rc.Close())
		require.Equal(t, "object bytes", string(got))
	})
}

func requireKindCode(tb testing.TB, err error, kind errs.Kind, code string) {
	tb.Helper()
	require.Error(tb, err)
	require.Equal(tb, kind, errs.KindOf(err), "%v", err)
	require.Equal(tb, code, errs.CodeOf(err), "%v", err)
}

func TestBackoff(t *testing.T) {
	for range 200 {
		require.Less(t, backoff(1), 2*time.Second)
		require.Less(t, backoff(2), 4*time.Second)
		require.Less(t, backoff(4), 16*time.Second)
		require.GreaterOrEqual(t, backoff(1), time.Duration(0))
	}
	require.Equal(t, 20*time.Second, backoff(5))
	require.Equal(t, 20*time.Second, backoff(40))
}

// TestErrorsHoldNoSecrets makes requests fail every way and checks the
// whole error text (the cause for logs included) for the secret key and
// the request's signature.
func TestErrorsHoldNoSecrets(t *testing.T) {
	ctx := context.Background()
	var mu sync.Mutex
	var signatures []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, sig, _ := strings.Cut(r.Header.Get("Authorization"), "Signature=")
		mu.Lock()
		signatures = append(signatures, sig)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusForbidden)
		// Real S3 puts the string to sign and the canonical request in
		// these, never the signature; neither reaches the error.
		_, _ = io.WriteString(w, `<Error><Code>SignatureDoesNotMatch</Code><Message>The request signature we calculated does not match the signature you provided.</Message>`+
			`<StringToSign>AWS4-HMAC-SHA256 …</StringToSign><CanonicalRequest>PUT /secret-bucket/k …</CanonicalRequest></Error>`)
	}))
	defer srv.Close()
	st, _ := testStore(t, srv.URL, 1)

	var failures []error
	_, err := st.Head(ctx, "k")
	failures = append(failures, err)
	_, err = st.Get(ctx, "k")
	failures = append(failures, err)
	failures = append(failures, st.Put(ctx, "k", []byte("x"), ""), st.Delete(ctx, "k"))
	_, err = st.Upload(ctx, "k", bytes.NewReader(make([]byte, 6<<20)), "")
	failures = append(failures, err)

	srv.Close() // and now no answer at all
	_, err = st.Get(ctx, "k")
	failures = append(failures, err)
	_, err = st.Upload(ctx, "k", strings.NewReader("x"), "")
	failures = append(failures, err)

	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, signatures)
	for _, err := range failures {
		require.Error(t, err)
		text := err.Error()
		require.NotContains(t, text, testSecret)
		require.NotContains(t, text, "Signature=")
		require.NotContains(t, text, "X-Amz-Signature")
		require.NotContains(t, text, "CanonicalRequest")
		for _, sig := range signatures {
			require.NotContains(t, text, sig)
		}
	}
	require.Contains(t, failures[0].Error(), "s3 head: status 403, code Forbidden", "a HEAD answer has no body: its status names it")
	require.Contains(t, failures[1].Error(), "SignatureDoesNotMatch")
}

func TestReadError(t *testing.T) {
	cases := []struct {
		status int
		body   string
		want   apiError
	}{
		{404, `<Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message><RequestId>r1</RequestId></Error>`,
			apiError{Status: 404, Code: "NoSuchKey", Message: "The specified key does not exist.", RequestID: "r1"}},
		{404, ``, apiError{Status: 404, Code: "NotFound", RequestID: "h"}},
		{503, `<html>busy</html>`, apiError{Status: 503, Code: "ServiceUnavailable", RequestID: "h"}},
		{599, ``, apiError{Status: 599, Code: "UnknownError", RequestID: "h"}},
	}
	for _, tc := range cases {
		resp := &http.Response{
			StatusCode: tc.status,
			Header:     http.Header{"X-Amz-Request-Id": {"h"}},
			Body:       io.NopCloser(strings.NewReader(tc.body)),
		}
		got := readError(resp)
		require.Equal(t, tc.want, *got)
		require.Equal(t, tc.want.Code, got.ErrorCode())
		require.Equal(t, tc.status, got.HTTPStatusCode())
	}
}

func TestGuardedBody(t *testing.T) {
	g := &bodyGuard{}
	r := g.reader([]byte("abc"))
	b := make([]byte, 2)
	n, err := r.Read(b)
	require.NoError(t, err)
	require.Equal(t, 2, n)
	g.revoke()
	_, err = r.Read(b)
	require.True(t, errors.Is(err, errBodyRevoked))
}

// TestRetryable pins which errors are retried: the SDK's standard rules
// and what is added to them.
func TestRetryable(t *testing.T) {
	api := func(status int, code string) error { return &apiError{Status: status, Code: code} }
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{"a 500", api(500, "InternalServerError"), true},
		{"a 503 SlowDown", api(503, "SlowDown"), true},
		{"a 429 (ours)", api(429, "TooManyRequests"), true},
		{"InternalError in a copy's 200 (ours)", api(200, "InternalError"), true},
		{"ServiceUnavailable on a 400 (ours)", api(400, "ServiceUnavailable"), true},
		{"RequestTimeout on a 400", api(400, "RequestTimeout"), true},
		{"a throttling code", api(400, "PriorRequestNotComplete"), true},
		{"a 501", api(501, "NotImplemented"), false},
		{"a 404", api(404, "NoSuchKey"), false},
		{"a 403", api(403, "AccessDenied"), false},
		{"an answer cut short (ours)", fmt.Errorf("read: %w", io.ErrUnexpectedEOF), true},
		{"a refused connection", &url.Error{Op: "Put", URL: "http://x", Err: &net.OpError{Op: "dial", Err: errors.New("connection refused")}}, true},
		{"a timeout", &url.Error{Op: "Put", URL: "http://x", Err: &net.OpError{Op: "read", Err: os.ErrDeadlineExceeded}}, true},
		{"an unknown host", &url.Error{Op: "Put", URL: "http://x", Err: &net.DNSError{Err: "no such host", Name: "x", IsNotFound: true}}, false},
		{"a bug of ours", errors.New("s3: something else"), false},
	}
	for _, c := range cases {
		require.Equal(t, c.want, retryables.IsErrorRetryable(c.err).Bool(), c.name)
	}
	for _, code := range []string{"SlowDown", "Throttling", "RequestTimeout", "InternalError", "ServiceUnavailable"} {
		require.True(t, retryableCode(code), code)
	}
	require.False(t, retryableCode("AccessDenied"))
}
