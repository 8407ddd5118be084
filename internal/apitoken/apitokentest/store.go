package apitokentest

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/apitoken"
	"transcriber/internal/errs"
	"transcriber/internal/ident"
)

func testCreate(t *testing.T, open Opener) {
	t.Run("what is created is what ByHash returns", func(t *testing.T) {
		e := newEnv(t, open)
		tok, secret := e.mustCreate(t, "laptop", 0)
		got := e.mustByHash(t, apitoken.Hash(secret))
		require.Equal(t, tok, got)
		requireSameTime(t, Start, got.CreatedAt, "created_at")
		require.True(t, got.RevokedAt.IsZero())
		require.False(t, got.Revoked())
	})

	t.Run("keeps times in UTC at millisecond precision", func(t *testing.T) {
		e := newEnv(t, open)
		tok, _ := mustNew(t, "hand-made", 0)
		tok.CreatedAt = Start.Add(987_654 * time.Nanosecond) // not from New: finer than a store keeps
		require.NoError(t, e.st.Create(e.ctx, tok))
		got := e.mustByHash(t, tok.Hash)
		requireSameTime(t, tok.CreatedAt, got.CreatedAt, "created_at")
		require.Equal(t, got.CreatedAt, got.CreatedAt.Truncate(time.Millisecond))
	})

	t.Run("keeps a revoked record as given", func(t *testing.T) {
		e := newEnv(t, open)
		tok, _ := mustNew(t, "old", 0)
		tok.RevokedAt = Start.Add(time.Hour)
		require.NoError(t, e.st.Create(e.ctx, tok))
		got := e.mustByHash(t, tok.Hash)
		require.True(t, got.Revoked())
		requireSameTime(t, tok.RevokedAt, got.RevokedAt, "revoked_at")
	})

	t.Run("keeps text as given", func(t *testing.T) {
		e := newEnv(t, open)
		for _, name := range []string{"ноутбук Маши 🎙", `x'; DROP TABLE api_tokens; --`, strings.Repeat("я", apitoken.MaxNameLen)} {
			tok, secret := e.mustCreate(t, name, 0)
			require.Equal(t, name, e.mustByHash(t, apitoken.Hash(secret)).Name)
			require.Equal(t, tok.Name, name)
		}
	})

	t.Run("refuses an invalid token and records nothing", func(t *testing.T) {
		e := newEnv(t, open)
		tok, _ := mustNew(t, "ci", 0)
		for what, change := range map[string]func(*apitoken.Token){
			"zero id":        func(t *apitoken.Token) { t.ID = "" },
			"malformed id":   func(t *apitoken.Token) { t.ID = "../../etc/passwd" },
			"zero hash":      func(t *apitoken.Token) { t.Hash = "" },
			"malformed hash": func(t *apitoken.Token) { t.Hash = "not-a-hash" },
			"zero name":      func(t *apitoken.Token) { t.Name = "" },
			"zero created":   func(t *apitoken.Token) { t.CreatedAt = time.Time{} },
			"zero token":     func(t *apitoken.Token) { *t = apitoken.Token{} },
		} {
			bad := tok
			change(&bad)
			err := e.st.Create(e.ctx, bad)
			require.ErrorIs(t, err, apitoken.ErrInvalid, what)
			require.Equal(t, errs.Invalid, errs.KindOf(err), what)
		}
		require.Empty(t, e.mustList(t))
	})

	t.Run("a second token with the same hash or id is a conflict", func(t *testing.T) {
		e := newEnv(t, open)
		first, secret := e.mustCreate(t, "first", 0)

		same := first
		same.Name = "second"
		sameHash, _ := mustNew(t, "same hash", time.Second)
		sameHash.Hash = first.Hash
		sameID, _ := mustNew(t, "same id", time.Second)
		sameID.ID = first.ID
		for what, tok := range map[string]apitoken.Token{"same token": same, "same hash": sameHash, "same id": sameID} {
			err := e.st.Create(e.ctx, tok)
			require.ErrorIs(t, err, apitoken.ErrConflict, what)
			require.Equal(t, errs.Conflict, errs.KindOf(err), what)
			require.Equal(t, "token_exists", errs.CodeOf(err), what)
		}
		require.Equal(t, first, e.mustByHash(t, apitoken.Hash(secret)), "the first is intact")
		require.Equal(t, []apitoken.Token{first}, e.mustList(t))
	})
}

func testByHash(t *testing.T, open Opener) {
	t.Run("finds each token by its own hash", func(t *testing.T) {
		e := newEnv(t, open)
		a, secretA := e.mustCreate(t, "a", 0)
		b, secretB := e.mustCreate(t, "b", 0)
		require.Equal(t, a, e.mustByHash(t, apitoken.Hash(secretA)))
		require.Equal(t, b, e.mustByHash(t, apitoken.Hash(secretB)))
	})

	t.Run("an unknown hash is not found", func(t *testing.T) {
		e := newEnv(t, open)
		tok, secret := e.mustCreate(t, "a", 0)
		_, other := mustNew(t, "never stored", 0)
		for what, hash := range map[string]string{
			"another secret's":   apitoken.Hash(other),
			"empty":              "",
			"the secret itself":  secret,
			"the id":             tok.ID,
			"upper-case of real": strings.ToUpper(tok.Hash),
		} {
			_, err := e.st.ByHash(e.ctx, hash)
			require.ErrorIs(t, err, apitoken.ErrNotFound, what)
			require.Equal(t, errs.NotFound, errs.KindOf(err), what)
		}
	})
}

func testList(t *testing.T, open Opener) {
	t.Run("no token is an empty list", func(t *testing.T) {
		e := newEnv(t, open)
		require.Empty(t, e.mustList(t))
	})

	t.Run("oldest first by id, revoked ones too", func(t *testing.T) {
		e := newEnv(t, open)
		made := make([]apitoken.Token, 5)
		for i := range made {
			made[i], _ = mustNew(t, "t", time.Duration(i)*time.Millisecond)
		}
		// Stored out of order: the listing's order is the ids', not the inserts'.
		for _, i := range []int{3, 0, 4, 1, 2} {
			require.NoError(t, e.st.Create(e.ctx, made[i]))
		}
		made[1] = e.mustRevoke(t, made[1].ID, Start.Add(time.Hour))
		require.Equal(t, made, e.mustList(t))
	})

	t.Run("ids of one millisecond keep their order", func(t *testing.T) {
		e := newEnv(t, open)
		var want []apitoken.Token
		for i := 0; i < 20; i++ {
			tok, _ := e.mustCreate(t, "t", 0)
			want = append(want, tok)
		}
		require.Equal(t, want, e.mustList(t))
	})
}

func testRevoke(t *testing.T, open Opener) {
	t.Run("records the time and returns the token as stored", func(t *testing.T) {
		e := newEnv(t, open)
		tok, secret := e.mustCreate(t, "ci", 0)
		other, otherSecret := e.mustCreate(t, "other", 0)
		at := Start.Add(90*time.Minute + 456_789*time.Nanosecond)

		got := e.mustRevoke(t, tok.ID, at)
		require.True(t, got.Revoked())
		requireSameTime(t, at, got.RevokedAt, "revoked_at")
		want := tok
		want.RevokedAt = got.RevokedAt
		require.Equal(t, want, got, "only revoked_at changes")
		require.Equal(t, got, e.mustByHash(t, apitoken.Hash(secret)), "what Revoke returns is what is stored")
		require.Equal(t, other, e.mustByHash(t, apitoken.Hash(otherSecret)), "another token stays live")
	})

	t.Run("revoking twice keeps the first time", func(t *testing.T) {
		e := newEnv(t, open)
		tok, secret := e.mustCreate(t, "ci", 0)
		first := e.mustRevoke(t, tok.ID, Start.Add(time.Minute))
		again := e.mustRevoke(t, tok.ID, Start.Add(time.Hour))
		require.Equal(t, first, again)
		require.Equal(t, first, e.mustByHash(t, apitoken.Hash(secret)))
	})

	t.Run("takes the id in any case", func(t *testing.T) {
		e := newEnv(t, open)
		tok, _ := e.mustCreate(t, "ci", 0)
		got := e.mustRevoke(t, strings.ToUpper(tok.ID), Start.Add(time.Minute))
		require.Equal(t, tok.ID, got.ID)
		require.True(t, got.Revoked())
	})

	t.Run("an unknown or malformed id is not found", func(t *testing.T) {
		e := newEnv(t, open)
		tok, secret := e.mustCreate(t, "ci", 0)
		for what, id := range map[string]string{
			"unknown":   ident.NewAt(Start),
			"empty":     "",
			"malformed": "../../etc/passwd",
			"the hash":  tok.Hash,
			"a secret":  secret,
		} {
			_, err := e.st.Revoke(e.ctx, id, Start.Add(time.Minute))
			require.ErrorIs(t, err, apitoken.ErrNotFound, what)
			require.Equal(t, errs.NotFound, errs.KindOf(err), what)
			require.NotContains(t, err.Error(), secret, "%s: a secret pasted as an id is not echoed", what)
		}
		require.False(t, e.mustByHash(t, tok.Hash).Revoked())
	})

	t.Run("a zero time is invalid", func(t *testing.T) {
		e := newEnv(t, open)
		tok, _ := e.mustCreate(t, "ci", 0)
		_, err := e.st.Revoke(e.ctx, tok.ID, time.Time{})
		require.ErrorIs(t, err, apitoken.ErrInvalid)
		require.False(t, e.mustByHash(t, tok.Hash).Revoked())
	})
}
