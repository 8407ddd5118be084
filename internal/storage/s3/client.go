package s3

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
)

const (
	expectContinueOver = 2 << 20 // a larger body waits for "100 Continue" (the SDK's threshold)
	errorBodyLimit     = 64 << 10
	userAgent          = "transcriber-s3"
)

// Retries are the SDK's standard retryer's (aws/retry: 500, 502-504,
// timeout and throttling codes, broken connections, jittered backoff up to
// 20 s), plus 429, S3's retryable codes and a connection broken
// mid-answer; without its retry quota: MaxAttempts bounds a request.
var (
	retryCodes = map[string]struct{}{"InternalError": {}, "ServiceUnavailable": {}}
	retryables = retry.IsErrorRetryables(slices.Concat(retry.DefaultRetryables, []retry.IsErrorRetryable{
		retry.RetryableHTTPStatusCode{Codes: map[int]struct{}{http.StatusTooManyRequests: {}}},
		retry.RetryableErrorCode{Codes: retryCodes},
		retry.IsErrorRetryableFunc(func(err error) aws.Ternary {
			if errors.Is(err, io.ErrUnexpectedEOF) {
				return aws.TrueTernary
			}
			return aws.UnknownTernary
		}),
	}))
	backoffDelay = retry.NewExponentialJitterBackoff(retry.DefaultMaxBackoff)
)

// request is one S3 request on one object, built and signed anew for each
// attempt.
type request struct {
	method string
	key    string
	query  url.Values  // sub-resources and parameters
	header http.Header // signed with the rest
	body   []byte      // sent as is, hashed for the signature; nil for none

	open bool // send returns a successful answer unread (Get)
	// read reads a successful answer; its error is the attempt's, so a 200
	// holding an S3 error document is retried.
	read func(*http.Response) error
}

// do sends rq, retried while worth it and ctx lasts. A non-2xx answer is an
// *apiError; a transport error quotes the URL, never a signature (requests
// are signed in headers).
func (s *Store) do(ctx context.Context, rq *request) error {
	resp, err := s.send(ctx, rq)
	if resp != nil { // only with rq.open
		closeBody(resp)
	}
	return err
}

func (s *Store) send(ctx context.Context, rq *request) (*http.Response, error) {
	hash := emptySHA256
	if len(rq.body) > 0 {
		sum := sha256.Sum256(rq.body)
		hash = hex.EncodeToString(sum[:])
	}
	for attempt := 1; ; attempt++ {
		resp, err := s.attempt(ctx, rq, hash)
		if err == nil {
			return resp, nil
		}
		if attempt >= s.maxAttempts || ctx.Err() != nil || !retryables.IsErrorRetryable(err).Bool() {
			return nil, err
		}
		if s.sleep(ctx, backoff(attempt)) != nil {
			return nil, err // ctx ended while waiting: the last answer tells more
		}
	}
}

func (s *Store) attempt(ctx context.Context, rq *request, payloadHash string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, rq.method, s.objectURL(rq.key, rq.query).String(), nil)
	if err != nil {
		return nil, err
	}
	for name, values := range rq.header {
		req.Header[name] = append([]string(nil), values...)
	}
	req.Header.Set("Accept-Encoding", "identity")
	var guard *bodyGuard
	if len(rq.body) > 0 {
		guard = &bodyGuard{}
		req.Body = guard.reader(rq.body)
		req.GetBody = func() (io.ReadCloser, error) { return guard.reader(rq.body), nil }
		req.ContentLength = int64(len(rq.body))
	}
	if err := s.signer.sign(req, payloadHash, s.wallClock.Now()); err != nil {
		return nil, fmt.Errorf("s3: sign the request: %w", err)
	}
	req.Header.Set("User-Agent", userAgent)
	if len(rq.body) > expectContinueOver {
		req.Header.Set("Expect", "100-continue")
	}

	resp, err := s.http.Do(req)
	if guard != nil {
		guard.revoke() // the transport may still hold rq.body, a part buffer about to be refilled
	}
	if err != nil {
		return nil, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		defer closeBody(resp)
		return nil, readError(resp)
	}
	if rq.open {
		return resp, nil
	}
	defer closeBody(resp)
	if rq.read != nil {
		if err := rq.read(resp); err != nil {
			return nil, err
		}
	}
	return nil, nil
}

// closeBody drains a little (so the connection is reused) and closes.
func closeBody(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, errorBodyLimit))
	_ = resp.Body.Close()
}

// objectURL is key's URL, its segments escaped as S3 signs them.
func (s *Store) objectURL(key string, query url.Values) *url.URL {
	u := &url.URL{Scheme: s.scheme, Host: s.host, Path: "/" + key, RawPath: "/" + escapeKey(key)}
	if s.virtualHost {
		u.Host = s.bucket + "." + s.host
	} else {
		u.Path = "/" + s.bucket + u.Path
		u.RawPath = "/" + s.bucket + u.RawPath
	}
	if len(query) > 0 {
		u.RawQuery = query.Encode() // signing puts it in canonical form
	}
	return u
}

// backoff is the SDK's pause after the attempt-th failure: random below
// 2^attempt s, at most 20 s.
func backoff(attempt int) time.Duration {
	d, err := backoffDelay.BackoffDelay(attempt, nil)
	if err != nil { // no randomness to be had: wait the longest
		return retry.DefaultMaxBackoff
	}
	return d
}

// retryableCode: a timeout or throttling code, or one of retryCodes.
func retryableCode(code string) bool {
	_, timeout := retry.DefaultRetryableErrorCodes[code]
	_, throttling := retry.DefaultThrottleErrorCodes[code]
	_, ours := retryCodes[code]
	return timeout || throttling || ours
}

// apiError is a failed answer. A HEAD answer has no body: its code is the
// status's name without spaces ("NotFound"), as the SDK named it.
type apiError struct {
	Status    int
	Code      string
	Message   string
	RequestID string
}

func (e *apiError) Error() string {
	s := fmt.Sprintf("status %d, code %s", e.Status, e.Code)
	if e.RequestID != "" {
		s += ", request id " + e.RequestID
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// ErrorCode and HTTPStatusCode are what the SDK's retryer reads.
func (e *apiError) ErrorCode() string   { return e.Code }
func (e *apiError) HTTPStatusCode() int { return e.Status }

type errorDocument struct {
	XMLName   xml.Name
	Code      string `xml:"Code"`
	Message   string `xml:"Message"`
	RequestID string `xml:"RequestId"`
}

// errorIn is the S3 Error document body holds, if it holds one.
func errorIn(resp *http.Response, body []byte) *apiError {
	var doc errorDocument
	if xml.Unmarshal(body, &doc) != nil || doc.XMLName.Local != "Error" {
		return nil
	}
	return &apiError{Status: resp.StatusCode, Code: strings.TrimSpace(doc.Code), Message: strings.TrimSpace(doc.Message),
		RequestID: cmp.Or(doc.RequestID, resp.Header.Get("X-Amz-Request-Id"))}
}

func readError(resp *http.Response) *apiError {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, errorBodyLimit))
	e := errorIn(resp, body)
	if e == nil {
		e = &apiError{Status: resp.StatusCode, RequestID: resp.Header.Get("X-Amz-Request-Id")}
	}
	e.Code = cmp.Or(e.Code, strings.ReplaceAll(http.StatusText(resp.StatusCode), " ", ""), "UnknownError")
	return e
}

var errBodyRevoked = errors.New("s3: request body read after its request ended")

// bodyGuard hands out readers of one buffer that fail once it is revoked.
type bodyGuard struct {
	mu      sync.Mutex
	revoked bool
}

func (g *bodyGuard) reader(b []byte) io.ReadCloser {
	return &guardedReader{g: g, r: bytes.NewReader(b)}
}

func (g *bodyGuard) revoke() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.revoked = true
}

type guardedReader struct {
	g *bodyGuard
	r *bytes.Reader
}

func (r *guardedReader) Read(p []byte) (int, error) {
	r.g.mu.Lock()
	defer r.g.mu.Unlock()
	if r.g.revoked {
		return 0, errBodyRevoked
	}
	return r.r.Read(p)
}

func (r *guardedReader) Close() error { return nil }
