package apitoken_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"transcriber/internal/apitoken"
	"transcriber/internal/errs"
)

// stubStore answers ByHash with what it is given and counts the calls; the
// contract suite (apitokentest) covers real stores.
type stubStore struct {
	apitoken.Store // the methods Authenticate does not call panic
	tok            apitoken.Token
	err            error
	calls          int
}

func (s *stubStore) ByHash(context.Context, string) (apitoken.Token, error) {
	s.calls++
	return s.tok, s.err
}

func TestAuthenticateUnitCases(t *testing.T) {
	ctx := context.Background()
	tok, secret, err := apitoken.New("ci", at)
	require.NoError(t, err)

	t.Run("a live token passes", func(t *testing.T) {
		got, err := apitoken.Authenticate(ctx, &stubStore{tok: tok}, secret)
		require.NoError(t, err)
		require.Equal(t, tok, got)
	})

	t.Run("a malformed secret never reaches the store", func(t *testing.T) {
		for _, s := range []string{"", "Bearer " + secret, secret + " ", strings.ToUpper(secret), tok.Hash, tok.ID} {
			st := &stubStore{tok: tok}
			_, err := apitoken.Authenticate(ctx, st, s)
			requireUnauthorized(t, err, secret)
			require.Zero(t, st.calls, "%q", s)
		}
	})

	unavailable := errs.New(errs.Unavailable, "store_unavailable", "the job store is unavailable")
	internal := errors.New("stored time \"x\": bad")
	revoked := tok
	revoked.RevokedAt = at
	mismatched := tok
	mismatched.Hash = apitoken.Hash(secret + "x")

	t.Run("failures are unauthorized", func(t *testing.T) {
		for what, st := range map[string]*stubStore{
			"unknown":               {err: apitoken.ErrNotFound},
			"unknown, wrapped":      {err: errs.Wrap(errors.New("no rows"), errs.NotFound, "token_not_found", "")},
			"revoked":               {tok: revoked},
			"stored hash different": {tok: mismatched},
		} {
			_, err := apitoken.Authenticate(ctx, st, secret)
			requireUnauthorized(t, err, secret)
			require.Equal(t, 1, st.calls, what)
		}
	})

	t.Run("a failing store is not the caller's fault", func(t *testing.T) {
		_, err := apitoken.Authenticate(ctx, &stubStore{err: unavailable}, secret)
		require.ErrorIs(t, err, unavailable)
		require.Equal(t, errs.Unavailable, errs.KindOf(err))
		require.NotErrorIs(t, err, apitoken.ErrUnauthorized)

		_, err = apitoken.Authenticate(ctx, &stubStore{err: internal}, secret)
		require.ErrorIs(t, err, internal)
		require.Equal(t, errs.Internal, errs.KindOf(err), "a broken store is a bug, not a stranger")
		require.NotContains(t, err.Error(), secret)
	})
}

func requireUnauthorized(t *testing.T, err error, secret string) {
	t.Helper()
	require.ErrorIs(t, err, apitoken.ErrUnauthorized)
	require.Equal(t, errs.Unauthorized, errs.KindOf(err))
	require.Equal(t, "unauthorized", errs.CodeOf(err))
	require.Equal(t, "a valid API token is required", errs.MessageOf(err))
	require.NotContains(t, err.Error(), secret, "the secret is never in an error's text")
	require.NotContains(t, err.Error(), secret[4:])
	require.NotErrorIs(t, err, apitoken.ErrNotFound, "a stranger learns nothing about which tokens exist")
}
