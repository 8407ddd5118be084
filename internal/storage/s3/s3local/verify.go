package s3local

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"transcriber/internal/storage/s3"
)

// S3's own limits: the longest X-Amz-Expires, and how far a request's
// X-Amz-Date may be off (a presigned URL's only ahead).
const (
	MaxPresignExpires = 7 * 24 * time.Hour
	MaxClockSkew      = 15 * time.Minute
)

const (
	sigAlgorithm    = "AWS4-HMAC-SHA256"
	sigService      = "s3"
	sigTerminator   = "aws4_request"
	amzDateFormat   = "20060102T150405Z"
	unsignedPayload = "UNSIGNED-PAYLOAD"
	memoryBody      = 16 << 20 // a larger signed body is held in a temporary file while its hash is checked
)

type verifier struct {
	Options
	creds  aws.Credentials
	signer *v4.Signer
}

func newVerifier(o Options) *verifier {
	return &verifier{Options: o, creds: aws.Credentials{AccessKeyID: o.AccessKeyID, SecretAccessKey: o.SecretAccessKey}, signer: v4.NewSigner()}
}

type s3Error struct {
	Status        int
	Code, Message string
}

func refuse(status int, code, message string) *s3Error {
	return &s3Error{Status: status, Code: code, Message: message}
}

var (
	errAnonymous = refuse(http.StatusForbidden, "AccessDenied", "Access Denied")
	errSignature = refuse(http.StatusForbidden, "SignatureDoesNotMatch",
		"The request signature we calculated does not match the signature you provided. Check your key and signing method.")
	errKeyID = refuse(http.StatusForbidden, "InvalidAccessKeyId",
		"The AWS Access Key Id you provided does not exist in our records.")
	errExpired  = refuse(http.StatusForbidden, "AccessDenied", "Request has expired")
	errNotYet   = refuse(http.StatusForbidden, "AccessDenied", "Request is not yet valid")
	errSkewed   = refuse(http.StatusForbidden, "RequestTimeTooSkewed", "The difference between the request time and the current time is too large.")
	errHashDiff = refuse(http.StatusBadRequest, "XAmzContentSHA256Mismatch",
		"The provided 'x-amz-content-sha256' header does not match what was computed.")
)

// writeError answers S3's XML error (no body for HEAD).
func writeError(w http.ResponseWriter, r *http.Request, e *s3Error) {
	h := w.Header()
	h.Set("Content-Type", "application/xml")
	h.Del("Content-Length")
	w.WriteHeader(e.Status)
	if r.Method == http.MethodHead {
		return
	}
	doc := struct {
		XMLName xml.Name `xml:"Error"`
		Code    string   `xml:"Code"`
		Message string   `xml:"Message"`
	}{Code: e.Code, Message: e.Message}
	b, _ := xml.Marshal(doc)
	_, _ = w.Write([]byte(xml.Header))
	_, _ = w.Write(b)
}

func (v *verifier) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		payloadHash, err := v.check(r)
		if err != nil {
			writeError(w, r, err)
			return
		}
		if payloadHash != unsignedPayload && payloadHash != "" {
			cleanup, err := checkBody(r, payloadHash)
			defer cleanup()
			if err != nil {
				writeError(w, r, err)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// check verifies r's signature and returns its payload hash.
func (v *verifier) check(r *http.Request) (string, *s3Error) {
	q := r.URL.Query()
	auth := r.Header.Get("Authorization")
	presigned := q.Has("X-Amz-Signature") || q.Has("X-Amz-Algorithm") || q.Has("X-Amz-Credential")
	switch {
	case presigned && auth != "":
		return "", refuse(http.StatusBadRequest, "InvalidArgument", "Only one auth mechanism allowed")
	case presigned:
		return unsignedPayload, v.checkQuery(r, q)
	case auth != "":
		return v.checkHeader(r, auth)
	default:
		return "", errAnonymous
	}
}

type credential struct{ keyID, day, region, service, terminator string }

func parseCredential(s string) (credential, bool) {
	p := strings.Split(s, "/")
	if len(p) != 5 {
		return credential{}, false
	}
	return credential{p[0], p[1], p[2], p[3], p[4]}, true
}

// checkScope checks the key id and scope; malformed is the error code.
func (v *verifier) checkScope(c credential, at time.Time, malformed string) *s3Error {
	if c.keyID != v.AccessKeyID {
		return errKeyID
	}
	switch {
	case c.day != at.Format("20060102"):
		return refuse(http.StatusBadRequest, malformed, "the credential's date is not the day the request was signed")
	case c.region != s3.DefaultRegion:
		return refuse(http.StatusBadRequest, malformed, fmt.Sprintf("the region %q is wrong; expecting %q", c.region, s3.DefaultRegion))
	case c.service != sigService:
		return refuse(http.StatusBadRequest, malformed, "the credential's service must be s3")
	case c.terminator != sigTerminator:
		return refuse(http.StatusBadRequest, malformed, "the credential must end in aws4_request")
	}
	return nil
}

func (v *verifier) checkQuery(r *http.Request, q url.Values) *s3Error {
	const malformed = "AuthorizationQueryParametersError"
	for _, name := range []string{"X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Date", "X-Amz-Expires", "X-Amz-SignedHeaders", "X-Amz-Signature"} {
		if len(q[name]) != 1 || q[name][0] == "" {
			return refuse(http.StatusBadRequest, malformed, "the query must carry exactly one "+name)
		}
	}
	alg, credStr, date, expires, names, signature := q.Get("X-Amz-Algorithm"), q.Get("X-Amz-Credential"), q.Get("X-Amz-Date"),
		q.Get("X-Amz-Expires"), q.Get("X-Amz-SignedHeaders"), q.Get("X-Amz-Signature")
	if alg != sigAlgorithm {
		return refuse(http.StatusBadRequest, malformed, "X-Amz-Algorithm only supports "+sigAlgorithm)
	}
	cred, ok := parseCredential(credStr)
	if !ok {
		return refuse(http.StatusBadRequest, malformed, "Error parsing the X-Amz-Credential parameter")
	}
	at, err := time.Parse(amzDateFormat, date)
	if err != nil {
		return refuse(http.StatusBadRequest, malformed, "X-Amz-Date must be in the ISO8601 Long Format \"yyyyMMdd'T'HHmmss'Z'\"")
	}
	secs, err := strconv.ParseInt(expires, 10, 64)
	if err != nil || secs < 1 || secs > int64(MaxPresignExpires/time.Second) {
		return refuse(http.StatusBadRequest, malformed, "X-Amz-Expires must be between 1 and 604800 seconds")
	}
	if e := v.checkScope(cred, at, malformed); e != nil {
		return e
	}
	now := v.Clock.Now()
	if !now.Before(at.Add(time.Duration(secs) * time.Second)) {
		return errExpired
	}
	if at.After(now.Add(MaxClockSkew)) {
		return errNotYet
	}
	signed, e := signedHeaders(names, malformed)
	if e != nil {
		return e
	}
	// A presigned request may carry its payload's hash unsigned.
	if e := unsignedAmzHeaders(r, signed, "x-amz-content-sha256"); e != nil {
		return e
	}

	req := v.canonical(r, signed)
	rest := url.Values{}
	for k, vs := range q {
		if k != "X-Amz-Signature" {
			rest[k] = vs
		}
	}
	req.URL.RawQuery = rest.Encode()
	uri, _, err := v.signer.PresignHTTP(context.Background(), v.creds, req, unsignedPayload, sigService, s3.DefaultRegion, at, signerOptions)
	if err != nil {
		return errSignature
	}
	u, err := url.Parse(uri)
	if err != nil || !sameSignature(u.Query().Get("X-Amz-Signature"), signature) {
		return errSignature
	}
	return nil
}

func (v *verifier) checkHeader(r *http.Request, auth string) (string, *s3Error) {
	const malformed = "AuthorizationHeaderMalformed"
	rest, ok := strings.CutPrefix(auth, sigAlgorithm+" ")
	if !ok {
		return "", refuse(http.StatusBadRequest, "InvalidRequest", "The authorization mechanism you have provided is not supported. Please use "+sigAlgorithm+".")
	}
	fields := map[string]string{}
	for _, part := range strings.Split(rest, ",") {
		k, val, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok || fields[k] != "" {
			return "", refuse(http.StatusBadRequest, malformed, "The authorization header is malformed")
		}
		fields[k] = val
	}
	credStr, names, signature := fields["Credential"], fields["SignedHeaders"], fields["Signature"]
	if credStr == "" || names == "" || signature == "" || len(fields) != 3 {
		return "", refuse(http.StatusBadRequest, malformed, "The authorization header is malformed")
	}
	cred, ok := parseCredential(credStr)
	if !ok {
		return "", refuse(http.StatusBadRequest, malformed, "The authorization header is malformed; the Credential is malformed")
	}
	date := r.Header.Get("X-Amz-Date")
	at, err := time.Parse(amzDateFormat, date)
	if err != nil {
		return "", refuse(http.StatusForbidden, "AccessDenied", "AWS authentication requires a valid x-amz-date header")
	}
	if e := v.checkScope(cred, at, malformed); e != nil {
		return "", e
	}
	if d := v.Clock.Now().Sub(at); d > MaxClockSkew || d < -MaxClockSkew {
		return "", errSkewed
	}
	hash := r.Header.Get("X-Amz-Content-Sha256")
	switch {
	case hash == "":
		return "", refuse(http.StatusBadRequest, "InvalidRequest", "Missing required header for this request: x-amz-content-sha256")
	case hash != unsignedPayload && !isSHA256Hex(hash):
		return "", refuse(http.StatusBadRequest, "InvalidArgument", "x-amz-content-sha256 must be UNSIGNED-PAYLOAD or the hex SHA-256 of the body")
	}
	signed, e := signedHeaders(names, malformed)
	if e != nil {
		return "", e
	}
	for _, name := range []string{"x-amz-date", "x-amz-content-sha256"} {
		if !slices.Contains(signed, name) {
			return "", refuse(http.StatusForbidden, "AccessDenied", name+" must be a signed header")
		}
	}
	if e := unsignedAmzHeaders(r, signed); e != nil {
		return "", e
	}

	req := v.canonical(r, signed)
	req.URL.RawQuery = r.URL.RawQuery
	if err := v.signer.SignHTTP(context.Background(), v.creds, req, hash, sigService, s3.DefaultRegion, at, signerOptions); err != nil {
		return "", errSignature
	}
	_, got, _ := strings.Cut(req.Header.Get("Authorization"), "Signature=")
	if !sameSignature(got, signature) {
		return "", errSignature
	}
	return hash, nil
}

// signerOptions sign as S3 does: the path as sent, headers not hoisted.
func signerOptions(o *v4.SignerOptions) {
	o.DisableURIPathEscaping = true
	o.DisableHeaderHoisting = true
}

// unsignedAmzHeaders refuses an x-amz-* header the signature does not
// cover, as S3 does: x-amz-copy-source would turn a presigned PUT into a
// copy of any key.
func unsignedAmzHeaders(r *http.Request, signed []string, allowed ...string) *s3Error {
	var extra []string
	for name := range r.Header {
		lower := strings.ToLower(name)
		if strings.HasPrefix(lower, "x-amz-") && !slices.Contains(signed, lower) && !slices.Contains(allowed, lower) {
			extra = append(extra, lower)
		}
	}
	if len(extra) == 0 {
		return nil
	}
	sort.Strings(extra)
	return refuse(http.StatusForbidden, "AccessDenied",
		"There were headers present in the request which were not signed: "+strings.Join(extra, ", "))
}

// signedHeaders parses a SignedHeaders list, which must sign host.
func signedHeaders(names, malformed string) ([]string, *s3Error) {
	list := strings.Split(names, ";")
	for _, n := range list {
		if n == "" || n != strings.ToLower(n) {
			return nil, refuse(http.StatusBadRequest, malformed, "SignedHeaders must be lowercase names separated by ;")
		}
	}
	if !slices.Contains(list, "host") {
		return nil, refuse(http.StatusForbidden, "AccessDenied", "host must be a signed header")
	}
	return list, nil
}

// canonical is r restricted to its signed headers. The signer adds a
// positive content-length, so an unsigned length, or a signed one r does
// not carry, makes another signature.
func (v *verifier) canonical(r *http.Request, signed []string) *http.Request {
	req := &http.Request{
		Method: r.Method,
		URL:    &url.URL{Path: r.URL.Path, RawPath: r.URL.RawPath},
		Header: http.Header{},
		Host:   r.Host,
	}
	for _, name := range signed {
		switch name {
		case "host":
		case "content-length":
			req.ContentLength = r.ContentLength
		default:
			if vals := r.Header.Values(name); len(vals) > 0 {
				req.Header[http.CanonicalHeaderKey(name)] = vals
			}
		}
	}
	return req
}

func sameSignature(computed, given string) bool {
	return computed != "" && hmac.Equal([]byte(computed), []byte(given))
}

func isSHA256Hex(s string) bool {
	if len(s) != 2*sha256.Size {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil && s == strings.ToLower(s)
}

// checkBody checks the body's SHA-256 before the store, which writes as it
// reads, gets it; cleanup removes what held it.
func checkBody(r *http.Request, payloadHash string) (cleanup func(), _ *s3Error) {
	cleanup = func() {}
	sum := sha256.New()
	var held io.ReadSeeker
	var n int64
	if r.ContentLength >= 0 && r.ContentLength <= memoryBody {
		b, err := io.ReadAll(io.TeeReader(r.Body, sum))
		if err != nil {
			return cleanup, refuse(http.StatusBadRequest, "IncompleteBody", "The request body could not be read")
		}
		held, n = bytes.NewReader(b), int64(len(b))
	} else {
		f, err := os.CreateTemp("", "s3local-body-*")
		if err != nil {
			return cleanup, refuse(http.StatusInternalServerError, "InternalError", "We encountered an internal error. Please try again.")
		}
		cleanup = func() { _ = f.Close(); _ = os.Remove(f.Name()) }
		if n, err = io.Copy(io.MultiWriter(f, sum), r.Body); err != nil {
			return cleanup, refuse(http.StatusBadRequest, "IncompleteBody", "The request body could not be read")
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return cleanup, refuse(http.StatusInternalServerError, "InternalError", "We encountered an internal error. Please try again.")
		}
		held = f
	}
	if hex.EncodeToString(sum.Sum(nil)) != payloadHash {
		return cleanup, errHashDiff
	}
	_ = r.Body.Close()
	r.Body = io.NopCloser(held)
	r.ContentLength = n
	return cleanup, nil
}
