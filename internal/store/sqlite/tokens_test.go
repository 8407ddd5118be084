package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"transcriber/internal/apitoken"
	"transcriber/internal/apitoken/apitokentest"
	"transcriber/internal/clock/clocktest"
	"transcriber/internal/errs"
	"transcriber/internal/store/sqlite"
)

// openTokenDB opens a fresh database file for the token store's tests.
func openTokenDB(t *testing.T) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "tokens.db"), clocktest.NewFake(apitokentest.Start))
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func TestTokenStoreContract(t *testing.T) {
	apitokentest.Run(t, func(t *testing.T) apitoken.Store { return sqlite.NewTokenStore(openTokenDB(t)) })
}

// A closed database is a store that is down: unavailable, and Authenticate
// says so rather than turning the caller away.
func TestTokenStoreDownIsUnavailable(t *testing.T) {
	ctx := context.Background()
	db := openTokenDB(t)
	st := sqlite.NewTokenStore(db)
	tok, secret, err := apitoken.New("ci", apitokentest.Start)
	require.NoError(t, err)
	require.NoError(t, st.Create(ctx, tok))
	require.NoError(t, db.Close())

	_, err = st.ByHash(ctx, tok.Hash)
	require.Equal(t, errs.Unavailable, errs.KindOf(err))
	_, err = apitoken.Authenticate(ctx, st, secret)
	require.Equal(t, errs.Unavailable, errs.KindOf(err))
	require.NotErrorIs(t, err, apitoken.ErrUnauthorized)
	require.NotContains(t, err.Error(), secret)
	_, err = st.List(ctx)
	require.Equal(t, errs.Unavailable, errs.KindOf(err))
	require.Equal(t, errs.Unavailable, errs.KindOf(st.Create(ctx, tok)))
	_, err = st.Revoke(ctx, tok.ID, apitokentest.Start)
	require.Equal(t, errs.Unavailable, errs.KindOf(err))

	_, err = st.Revoke(ctx, "not-an-id", apitokentest.Start)
	require.ErrorIs(t, err, apitoken.ErrNotFound, "a malformed id never reaches the database")
}
