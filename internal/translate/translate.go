// Package translate is the adapter to Yandex Translate, REST API v2: texts
// in, their translations out, in order (docs/platform.md, "Translate").
//
// A call (Client.Translate) is cut into requests under the API's limit of
// 10,000 characters a request, each paced to the API's quotas (Pacer),
// retried on 429 and 5xx with a bounded backoff that honours Retry-After,
// and counted: Result.BilledChars is what the requests answered were
// billed, as the pricing counts it (Chars), so the caller can reserve
// before (Estimate) and charge after.
//
// It authenticates as SpeechKit does, with the same credentials
// (speechkit.Authorizer): an API key, or the function's IAM token. Every
// error is classified in one place (errors.go) into the errs vocabulary;
// neither the key, a token nor the texts ever reach an error's text or a
// log line.
package translate

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"transcriber/internal/clock"
	"transcriber/internal/speechkit"
)

// DefaultURL is the translate method of the API
// (translate/api-ref/Translation/translate.md).
const DefaultURL = "https://translate.api.cloud.yandex.net/translate/v2/translate"

// Defaults for the zero fields of Config.
const (
	// DefaultTimeout bounds one request, sending, waiting and reading. No
	// response time is documented; 10,000 characters are a few pages.
	DefaultTimeout = 30 * time.Second
	// DefaultMaxAttempts is how many times one request is sent at most:
	// the first and three retries.
	DefaultMaxAttempts = 4
	// DefaultBackoff is the wait before the first retry without a
	// Retry-After; it doubles with each retry up to DefaultMaxBackoff.
	// A second, because the request quota is counted per second.
	DefaultBackoff    = time.Second
	DefaultMaxBackoff = 8 * time.Second
	// DefaultMaxRetryAfter is the longest Retry-After waited for; an
	// answer asking for more ends the call at once (RetryAfter tells the
	// caller how long), rather than holding a function's time.
	DefaultMaxRetryAfter = 30 * time.Second
)

// Credentials authorize a request: speechkit.Authorizer, shared with the
// SpeechKit client, is the one the service uses.
type Credentials interface {
	// Authorization returns the Authorization header's value and the
	// folder to name in the request ("" for none). Its error holds no
	// secret.
	Authorization(ctx context.Context) (value, folder string, err error)
	// Scrub returns text with every secret the credentials handed out
	// replaced.
	Scrub(text string) string
}

// Config says where Translate is and how to reach it. The entrypoint fills
// it (TRANSLATE_URL and the SpeechKit credentials); this package reads no
// environment itself.
type Config struct {
	// URL is the translate method; default DefaultURL. https, or http with
	// Insecure (CheckURL).
	URL      string
	Insecure bool
	// Credentials authorize the requests; when nil, they are made from
	// APIKey, FolderID and MetadataURL as speechkit.NewAuthorizer makes
	// them. Pass the SpeechKit client's (speechkit.Client.Authorizer) to
	// share its IAM token.
	Credentials Credentials
	APIKey      string
	FolderID    string
	MetadataURL string
	// HTTPClient sends the requests; default speechkit.NewHTTPClient
	// (TLS 1.2 at the least, no redirect followed) with Timeout.
	HTTPClient *http.Client
	Timeout    time.Duration // one request; default DefaultTimeout
	// Clock reads the time for Retry-After dates and the default pacer;
	// default clock.System(). Sleep waits between attempts and for the
	// pacer; default clock.Sleep. Tests pass fakes of both.
	Clock clock.Clock
	Sleep func(ctx context.Context, d time.Duration) error
	// Pacer spaces the requests to the quotas; default an in-process
	// NewPacer(DefaultQuota, Clock, Sleep).
	Pacer Pacer
	// MaxAttempts, Backoff, MaxBackoff and MaxRetryAfter bound the retries
	// (the Default… constants).
	MaxAttempts   int
	Backoff       time.Duration
	MaxBackoff    time.Duration
	MaxRetryAfter time.Duration
	// Log gets a line for each retry: its status, attempt and wait, never a
	// text or a secret. Default slog.Default().
	Log *slog.Logger
}

func (c Config) withDefaults() Config {
	if c.URL == "" {
		c.URL = DefaultURL
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Clock == nil {
		c.Clock = clock.System()
	}
	if c.Sleep == nil {
		c.Sleep = clock.Sleep
	}
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = DefaultMaxAttempts
	}
	if c.Backoff <= 0 {
		c.Backoff = DefaultBackoff
	}
	if c.MaxBackoff <= 0 {
		c.MaxBackoff = DefaultMaxBackoff
	}
	if c.MaxRetryAfter <= 0 {
		c.MaxRetryAfter = DefaultMaxRetryAfter
	}
	if c.Log == nil {
		c.Log = slog.Default()
	}
	return c
}

// CheckURL reports whether raw is a URL New takes: https with a host and
// no user information, or http with insecure (speechkit.CheckSyncURL's
// rule, the same as SPEECHKIT_SYNC_URL's). Its error never quotes raw.
func CheckURL(raw string, insecure bool) error {
	if speechkit.CheckSyncURL(raw, insecure) != nil {
		return errors.New("translate: want an https URL without a user name or password, such as " +
			DefaultURL + " (http only when insecure)")
	}
	return nil
}

// Client calls Translate. Make one per instance and reuse it; it is safe for
// concurrent use.
type Client struct {
	cfg   Config
	creds Credentials
	http  *http.Client
	pacer Pacer
}

// New returns a client. It does no network I/O.
func New(cfg Config) (*Client, error) {
	cfg = cfg.withDefaults()
	if err := CheckURL(cfg.URL, cfg.Insecure); err != nil {
		return nil, err
	}
	creds := cfg.Credentials
	if creds == nil {
		a, err := speechkit.NewAuthorizer(cfg.APIKey, cfg.FolderID, cfg.MetadataURL, cfg.Clock)
		if err != nil {
			return nil, err
		}
		creds = a
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = speechkit.NewHTTPClient(cfg.Timeout)
	}
	pacer := cfg.Pacer
	if pacer == nil {
		pacer = NewPacer(DefaultQuota, cfg.Clock, cfg.Sleep)
	}
	return &Client{cfg: cfg, creds: creds, http: hc, pacer: pacer}, nil
}

// Result is what a call translated and what it cost.
type Result struct {
	// Texts are the translations, one for each text given, in order. After
	// an error it holds the texts translated before it: a prefix of the
	// input, which a caller can keep so as not to pay for them again.
	Texts []string
	// Detected is the source language the API detected for each text of
	// Texts (its first request's, for a text sent in pieces); "" for a
	// blank text, and what the API says (it may be empty) when the source
	// was given.
	Detected []string
	// Requests is the number of requests answered with translations.
	Requests int
	// BilledChars is what those requests are billed: the sum of Chars of
	// each. Requests refused with an answer (429, 5xx, 4xx) are taken as
	// not billed (docs/platform.md, "Translate").
	BilledChars int64
	// UnsureChars is Chars of the requests sent whose answer never came (a
	// connection broken after sending, a time-out): they may have been
	// translated and billed. They are not retried here.
	UnsureChars int64
}

// Language is the source language most of Texts were detected in (the
// first seen among equals); "" when none was.
func (r Result) Language() string {
	counts := map[string]int{}
	best := ""
	for _, d := range r.Detected {
		if d == "" {
			continue
		}
		counts[d]++
		if best == "" || counts[d] > counts[best] {
			best = d
		}
	}
	return best
}

// Translate translates texts into target (a language code, Languages)
// from source ("" to have the API detect it). Blank texts are not sent and
// come back as they are. The texts go in as few requests as the limit of
// MaxRequestChars allows, in order, one text never split between requests
// unless it alone is over the limit: then it is cut at paragraph, line,
// sentence or word boundaries (at a character when it has none), the pieces
// are translated and joined back with the whitespace that was between
// them.
//
// Errors (the Result holds what was done before one):
//   - errs.Invalid CodeInvalid: a target or source that is not a language
//     code (nothing is sent), or the API's 400;
//   - errs.Permanent CodeUnsupportedLanguage: the API does not translate
//     from or into that language;
//   - errs.Unavailable CodeQuota: 429 after the retries, a Retry-After
//     over Config.MaxRetryAfter, or the pacer's wait too long;
//   - errs.Unavailable CodeUnavailable: 5xx after the retries, a
//     transport error, the context ended;
//   - errs.Unavailable CodeAccessDenied: 401 or 403;
//   - errs.Internal: an answer that is not the API's.
func (c *Client) Translate(ctx context.Context, texts []string, target, source string) (Result, error) {
	target, source = normalize(target), normalize(source)
	if err := checkLanguages(target, source); err != nil {
		return Result{Texts: []string{}, Detected: []string{}}, err
	}
	p := makePlan(texts, MaxRequestChars)
	done := newAssembly(texts, p)
	var res Result
	for _, rq := range p.requests {
		batch := p.bodies(rq)
		ans, err := c.send(ctx, batch, target, source, &res)
		if err != nil {
			res.Texts, res.Detected = done.prefix()
			return res, err
		}
		done.fill(rq, ans)
	}
	res.Texts, res.Detected = done.prefix()
	return res, nil
}

// normalize is a language code as the API takes it: trimmed, lower case.
func normalize(code string) string { return strings.ToLower(strings.TrimSpace(code)) }
