// Package translate is the adapter to Yandex Translate, REST API v2
// (docs/platform.md, "Translate"): texts in, translations out, in order, in
// requests under 10,000 characters, paced to the quotas, retried on 429 and
// 5xx honouring Retry-After, and counted so the caller can reserve
// (Estimate) and charge. Neither a secret nor the texts reach an error or a
// log line.
package translate

import (
	"cmp"
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

// Request bounds (docs/settings.md); a Retry-After past DefaultMaxRetryAfter
// ends the call rather than hold a function's time.
const (
	DefaultTimeout       = 30 * time.Second
	DefaultMaxAttempts   = 4
	DefaultBackoff       = time.Second
	DefaultMaxBackoff    = 8 * time.Second
	DefaultMaxRetryAfter = 30 * time.Second
)

// Credentials are speechkit.Authorizer: the header's value and the folder
// ("": none), and Scrub, which removes every secret they handed out.
type Credentials interface {
	Authorization(ctx context.Context) (value, folder string, err error)
	Scrub(text string) string
}

// Config says where Translate is and how to reach it; zero fields take defaults.
type Config struct {
	URL         string // default DefaultURL; http only with Insecure
	Insecure    bool
	Credentials Credentials // required
	Clock       clock.Clock
	Sleep       func(ctx context.Context, d time.Duration) error
	Quota       Quota // zero: DefaultQuota
	MaxAttempts int   // per request, retries included; default DefaultMaxAttempts
	Log         *slog.Logger
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
	http  *http.Client
	pacer *pacer
}

// New returns a client without network I/O.
func New(cfg Config) (*Client, error) {
	cfg.URL, cfg.Clock, cfg.Log = cmp.Or(cfg.URL, DefaultURL), cmp.Or(cfg.Clock, clock.System()), cmp.Or(cfg.Log, slog.Default())
	if cfg.Sleep == nil {
		cfg.Sleep = clock.Sleep
	}
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = DefaultMaxAttempts
	}
	if err := CheckURL(cfg.URL, cfg.Insecure); err != nil {
		return nil, err
	}
	if cfg.Credentials == nil {
		return nil, errors.New("translate: no credentials")
	}
	p := &pacer{q: cmp.Or(cfg.Quota, DefaultQuota), clock: cfg.Clock, sleep: cfg.Sleep}
	return &Client{cfg: cfg, http: speechkit.NewHTTPClient(DefaultTimeout), pacer: p}, nil
}

// Result is what a call translated, in order (after an error, the prefix
// done), and what it cost: BilledChars of the requests answered (a refusal
// is not billed: docs/platform.md, "Translate"), UnsureChars of those sent
// but never answered, perhaps billed and not retried.
type Result struct {
	Texts                    []string
	BilledChars, UnsureChars int64
}

// Translate translates texts into target from source ("": detect) in as
// few requests as the order allows; blank texts come back unsent, a text
// over the limit is cut at the best boundary (plan.go). Errors: errs.Invalid
// CodeInvalid, errs.Permanent CodeUnsupportedLanguage, errs.Unavailable
// CodeQuota, CodeUnavailable or CodeAccessDenied, errs.Internal (classify).
func (c *Client) Translate(ctx context.Context, texts []string, target, source string) (Result, error) {
	target, source = normalize(target), normalize(source)
	if err := checkLanguages(target, source); err != nil {
		return Result{Texts: []string{}}, err
	}
	p := makePlan(texts, MaxRequestChars)
	var res Result
	var out []string // by piece
	var err error
	for _, rq := range p.requests {
		var ans []translation
		if ans, err = c.send(ctx, p.bodies(rq), target, source, &res); err != nil {
			break
		}
		for _, t := range ans {
			out = append(out, t.Text)
		}
	}
	res.Texts = p.join(texts, out)
	return res, err
}

func normalize(code string) string { return strings.ToLower(strings.TrimSpace(code)) }
