package s3

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The signer is checked against the worked examples of AWS's S3 SigV4
// documentation (known answers from outside any code) here, and against
// the outputs of the package's earlier signer, byte for byte, in
// golden_test.go.

var sigTime = time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)

// The examples of
// https://docs.aws.amazon.com/AmazonS3/latest/API/sig-v4-header-based-auth.html
// and .../sigv4-query-string-auth.html.
func TestSignerAWSExamples(t *testing.T) {
	aws := newSigner("AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "us-east-1")
	at := time.Date(2013, 5, 24, 0, 0, 0, 0, time.UTC)
	signatureOf := func(req *http.Request) string {
		_, sig, ok := strings.Cut(req.Header.Get("Authorization"), "Signature=")
		require.True(t, ok, req.Header.Get("Authorization"))
		return sig
	}

	t.Run("GET object with a range", func(t *testing.T) {
		req, err := http.NewRequest(http.MethodGet, "https://examplebucket.s3.amazonaws.com/test.txt", nil)
		require.NoError(t, err)
		req.Header.Set("Range", "bytes=0-9")
		require.NoError(t, aws.sign(req, emptySHA256, at))
		require.Equal(t, "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "+
			"SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, "+
			"Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41", req.Header.Get("Authorization"))
		require.Equal(t, "20130524T000000Z", req.Header.Get("X-Amz-Date"))
	})

	t.Run("PUT object with a $ in the key", func(t *testing.T) {
		req, err := http.NewRequest(http.MethodPut, "https://examplebucket.s3.amazonaws.com/test%24file.text", nil)
		require.NoError(t, err)
		req.Header.Set("Date", "Fri, 24 May 2013 00:00:00 GMT")
		req.Header.Set("X-Amz-Storage-Class", "REDUCED_REDUNDANCY")
		require.NoError(t, aws.sign(req, "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072", at))
		require.Equal(t, "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd", signatureOf(req))
	})

	t.Run("GET a sub-resource with an empty value", func(t *testing.T) {
		req, err := http.NewRequest(http.MethodGet, "https://examplebucket.s3.amazonaws.com/?lifecycle", nil)
		require.NoError(t, err)
		require.NoError(t, aws.sign(req, emptySHA256, at))
		require.Equal(t, "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543", signatureOf(req))
		require.Equal(t, "lifecycle=", req.URL.RawQuery, "the query is sent as signed")
	})

	t.Run("GET with a sorted query", func(t *testing.T) {
		req, err := http.NewRequest(http.MethodGet, "https://examplebucket.s3.amazonaws.com/?prefix=J&max-keys=2", nil)
		require.NoError(t, err)
		require.NoError(t, aws.sign(req, emptySHA256, at))
		require.Equal(t, "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7", signatureOf(req))
	})

	t.Run("a presigned GET", func(t *testing.T) {
		req, err := http.NewRequest(http.MethodGet, "https://examplebucket.s3.amazonaws.com/test.txt", nil)
		require.NoError(t, err)
		got, err := aws.presign(req, 24*time.Hour, at)
		require.NoError(t, err)
		q := mustParseQuery(t, got)
		require.Equal(t, "aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404", q.Get("X-Amz-Signature"))
		require.Equal(t, "86400", q.Get("X-Amz-Expires"))
		require.Equal(t, "host", q.Get("X-Amz-SignedHeaders"))
		require.Equal(t, "AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request", q.Get("X-Amz-Credential"))
	})
}

func mustParseQuery(tb testing.TB, raw string) url.Values {
	tb.Helper()
	u, err := url.Parse(raw)
	require.NoError(tb, err)
	return u.Query()
}

// signCase is one request golden_test.go signs.
type signCase struct {
	name   string
	method string
	url    string // as objectURL or a caller would write it
	header http.Header
	length int64
	hash   string
}

// keys with everything that escaping could get wrong.
var awkwardKeys = []string{
	"jobs/01jabc/input.ogg",
	"with space/and  two",
	"unicode/привет/日本語/emoji-😀",
	"plus+sign/a+b",
	"equals=sign/a=b&c=d",
	"slashes//double/trailing/",
	"reserved/!*'();:@&=+$,?#[]",
	"percent/%41%2F%",
	"tilde~dot.dash-under_score",
	"/leading-slash",
}

func signCases(t *testing.T) []signCase {
	t.Helper()
	var cases []signCase
	for _, pathStyle := range []bool{false, true} {
		st, err := New(Config{
			Endpoint: "https://storage.yandexcloud.net", Bucket: "transcriber-media",
			AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", PathStyle: pathStyle,
		})
		require.NoError(t, err)
		style := map[bool]string{false: "virtual-hosted", true: "path-style"}[pathStyle]
		for _, key := range awkwardKeys {
			obj := func(q url.Values) string { return st.objectURL(key, q).String() }
			cases = append(cases,
				signCase{style + " GET " + key, http.MethodGet, obj(url.Values{"x-id": {"GetObject"}}), nil, 0, emptySHA256},
				signCase{style + " HEAD " + key, http.MethodHead, obj(nil), nil, 0, emptySHA256},
				signCase{style + " DELETE " + key, http.MethodDelete, obj(url.Values{"x-id": {"DeleteObject"}}), nil, 0, emptySHA256},
				signCase{
					style + " PUT " + key, http.MethodPut, obj(url.Values{"x-id": {"PutObject"}}),
					http.Header{"Content-Type": {"audio/ogg"}}, 1234, strings.Repeat("ab", 32),
				},
				signCase{
					style + " PUT part " + key, http.MethodPut,
					obj(url.Values{"partNumber": {"7"}, "uploadId": {"a+b/c=d e"}, "x-id": {"UploadPart"}}),
					http.Header{"Content-Type": {"application/octet-stream"}}, 8 << 20, strings.Repeat("cd", 32),
				},
				signCase{
					style + " POST uploads " + key, http.MethodPost, obj(url.Values{"uploads": {""}}),
					nil, 0, emptySHA256,
				},
				signCase{
					style + " PUT empty " + key, http.MethodPut, obj(url.Values{"x-id": {"PutObject"}}),
					http.Header{"Content-Type": {"text/plain; charset=utf-8"}}, 0, emptySHA256,
				},
			)
		}
	}
	cases = append(cases,
		signCase{
			"headers with runs of spaces, repeated values and ignored names", http.MethodPut,
			"https://b.example.com/k?z=1&a=2&a=1&m=%20x%2By",
			http.Header{
				"Content-Type":    {"  text/plain;   charset=utf-8  "},
				"X-Amz-Meta-List": {"b", " a  c "},
				"User-Agent":      {"ignored"},
				"Expect":          {"100-continue"},
				"X-Amzn-Trace-Id": {"ignored"},
				"Cache-Control":   {"no-cache"},
			}, 10, emptySHA256,
		},
		signCase{"a default https port", http.MethodGet, "https://storage.yandexcloud.net:443/b/k", nil, 0, emptySHA256},
		signCase{"a default http port", http.MethodGet, "http://127.0.0.1:80/b/k", nil, 0, emptySHA256},
		signCase{"another port", http.MethodGet, "http://127.0.0.1:9000/b/k", nil, 0, emptySHA256},
		signCase{"an empty path", http.MethodGet, "https://b.storage.yandexcloud.net", nil, 0, emptySHA256},
		signCase{"a query value with unicode", http.MethodGet, "https://b.example.com/k?p=%D0%BF+%2B", nil, 0, emptySHA256},
		signCase{"an unsigned payload", http.MethodPut, "https://b.example.com/k", nil, 5, unsignedPayload},
	)
	return cases
}

func newCaseRequest(t *testing.T, c signCase) *http.Request {
	t.Helper()
	req, err := http.NewRequest(c.method, c.url, nil)
	require.NoError(t, err)
	for name, values := range c.header {
		req.Header[name] = append([]string(nil), values...)
	}
	req.ContentLength = c.length
	return req
}

func TestEscapeKey(t *testing.T) {
	require.Equal(t, "a%20b/c%2Bd%3De/%D0%BF~._-/%25", escapeKey("a b/c+d=e/п~._-/%"))
	for _, key := range awkwardKeys {
		u := &url.URL{Path: "/" + key, RawPath: "/" + escapeKey(key)}
		require.Equal(t, "/"+escapeKey(key), u.EscapedPath(), "net/url keeps our escaping of %q", key)
		back, err := url.PathUnescape(escapeKey(key))
		require.NoError(t, err)
		require.Equal(t, key, back)
	}
}

func TestVirtualHosted(t *testing.T) {
	parse := func(raw string) *url.URL {
		u, err := url.Parse(raw)
		require.NoError(t, err)
		return u
	}
	cases := []struct {
		bucket, endpoint string
		pathStyle, want  bool
	}{
		{"transcriber-media", "https://storage.yandexcloud.net", false, true},
		{"transcriber-media", "https://storage.yandexcloud.net", true, false},
		{"transcriber-media", "http://127.0.0.1:9000", false, false},
		{"transcriber-media", "http://[::1]:9000", false, false},
		{"transcriber-media", "http://localhost:9000", false, true},
		{"my.dotted.bucket", "https://storage.yandexcloud.net", false, false},
		{"our.dotted.bucket", "http://minio.local:9000", false, true},
		{"a.bc.bucket", "http://minio.local:9000", false, false},
	}
	for _, c := range cases {
		require.Equal(t, c.want, virtualHosted(c.bucket, parse(c.endpoint), c.pathStyle), "%+v", c)
	}
}
