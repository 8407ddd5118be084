package apitoken

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"

	"transcriber/internal/errs"
)

// ErrUnauthorized is every failure of a secret: malformed, unknown, revoked.
var ErrUnauthorized = errs.New(errs.Unauthorized, "unauthorized", "a valid API token is required")

// Authenticate finds the live token of a secret: ErrUnauthorized with the
// reason as cause (never the secret), except a store's own error, so an
// outage does not turn callers away as strangers.
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
	// Equal unless the store is wrong; constant time leaves nothing to measure.
	if subtle.ConstantTimeCompare([]byte(t.Hash), []byte(hash)) != 1 {
		return Token{}, unauthorized("the stored hash does not match the secret")
	}
	if t.Revoked() {
		return Token{}, unauthorized("token " + t.ID + " is revoked")
	}
	return t, nil
}

func unauthorized(reason string) error {
	return errs.Wrap(errors.New(reason), errs.Unauthorized, ErrUnauthorized.Code, ErrUnauthorized.Message)
}
