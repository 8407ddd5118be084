package s3

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// AWS Signature Version 4, as S3 takes it: the canonical request, the string
// to sign and the derived key of
// https://docs.aws.amazon.com/AmazonS3/latest/API/sig-v4-header-based-auth.html
// and .../sigv4-query-string-auth.html. The rules follow the SDK's signer
// (aws-sdk-go-v2/aws/signer/v4 with DisableURIPathEscaping, as its S3
// client uses it), and sigv4_test.go checks both give the same signature:
//
//   - the canonical URI is the request's escaped path as sent: S3 does not
//     escape it again (objectURL escapes each key segment once);
//   - the canonical query is every parameter sorted by name, then value,
//     each escaped as RFC 3986 says (space as %20, never +), name=value with
//     an empty value kept as name=;
//   - the signed headers are host, content-length when the length is more
//     than zero, and every header of the request but Authorization,
//     User-Agent, X-Amzn-Trace-Id, Expect and Transfer-Encoding; lowercase,
//     sorted, values trimmed, inner runs of spaces cut to one, repeated
//     values joined by commas; host without a default port.
const (
	sigAlgorithm    = "AWS4-HMAC-SHA256"
	sigService      = "s3"
	sigTerminator   = "aws4_request"
	amzDateFormat   = "20060102T150405Z"
	amzDayFormat    = "20060102"
	unsignedPayload = "UNSIGNED-PAYLOAD"
	// emptySHA256 is the hex SHA-256 of no bytes: the payload hash of a
	// request without a body.
	emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
)

// unsignedHeaders are left out of the signature: a proxy or the transport
// may change them (the SDK's list).
var unsignedHeaders = map[string]bool{
	"Authorization":     true,
	"User-Agent":        true,
	"X-Amzn-Trace-Id":   true,
	"Expect":            true,
	"Transfer-Encoding": true,
}

// signer signs S3 requests with one static key.
type signer struct {
	keyID  string
	secret string
	region string
}

// sign signs req in its headers at time at: it sets X-Amz-Date,
// X-Amz-Content-Sha256 (payloadHash, the hex SHA-256 of the body) and
// Authorization, and rewrites req.URL.RawQuery in canonical form, which is
// what gets sent. Headers set after sign are not signed.
func (s signer) sign(req *http.Request, payloadHash string, at time.Time) {
	at = at.UTC()
	req.Header.Set("X-Amz-Date", at.Format(amzDateFormat))
	req.Header.Set("X-Amz-Content-Sha256", payloadHash)
	host := signingHost(req)
	req.Host = host // the Host sent is the one signed
	names, headers := canonicalHeaders(host, req.Header, req.ContentLength)
	query := canonicalQuery(req.URL.Query())
	req.URL.RawQuery = query

	scope := s.scope(at)
	signature := s.signature(at, scope, canonicalRequest(req.Method, canonicalURI(req.URL), query, headers, names, payloadHash))
	req.Header.Set("Authorization", sigAlgorithm+" Credential="+s.keyID+"/"+scope+
		", SignedHeaders="+names+", Signature="+signature)
}

// presign returns req's URL signed in its query at time at, valid for
// expires (whole seconds), with an unsigned payload as S3 wants for
// presigned URLs. The headers req carries (and its ContentLength when more
// than zero) are signed: whoever uses the URL must send them with the same
// values. (The SDK would move X-Amz-* headers other than S3's signed ones
// into the query; presign is never given any.) req is not changed.
func (s signer) presign(req *http.Request, expires time.Duration, at time.Time) string {
	at = at.UTC()
	scope := s.scope(at)
	host := signingHost(req)
	names, headers := canonicalHeaders(host, req.Header, req.ContentLength)

	q := req.URL.Query()
	q.Set("X-Amz-Algorithm", sigAlgorithm)
	q.Set("X-Amz-Credential", s.keyID+"/"+scope)
	q.Set("X-Amz-Date", at.Format(amzDateFormat))
	q.Set("X-Amz-Expires", strconv.FormatInt(int64(expires/time.Second), 10))
	q.Set("X-Amz-SignedHeaders", names)
	query := canonicalQuery(q)

	signature := s.signature(at, scope, canonicalRequest(req.Method, canonicalURI(req.URL), query, headers, names, unsignedPayload))
	u := *req.URL
	u.RawQuery = query + "&X-Amz-Signature=" + signature
	return u.String()
}

// scope is the credential scope: day/region/s3/aws4_request.
func (s signer) scope(at time.Time) string {
	return at.Format(amzDayFormat) + "/" + s.region + "/" + sigService + "/" + sigTerminator
}

// signature is the hex HMAC of the string to sign for canonical, under the
// key derived for the day, region and service.
func (s signer) signature(at time.Time, scope, canonical string) string {
	sum := sha256.Sum256([]byte(canonical))
	toSign := sigAlgorithm + "\n" + at.Format(amzDateFormat) + "\n" + scope + "\n" + hex.EncodeToString(sum[:])

	key := hmacSHA256([]byte("AWS4"+s.secret), at.Format(amzDayFormat))
	key = hmacSHA256(key, s.region)
	key = hmacSHA256(key, sigService)
	key = hmacSHA256(key, sigTerminator)
	return hex.EncodeToString(hmacSHA256(key, toSign))
}

func hmacSHA256(key []byte, data string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(data))
	return m.Sum(nil)
}

func canonicalRequest(method, uri, query, headers, names, payloadHash string) string {
	return method + "\n" + uri + "\n" + query + "\n" + headers + "\n" + names + "\n" + payloadHash
}

// canonicalURI is the path as it goes on the wire, "/" when empty.
func canonicalURI(u *url.URL) string {
	if p := u.EscapedPath(); p != "" {
		return p
	}
	return "/"
}

// canonicalQuery encodes q sorted by name and, within a name, by value,
// escaping all but RFC 3986's unreserved characters.
func canonicalQuery(q url.Values) string {
	for _, values := range q {
		sort.Strings(values)
	}
	// Encode sorts by name and escapes as a form does, where a space is +;
	// a + of the data is %2B by then, so every + left is a space.
	return strings.ReplaceAll(q.Encode(), "+", "%20")
}

// signingHost is the host the request goes to, without the scheme's
// default port.
func signingHost(req *http.Request) string {
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	i := strings.LastIndexByte(host, ':')
	if i < 0 || strings.LastIndexByte(host, ']') > i {
		return host // no port
	}
	switch port := host[i+1:]; {
	case port == "443" && strings.EqualFold(req.URL.Scheme, "https"),
		port == "80" && strings.EqualFold(req.URL.Scheme, "http"):
		return host[:i]
	}
	return host
}

// canonicalHeaders returns the signed header names (lowercase, sorted,
// joined by ;) and the canonical headers block (name:value lines, each
// ending in a newline).
func canonicalHeaders(host string, header http.Header, contentLength int64) (names, block string) {
	signed := map[string][]string{"host": {host}}
	if contentLength > 0 {
		signed["content-length"] = []string{strconv.FormatInt(contentLength, 10)}
	}
	for name, values := range header {
		canonical := http.CanonicalHeaderKey(name)
		if unsignedHeaders[canonical] || canonical == "Content-Length" || canonical == "Host" {
			continue
		}
		lower := strings.ToLower(name)
		signed[lower] = append(signed[lower], values...)
	}
	list := make([]string, 0, len(signed))
	for name := range signed {
		list = append(list, name)
	}
	sort.Strings(list)

	var b strings.Builder
	for _, name := range list {
		b.WriteString(name)
		b.WriteByte(':')
		for i, v := range signed[name] {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(trimHeaderValue(v))
		}
		b.WriteByte('\n')
	}
	return strings.Join(list, ";"), b.String()
}

// trimHeaderValue trims v and cuts each inner run of spaces to one.
func trimHeaderValue(v string) string {
	v = strings.TrimSpace(v)
	if !strings.Contains(v, "  ") {
		return v
	}
	var b strings.Builder
	b.Grow(len(v))
	space := false
	for i := 0; i < len(v); i++ {
		if v[i] == ' ' {
			if space {
				continue
			}
			space = true
		} else {
			space = false
		}
		b.WriteByte(v[i])
	}
	return b.String()
}

// escapeKey escapes an object key for a URL path: every byte but RFC 3986's
// unreserved characters and the slash becomes %XX, the form S3 signs.
func escapeKey(key string) string {
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(key))
	for i := 0; i < len(key); i++ {
		c := key[i]
		if unreserved(c) || c == '/' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexDigits[c>>4])
		b.WriteByte(hexDigits[c&15])
	}
	return b.String()
}

func unreserved(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}
