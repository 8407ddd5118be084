package translate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"transcriber/internal/errs"
	"transcriber/internal/ident"
)

// request is the body of a translate request
// (translate/api-ref/Translation/translate.md).
type request struct {
	FolderID           string   `json:"folderId,omitempty"`
	Texts              []string `json:"texts"`
	TargetLanguageCode string   `json:"targetLanguageCode"`
	SourceLanguageCode string   `json:"sourceLanguageCode,omitempty"`
	Format             string   `json:"format"`
}

// formatPlainText is the texts' format: "Text without markup", the API's
// default, said aloud.
const formatPlainText = "PLAIN_TEXT"

// answer is the body of a 200.
type answer struct {
	Translations []translation `json:"translations"`
}

type translation struct {
	Text                 string `json:"text"`
	DetectedLanguageCode string `json:"detectedLanguageCode"`
}

// errorAnswer is the body of any other answer: google.rpc.Status, {"code",
// "message", "details"} (_includes/errors-handling.md).
type errorAnswer struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

const (
	// maxAnswer bounds a 200's body read. A request holds at most 10,000
	// characters; their translation, each character at most a 6-byte
	// \uXXXX escape (translate/concepts/translate-html.md) and the text
	// perhaps twice as long, is 120 KB. An answer past 1 MiB is not one.
	maxAnswer = 1 << 20
	// maxErrorAnswer bounds an error answer's read: a status is a line.
	maxErrorAnswer = 8 << 10
	// traceHeader names an answer for support
	// (translate/api-ref/support-headers.md).
	traceHeader = "x-server-trace-id"
)

// send translates one request's texts: paced, authorized, retried on 429,
// 5xx and a connection that could not be made, at most MaxAttempts times.
// It adds to res what was billed, or may have been.
func (c *Client) send(ctx context.Context, texts []string, target, source string, res *Result) ([]translation, error) {
	chars := Chars(texts)
	for attempt := 1; ; attempt++ {
		out, wait, err := c.attempt(ctx, texts, target, source, chars, res)
		if err == nil {
			return out, nil
		}
		if wait < 0 || attempt >= c.cfg.MaxAttempts {
			return nil, err
		}
		if wait == 0 {
			wait = c.backoff(attempt)
		}
		status, trace := 0, ""
		var ae *apiError
		if errors.As(err, &ae) {
			status, trace = ae.status, ae.trace
		}
		c.cfg.Log.Warn("translate retry", "status", status, "code", errs.CodeOf(err), "attempt", attempt,
			"wait_ms", wait.Milliseconds(), "chars", chars, "trace_id", trace)
		if serr := c.cfg.Sleep(ctx, wait); serr != nil {
			return nil, errs.Wrap(serr, errs.Unavailable, CodeUnavailable, msgUnavailable)
		}
	}
}

// attempt sends the request once. After an error, wait is how long to wait
// before the next attempt: 0 for the backoff, negative for no next attempt.
func (c *Client) attempt(ctx context.Context, texts []string, target, source string, chars int64, res *Result) (out []translation, wait time.Duration, err error) {
	if err := c.pacer.Take(ctx, chars); err != nil {
		if errs.KindOf(err) == errs.Internal {
			err = errs.Wrap(err, errs.Unavailable, CodeUnavailable, msgUnavailable)
		}
		return nil, -1, err
	}
	auth, folder, err := c.creds.Authorization(ctx)
	if err != nil {
		return nil, -1, errs.Wrap(err, errs.Unavailable, codeAuthUnavailable, msgUnavailable)
	}
	body, err := json.Marshal(request{
		FolderID: folder, Texts: texts, TargetLanguageCode: target, SourceLanguageCode: source, Format: formatPlainText,
	})
	if err != nil {
		return nil, -1, errs.Wrap(errors.New("encode the request"), errs.Internal, codeInternal, "")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.cfg.URL, bytes.NewReader(body))
	if err != nil {
		return nil, -1, errs.Wrap(errors.New(c.clean(err.Error(), texts)), errs.Internal, codeInternal, "")
	}
	req.Header.Set("Authorization", auth)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-client-request-id", ident.New())
	resp, err := c.http.Do(req)
	if err != nil {
		cause := errors.New(c.clean(err.Error(), texts))
		if notSent(err) {
			return nil, 0, errs.Wrap(cause, errs.Unavailable, CodeUnavailable, msgUnavailable)
		}
		// Sent, perhaps read and billed: not sent again here.
		res.UnsureChars += chars
		return nil, -1, errs.Wrap(cause, errs.Unavailable, CodeUnavailable, msgUnavailable)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return c.refusal(resp, texts)
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil {
		res.UnsureChars += chars
		return nil, -1, errs.Wrap(errors.New(c.clean(err.Error(), texts)), errs.Unavailable, CodeUnavailable, msgUnavailable)
	}
	// Answered: billed, whatever the body turns out to be.
	res.Requests++
	res.BilledChars += chars
	if len(raw) > maxAnswer {
		return nil, -1, errs.Wrap(fmt.Errorf("the answer is over %d bytes", maxAnswer), errs.Internal, codeInternal, "")
	}
	var a answer
	if json.Unmarshal(raw, &a) != nil {
		return nil, -1, errs.Wrap(errors.New("the answer is not {\"translations\": […]}"), errs.Internal, codeInternal, "")
	}
	if len(a.Translations) != len(texts) {
		return nil, -1, errs.Wrap(fmt.Errorf("the answer has %d translations for %d texts", len(a.Translations), len(texts)),
			errs.Internal, codeInternal, "")
	}
	return a.Translations, 0, nil
}

// refusal reads an answer other than 200 and classifies it; a retryable
// one waits its Retry-After, or the backoff of its attempt (0), and one
// asking to wait longer than MaxRetryAfter is not retried.
func (c *Client) refusal(resp *http.Response, texts []string) ([]translation, time.Duration, error) {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorAnswer))
	var a errorAnswer
	_ = json.Unmarshal(body, &a) // an answer that is not JSON is classified by its status alone
	e := &apiError{
		status:  resp.StatusCode,
		code:    a.Code,
		message: c.clean(a.Message, texts),
		trace:   cut(c.clean(resp.Header.Get(traceHeader), texts), 64),
	}
	e.retryAfter, e.hasRetry = parseRetryAfter(resp.Header.Get("Retry-After"), c.cfg.Clock.Now())
	err, retry := classify(e, a.Message)
	switch {
	case !retry:
		return nil, -1, err
	case e.hasRetry && e.retryAfter > c.cfg.MaxRetryAfter:
		return nil, -1, err
	case e.hasRetry:
		return nil, e.retryAfter, err
	default:
		return nil, 0, err // the caller's backoff
	}
}

// backoff is the wait after the nth failed attempt without a Retry-After:
// Backoff, doubled each time, at most MaxBackoff.
func (c *Client) backoff(n int) time.Duration {
	d := c.cfg.Backoff
	for i := 1; i < n && d < c.cfg.MaxBackoff; i++ {
		d *= 2
	}
	return min(d, c.cfg.MaxBackoff)
}

// notSent reports whether a transport error came before the request was
// written: no connection could be made, so the API never saw it.
func notSent(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// maxRetryAfterHeader bounds a Retry-After believed: a day.
const maxRetryAfterHeader = 24 * time.Hour

// parseRetryAfter reads Retry-After: delay-seconds or an HTTP date
// (RFC 9110, 10.2.3), relative to now.
func parseRetryAfter(h string, now time.Time) (time.Duration, bool) {
	h = strings.TrimSpace(h)
	if h == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(h, 10, 64); err == nil {
		if secs < 0 {
			return 0, false
		}
		return min(time.Duration(min(secs, int64(maxRetryAfterHeader/time.Second)))*time.Second, maxRetryAfterHeader), true
	}
	t, err := http.ParseTime(h)
	if err != nil {
		return 0, false
	}
	return min(max(t.Sub(now), 0), maxRetryAfterHeader), true
}
