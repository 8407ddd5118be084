package apitoken

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"

	"transcriber/internal/errs"
)

// ErrUnauthorized is every way a presented secret can fail to name a live
// token: malformed, unknown, revoked. The caller learns no more than that,
// and the secret is never in the error's text.
var ErrUnauthorized = errs.New(errs.Unauthorized, "unauthorized", "a valid API token is required")

// Authenticate finds the live token whose secret was presented. The form of
// the secret is checked first, without a store call; then the record of its
// hash is read, its hash compared with the computed one in constant time,
// and it must not be revoked. Every failure is ErrUnauthorized, with the
// reason for logs (never the secret) as its cause, except a failing store:
// its error is returned as it is, so a store that is down stays
// errs.Unavailable rather than turning callers away as strangers.
func Authenticate(ctx context.Context, st Store, secret string) (Token, error) {
	if !LooksLikeSecret(secret) {
		return Token{}, unauthorized("the credential is not a token secret")
	}
	hash := Hash(secret)
	t, err := st.ByHash(ctx, hash)
	if errors.Is(err, ErrNotFound) {
		return Token{}, unauthorized("no token has this secret")
	}
	if err != nil {
		return Token{}, fmt.Errorf("authenticate: %w", err)
	}
	// The store found the row by this hash, so they are equal unless the
	// store is wrong; comparing in constant time costs nothing and leaves
	// no timing to measure whatever the store does.
	if subtle.ConstantTimeCompare([]byte(t.Hash), []byte(hash)) != 1 {
		return Token{}, unauthorized("the stored hash does not match the secret")
	}
	if t.Revoked() {
		return Token{}, unauthorized("token " + t.ID + " is revoked")
	}
	return t, nil
}

// unauthorized is ErrUnauthorized with a reason for logs as its cause.
func unauthorized(reason string) error {
	return errs.Wrap(errors.New(reason), errs.Unauthorized, ErrUnauthorized.Code, ErrUnauthorized.Message)
}
