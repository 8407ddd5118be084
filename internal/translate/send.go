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
// (translate/api-ref/Translation/translate.md); Format PLAIN_TEXT is the default said aloud.
type request struct {
	FolderID           string   `json:"folderId,omitempty"`
	Texts              []string `json:"texts"`
	TargetLanguageCode string   `json:"targetLanguageCode"`
	SourceLanguageCode string   `json:"sourceLanguageCode,omitempty"`
	Format             string   `json:"format"`
}

// answer is the body of a 200.
type answer struct {
	Translations []translation `json:"translations"`
}

type translation struct {
	Text string `json:"text"`
}

// errorAnswer is any other answer's body: google.rpc.Status
// (_includes/errors-handling.md).
type errorAnswer struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

const (
	// maxAnswer: 10,000 characters twice as long, each a 6-byte \uXXXX
	// escape, are 120 KB; past 1 MiB it is no answer.
	maxAnswer      = 1 << 20
	maxErrorAnswer = 8 << 10
	traceHeader    = "x-server-trace-id" // translate/api-ref/support-headers.md
)

// send translates one request's texts, retried on 429, 5xx and a failed
// dial, adding to res what was or may have been billed.
func (c *Client) send(ctx context.Context, texts []string, target, source string, res *Result) ([]translation, error) {
	chars := Chars(texts)
	for attempt := 1; ; attempt++ {
		out, wait, err := c.attempt(ctx, texts, target, source, chars, res)
		if err == nil || wait < 0 || attempt >= c.cfg.MaxAttempts {
			return out, err
		}
		if wait == 0 {
			wait = backoffAfter(attempt)
		}
		status, trace := 0, ""
		var ae *apiError
		if errors.As(err, &ae) {
			status, trace = ae.status, ae.trace
		}
		c.cfg.Log.Warn("translate retry", "status", status, "code", errs.CodeOf(err), "attempt", attempt,
			"wait_ms", wait.Milliseconds(), "chars", chars, "trace_id", trace)
		if serr := c.cfg.Sleep(ctx, wait); serr != nil {
			return nil, unavailable(serr)
		}
	}
}

// attempt sends the request once; after an error wait is 0 for the
// backoff, negative for no retry.
func (c *Client) attempt(ctx context.Context, texts []string, target, source string, chars int64, res *Result) (out []translation, wait time.Duration, err error) {
	if err := c.pacer.Take(ctx, chars); err != nil {
		if errs.KindOf(err) == errs.Internal {
			err = unavailable(err)
		}
		return nil, -1, err
	}
	auth, folder, err := c.cfg.Credentials.Authorization(ctx)
	if err != nil {
		return nil, -1, errs.Wrap(err, errs.Unavailable, codeAuthUnavailable, msgUnavailable)
	}
	body, _ := json.Marshal(request{ // strings only: it cannot fail
		FolderID: folder, Texts: texts, TargetLanguageCode: target, SourceLanguageCode: source, Format: "PLAIN_TEXT",
	})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.cfg.URL, bytes.NewReader(body))
	if err != nil {
		return nil, -1, internal(errors.New(c.clean(err.Error(), texts)))
	}
	req.Header.Set("Authorization", auth)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-client-request-id", ident.New())
	resp, err := c.http.Do(req)
	if err != nil {
		if !notSent(err) { // sent, perhaps billed: not sent again
			res.UnsureChars, wait = res.UnsureChars+chars, -1
		}
		return nil, wait, unavailable(errors.New(c.clean(err.Error(), texts)))
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return c.refusal(resp, texts)
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil {
		res.UnsureChars += chars
		return nil, -1, unavailable(errors.New(c.clean(err.Error(), texts)))
	}
	res.BilledChars += chars // answered: billed, whatever the body
	var a answer
	switch {
	case len(raw) > maxAnswer:
		return nil, -1, internal(fmt.Errorf("the answer is over %d bytes", maxAnswer))
	case json.Unmarshal(raw, &a) != nil:
		return nil, -1, internal(errors.New("the answer is not {\"translations\": […]}"))
	case len(a.Translations) != len(texts):
		return nil, -1, internal(fmt.Errorf("the answer has %d translations for %d texts", len(a.Translations), len(texts)))
	}
	return a.Translations, 0, nil
}

func unavailable(cause error) error {
	return errs.Wrap(cause, errs.Unavailable, CodeUnavailable, msgUnavailable)
}

func internal(cause error) error { return errs.Wrap(cause, errs.Internal, codeInternal, "") }

// refusal classifies an answer other than 200; a retryable one waits its
// Retry-After (past DefaultMaxRetryAfter: no retry) or the backoff (0).
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
	if !retry || e.retryAfter > DefaultMaxRetryAfter {
		return nil, -1, err
	}
	return nil, e.retryAfter, err // 0 without Retry-After: the backoff
}

// backoffAfter is the wait after the nth failed attempt.
func backoffAfter(n int) time.Duration { return min(DefaultBackoff<<min(n-1, 10), DefaultMaxBackoff) }

// notSent: no connection was made, so the API never saw the request.
func notSent(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

const maxRetryAfterHeader = 24 * time.Hour // the most believed

// parseRetryAfter reads delay-seconds or an HTTP date (RFC 9110, 10.2.3).
func parseRetryAfter(h string, now time.Time) (time.Duration, bool) {
	h = strings.TrimSpace(h) // "" is neither form
	if secs, err := strconv.ParseInt(h, 10, 64); err == nil {
		if secs < 0 {
			return 0, false
		}
		return time.Duration(min(secs, int64(maxRetryAfterHeader/time.Second))) * time.Second, true
	}
	t, err := http.ParseTime(h)
	if err != nil {
		return 0, false
	}
	return min(max(t.Sub(now), 0), maxRetryAfterHeader), true
}
