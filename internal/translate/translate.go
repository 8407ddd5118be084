// Package translate is the adapter to Yandex Translate, REST API v2
// (docs/platform.md, "Translate"): texts in, translations out, in order.
// A call is cut into requests under 10,000 characters, paced to the
// quotas (Pacer), retried on 429 and 5xx with a bounded backoff that
// honours Retry-After, and counted (Result.BilledChars) so the caller can
// reserve before (Estimate) and charge after. It authenticates with
// SpeechKit's credentials; neither a secret nor the texts reach an error
// or a log line.
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

// DefaultURL is the translate method (translate/api-ref/Translation/translate.md).
const DefaultURL = "https://translate.api.cloud.yandex.net/translate/v2/translate"

// Request bounds (docs/settings.md): no response time is documented, and
// 10,000 characters are a few pages; the backoff starts at a second since
// the request quota is per second; a longer Retry-After ends the call
// (its error says the wait) rather than hold a function's time.
const (
	DefaultTimeout       = 30 * time.Second
	DefaultMaxAttempts   = 4
	DefaultBackoff       = time.Second
	DefaultMaxBackoff    = 8 * time.Second
	DefaultMaxRetryAfter = 30 * time.Second
)

// Credentials authorize a request (speechkit.Authorizer, shared with SpeechKit).
type Credentials interface {
	// Authorization returns the header's value and the folder to name ("":
	// none); its error holds no secret.
	Authorization(ctx context.Context) (value, folder string, err error)
	// Scrub replaces in text every secret the credentials handed out.
	Scrub(text string) string
}

// Config says where Translate is and how to reach it; zero fields take defaults.
type Config struct {
	URL         string // default DefaultURL; http only with Insecure
	Insecure    bool
	Credentials Credentials // required
	Clock       clock.Clock
	Sleep       func(ctx context.Context, d time.Duration) error
	Pacer       Pacer // default NewPacer(DefaultQuota, Clock, Sleep)
	MaxAttempts int   // per request, retries included; default DefaultMaxAttempts
	Log         *slog.Logger
}

func (c Config) withDefaults() Config {
	if c.URL == "" {
		c.URL = DefaultURL
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
	if c.Log == nil {
		c.Log = slog.Default()
	}
	return c
}

// CheckURL is speechkit.CheckSyncURL's rule; its error never quotes raw.
func CheckURL(raw string, insecure bool) error {
	if speechkit.CheckSyncURL(raw, insecure) != nil {
		return errors.New("translate: want an https URL without a user name or password, such as " +
			DefaultURL + " (http only when insecure)")
	}
	return nil
}

// Client calls Translate; it is safe for concurrent use.
type Client struct {
	cfg   Config
	creds Credentials
	http  *http.Client
	pacer Pacer
}

// New returns a client without network I/O.
func New(cfg Config) (*Client, error) {
	cfg = cfg.withDefaults()
	if err := CheckURL(cfg.URL, cfg.Insecure); err != nil {
		return nil, err
	}
	if cfg.Credentials == nil {
		return nil, errors.New("translate: no credentials")
	}
	pacer := cfg.Pacer
	if pacer == nil {
		pacer = NewPacer(DefaultQuota, cfg.Clock, cfg.Sleep)
	}
	return &Client{cfg: cfg, creds: cfg.Credentials, http: speechkit.NewHTTPClient(DefaultTimeout), pacer: pacer}, nil
}

// Result is what a call translated and what it cost.
type Result struct {
	// Texts are the translations in order; after an error, those done
	// before it (a prefix the caller need not pay for again).
	Texts    []string
	Requests int // requests answered with translations
	// BilledChars is the Chars of the requests answered; a refusal (429,
	// 5xx, 4xx) is not billed (docs/platform.md, "Translate").
	BilledChars int64
	// UnsureChars is the Chars of requests sent but never answered: perhaps
	// billed, not retried.
	UnsureChars int64
}

// Translate translates texts into target from source ("": detect), in as
// few requests under MaxRequestChars as the order allows. Blank texts
// come back unsent; a text over the limit alone is cut at the best
// boundary and its translations joined with the whitespace between them.
//
// Errors (the Result holds what was done before): errs.Invalid
// CodeInvalid (a code not shaped like one, nothing sent; the API's 400),
// errs.Permanent CodeUnsupportedLanguage, errs.Unavailable CodeQuota (429
// after the retries, a long Retry-After or pacer wait), CodeUnavailable
// (5xx after the retries, transport, context) or CodeAccessDenied (401,
// 403), errs.Internal (an answer not the API's).
func (c *Client) Translate(ctx context.Context, texts []string, target, source string) (Result, error) {
	target, source = normalize(target), normalize(source)
	if err := checkLanguages(target, source); err != nil {
		return Result{Texts: []string{}}, err
	}
	p := makePlan(texts, MaxRequestChars)
	done := newAssembly(texts, p)
	var res Result
	for _, rq := range p.requests {
		ans, err := c.send(ctx, p.bodies(rq), target, source, &res)
		if err != nil {
			res.Texts = done.prefix()
			return res, err
		}
		done.fill(rq, ans)
	}
	res.Texts = done.prefix()
	return res, nil
}

// normalize is a language code as the API takes it: trimmed, lower case.
func normalize(code string) string { return strings.ToLower(strings.TrimSpace(code)) }
