package speechkit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/status"

	"transcriber/internal/clock"
)

// IAM token settings. An IAM token lives at most 12 hours and the metadata
// service returns its remaining lifetime in expires_in (Yandex Cloud docs,
// IAM "IAM token", "Lifetime"); the docs advise asking for a new one well
// before that, "e.g., every hour" (Compute, "Using Yandex Cloud from within a
// VM"). So a token is reused for at most an hour, and never within five
// minutes of its expiry.
const (
	tokenMaxAge        = time.Hour
	tokenRefreshMargin = 5 * time.Minute
	// tokenMaxLifetime is the longest an IAM token lives: an answer whose
	// expires_in says more is not a token this service hands out, and
	// refusing it also keeps the lifetime far from time.Duration's range
	// (about 292 years, which expires_in over 9.2e9 seconds would overflow).
	tokenMaxLifetime = 12 * time.Hour
	// maxQuoted bounds a string from the answer quoted in an error.
	maxQuoted = 32
	// metadataTimeout bounds one request to the metadata service, which is
	// link-local and answers in milliseconds when it answers at all.
	metadataTimeout = 10 * time.Second
	// metadataMaxBody caps the token response read; a real one is ~1 KB.
	metadataMaxBody = 64 << 10
)

// tokenSource fetches the service account's IAM token from the metadata
// service and caches it. Concurrent callers wait for one fetch.
type tokenSource struct {
	url   string
	clock clock.Clock
	http  *http.Client

	mu        sync.Mutex
	current   string
	refreshAt time.Time // ask again from here on
	expiresAt time.Time // the token is no good from here on

	// The tokens handed out so far (the current one and the one before), for
	// scrubbing error text; separate from mu so that classifying an error
	// never waits for a fetch.
	seenMu sync.Mutex
	recent [2]string
}

func newTokenSource(url string, c clock.Clock) *tokenSource {
	return &tokenSource{url: url, clock: c, http: &http.Client{Timeout: metadataTimeout}}
}

// token returns a valid IAM token, fetching a new one when the cached one is
// due for refresh. If the refresh fails while the cached token has not yet
// expired, the cached token is returned.
func (t *tokenSource) token(ctx context.Context) (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.clock.Now()
	if t.current != "" && now.Before(t.refreshAt) {
		return t.current, nil
	}
	tok, ttl, err := t.fetch(ctx)
	if err != nil {
		if t.current != "" && now.Before(t.expiresAt) {
			return t.current, nil
		}
		return "", err
	}
	life := min(ttl-tokenRefreshMargin, tokenMaxAge)
	if life < 0 {
		life = 0 // about to expire already: use it for this call only
	}
	t.current, t.refreshAt, t.expiresAt = tok, now.Add(life), now.Add(ttl)
	t.remember(tok)
	return tok, nil
}

// metadataToken is the metadata service's answer, in the Google Compute
// Engine format: {"access_token":"…","expires_in":43200,"token_type":"Bearer"}.
type metadataToken struct {
	AccessToken string `json:"access_token"`
	ExpiresIn   int64  `json:"expires_in"` // seconds
	TokenType   string `json:"token_type"`
}

// fetch asks the metadata service for a token. Its errors never hold the
// response body, which may hold a token.
func (t *tokenSource) fetch(ctx context.Context) (string, time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, metadataTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, t.url, nil)
	if err != nil {
		return "", 0, fmt.Errorf("build metadata request: %w", err)
	}
	req.Header.Set("Metadata-Flavor", "Google")
	resp, err := t.http.Do(req)
	if err != nil {
		return "", 0, fmt.Errorf("ask the metadata service for an IAM token: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return "", 0, fmt.Errorf("the metadata service answered %d to the IAM token request", resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, metadataMaxBody))
	if err != nil {
		return "", 0, fmt.Errorf("read the metadata service's IAM token: %w", err)
	}
	var mt metadataToken
	if json.Unmarshal(body, &mt) != nil {
		return "", 0, errors.New("the metadata service's IAM token answer is not the expected JSON")
	}
	if mt.AccessToken == "" || mt.ExpiresIn <= 0 {
		return "", 0, errors.New("the metadata service's IAM token answer has no token or no lifetime")
	}
	if mt.ExpiresIn > int64(tokenMaxLifetime/time.Second) {
		return "", 0, fmt.Errorf("the metadata service's IAM token answer says it lives %d s, more than an IAM token's %d s",
			mt.ExpiresIn, int64(tokenMaxLifetime/time.Second))
	}
	if mt.TokenType != "" && !strings.EqualFold(mt.TokenType, "Bearer") {
		return "", 0, fmt.Errorf("the metadata service returned a token of type %q, not Bearer", quoted(mt.TokenType))
	}
	return mt.AccessToken, time.Duration(mt.ExpiresIn) * time.Second, nil
}

// quoted is s cut to maxQuoted bytes (at a character boundary) for an error
// text, so a server cannot fill logs through it.
func quoted(s string) string { return cut(s, maxQuoted) }

func (t *tokenSource) remember(tok string) {
	t.seenMu.Lock()
	defer t.seenMu.Unlock()
	if t.recent[0] != tok {
		t.recent[1], t.recent[0] = t.recent[0], tok
	}
}

func (t *tokenSource) seen() []string {
	t.seenMu.Lock()
	defer t.seenMu.Unlock()
	return []string{t.recent[0], t.recent[1]}
}

const redactedText = "[redacted]"

// Authorizer is the credentials of a call to Yandex Cloud's AI APIs: an API
// key, or the IAM token of the function's service account from the metadata
// service, cached. SpeechKit and Translate take the same ones (both accept
// "Api-Key <key>" and "Bearer <IAM token>"), so an instance keeps one
// Authorizer and one token cache for both (Client.Authorizer). It is safe
// for concurrent use.
type Authorizer struct {
	apiKey   string
	folderID string
	tokens   *tokenSource // nil when an API key is set
}

// NewAuthorizer returns the credentials of an API key, or, when apiKey is
// empty, of the IAM tokens handed out at metadataURL (default
// DefaultMetadataURL), named with folderID. c decides when a cached token is
// due for refresh; default clock.System(). It does no network I/O.
func NewAuthorizer(apiKey, folderID, metadataURL string, c clock.Clock) (*Authorizer, error) {
	a := &Authorizer{apiKey: apiKey, folderID: folderID}
	if apiKey != "" {
		return a, nil
	}
	if metadataURL == "" {
		metadataURL = DefaultMetadataURL
	}
	if u, err := url.Parse(metadataURL); err != nil || u.Host == "" {
		return nil, errors.New("speechkit: the metadata URL is not a valid URL")
	}
	if c == nil {
		c = clock.System()
	}
	a.tokens = newTokenSource(metadataURL, c)
	return a, nil
}

// Authorization returns the value of a call's Authorization header, and the
// folder to name with it: "Api-Key <key>" and no folder when an API key is
// set; otherwise "Bearer <IAM token>" and the configured folder, if any.
// Its error (no token to be had) never holds a secret.
func (a *Authorizer) Authorization(ctx context.Context) (value, folder string, err error) {
	if a.apiKey != "" {
		return "Api-Key " + a.apiKey, "", nil
	}
	token, err := a.tokens.token(ctx)
	if err != nil {
		return "", "", a.redact(err)
	}
	return "Bearer " + token, a.folderID, nil
}

// Scrub returns text with the API key and the IAM tokens handed out
// replaced.
func (a *Authorizer) Scrub(text string) string {
	for _, s := range a.secrets() {
		if s != "" {
			text = strings.ReplaceAll(text, s, redactedText)
		}
	}
	return text
}

// secrets are the strings no error text may hold.
func (a *Authorizer) secrets() []string {
	s := []string{a.apiKey}
	if a.tokens != nil {
		s = append(s, a.tokens.seen()...)
	}
	return s
}

// redact returns err unchanged unless its text holds the API key or an IAM
// token; then it returns a new error with the secret replaced, keeping only
// the gRPC status code, so the secret is nowhere in the chain.
func (a *Authorizer) redact(err error) error {
	if err == nil {
		return nil
	}
	text := err.Error()
	clean := a.Scrub(text)
	if clean == text {
		return err
	}
	if st, ok := status.FromError(err); ok {
		return status.Error(st.Code(), clean)
	}
	return errors.New(clean)
}

// scrub returns text with the client's secrets replaced (Authorizer.Scrub).
func (c *Client) scrub(text string) string { return c.auth.Scrub(text) }

// redact is Authorizer.redact with the client's secrets.
func (c *Client) redact(err error) error { return c.auth.redact(err) }
