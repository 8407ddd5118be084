package apitokentest

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/apitoken"
	"transcriber/internal/errs"
)

func testAuthenticate(t *testing.T, open Opener) {
	t.Run("a live token's secret finds it", func(t *testing.T) {
		e := newEnv(t, open)
		tok, secret := e.mustCreate(t, "ci", 0)
		e.mustCreate(t, "other", 0)
		got, err := apitoken.Authenticate(e.ctx, e.st, secret)
		require.NoError(t, err)
		require.Equal(t, tok, got)
	})

	t.Run("a revoked token's secret is refused", func(t *testing.T) {
		e := newEnv(t, open)
		tok, secret := e.mustCreate(t, "ci", 0)
		e.mustRevoke(t, tok.ID, Start.Add(time.Minute))
		_, err := apitoken.Authenticate(e.ctx, e.st, secret)
		requireUnauthorized(t, err, secret)
	})

	t.Run("other secrets are refused", func(t *testing.T) {
		e := newEnv(t, open)
		tok, secret := e.mustCreate(t, "ci", 0)
		_, unknown := mustNew(t, "never stored", 0)
		flipped := []byte(secret)
		if flipped[10] == 'A' {
			flipped[10] = 'B'
		} else {
			flipped[10] = 'A'
		}
		for what, s := range map[string]string{
			"unknown":       unknown,
			"one char off":  string(flipped),
			"malformed":     secret[:len(secret)-1],
			"padded":        secret + "=",
			"with a scheme": "Bearer " + secret,
			"empty":         "",
			"the hash":      tok.Hash,
			"the id":        tok.ID,
			"upper-case":    strings.ToUpper(secret),
		} {
			_, err := apitoken.Authenticate(e.ctx, e.st, s)
			requireUnauthorized(t, err, s)
			require.NotContains(t, err.Error(), secret, what)
		}
	})
}

// requireUnauthorized checks err is the one refusal, and does not hold the
// presented secret.
func requireUnauthorized(t *testing.T, err error, presented string) {
	t.Helper()
	require.ErrorIs(t, err, apitoken.ErrUnauthorized)
	require.Equal(t, errs.Unauthorized, errs.KindOf(err))
	require.Equal(t, "unauthorized", errs.CodeOf(err))
	require.Equal(t, "a valid API token is required", errs.MessageOf(err))
	if len(presented) > 8 {
		require.NotContains(t, err.Error(), presented, "the secret is never in an error's text")
	}
}
