package speechkit

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/status"

	"transcriber/internal/clock"
)

// An IAM token lives at most 12 h (a longer claim is refused, which keeps
// expires_in from overflowing time.Duration); the docs advise a new one
// "e.g., every hour" (Compute, "Using Yandex Cloud from within a VM").
// A token is reused at most an hour, never within 5 minutes of expiry.
const (
	tokenMaxAge        = time.Hour
	tokenRefreshMargin = 5 * time.Minute
	tokenMaxLifetime   = 12 * time.Hour
	maxQuoted          = 32 // of an answer's string in an error
	metadataTimeout    = 10 * time.Second
	metadataMaxBody    = 64 << 10 // a real answer is ~1 KB
)

// tokenSource caches the IAM token of the metadata service; concurrent
// callers wait for one fetch.
type tokenSource struct {
	url   string
	clock clock.Clock
	http  *http.Client

	mu        sync.Mutex
	current   string
	refreshAt time.Time // ask again from here on
	expiresAt time.Time // the token is no good from here on

	// recent holds the current and previous token, for scrubbing without
	// waiting for a fetch.
	recent atomic.Pointer[[2]string]
}

// token returns the cached token, refreshed when due; a failed refresh
// falls back on an unexpired cached one.
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
	life := max(min(ttl-tokenRefreshMargin, tokenMaxAge), 0) // 0: this call only
	if tok != t.current {
		t.recent.Store(&[2]string{tok, t.current})
	}
	t.current, t.refreshAt, t.expiresAt = tok, now.Add(life), now.Add(ttl)
	return tok, nil
}

// metadataToken is the metadata service's answer (GCE format).
type metadataToken struct {
	AccessToken string `json:"access_token"`
	ExpiresIn   int64  `json:"expires_in"` // seconds
	TokenType   string `json:"token_type"`
}

// fetch asks for a token; its errors never hold the body, which may hold one.
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
	switch {
	case json.Unmarshal(body, &mt) != nil:
		return "", 0, errors.New("the metadata service's IAM token answer is not the expected JSON")
	case mt.AccessToken == "" || mt.ExpiresIn <= 0:
		return "", 0, errors.New("the metadata service's IAM token answer has no token or no lifetime")
	case mt.ExpiresIn > int64(tokenMaxLifetime/time.Second):
		return "", 0, fmt.Errorf("the metadata service's IAM token answer says it lives %d s, more than an IAM token's %d s",
			mt.ExpiresIn, int64(tokenMaxLifetime/time.Second))
	case mt.TokenType != "" && !strings.EqualFold(mt.TokenType, "Bearer"):
		return "", 0, fmt.Errorf("the metadata service returned a token of type %q, not Bearer", quoted(mt.TokenType))
	}
	return mt.AccessToken, time.Duration(mt.ExpiresIn) * time.Second, nil
}

// quoted cuts s so that a server cannot fill logs through an error.
func quoted(s string) string { return cut(s, maxQuoted) }

const redactedText = "[redacted]"

// Authorizer is the credentials of SpeechKit and Translate: an API key, or
// the service account's cached IAM token. Safe for concurrent use.
type Authorizer struct {
	apiKey   string
	folderID string
	tokens   *tokenSource // nil when an API key is set
}

// NewAuthorizer uses apiKey, or when it is empty the IAM tokens at
// metadataURL (default DefaultMetadataURL) with folderID. No network I/O.
func NewAuthorizer(apiKey, folderID, metadataURL string, c clock.Clock) (*Authorizer, error) {
	a := &Authorizer{apiKey: apiKey, folderID: folderID}
	if apiKey != "" {
		return a, nil
	}
	metadataURL = cmp.Or(metadataURL, DefaultMetadataURL)
	if u, err := url.Parse(metadataURL); err != nil || u.Host == "" {
		return nil, errors.New("speechkit: the metadata URL is not a valid URL")
	}
	a.tokens = &tokenSource{url: metadataURL, clock: cmp.Or(c, clock.System()), http: &http.Client{Timeout: metadataTimeout}}
	return a, nil
}

// Authorization returns the Authorization header's value ("Api-Key <key>",
// or "Bearer <IAM token>" with the folder). Its error holds no secret.
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

// Scrub replaces the API key and the IAM tokens handed out.
func (a *Authorizer) Scrub(text string) string {
	secrets := []string{a.apiKey}
	if a.tokens != nil && a.tokens.recent.Load() != nil {
		secrets = append(secrets, a.tokens.recent.Load()[:]...)
	}
	for _, s := range secrets {
		if s != "" {
			text = strings.ReplaceAll(text, s, redactedText)
		}
	}
	return text
}

// redact returns err, or when its text holds a secret a new error with it
// replaced, keeping only the gRPC code, so the secret is nowhere in the chain.
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
