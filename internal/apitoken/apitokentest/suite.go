// Package apitokentest is the contract every apitoken.Store must keep.
//
// Run it from an implementation's tests:
//
//	func TestTokenStoreContract(t *testing.T) {
//		apitokentest.Run(t, func(t *testing.T) apitoken.Store { … })
//	}
//
// Each test opens a fresh, empty store. The suite covers the store's methods,
// Authenticate over the store, and two races (creating one token, revoking
// one token) whose outcome must not depend on timing. Run it with -race.
package apitokentest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/apitoken"
)

// Opener opens a fresh, empty store.
type Opener func(t *testing.T) apitoken.Store

// Start is the time the suite's tokens are made at. It has a
// sub-millisecond part and is not in UTC, so a store must return times in
// UTC at millisecond precision.
var Start = time.Date(2026, 3, 1, 13, 0, 0, 123_456_789, time.FixedZone("MSK", 3*3600))

// Racers is how many goroutines the race tests run at once.
const Racers = 16

// Run runs the whole contract against stores made by open.
func Run(t *testing.T, open Opener) {
	t.Run("Create", func(t *testing.T) { testCreate(t, open) })
	t.Run("ByHash", func(t *testing.T) { testByHash(t, open) })
	t.Run("List", func(t *testing.T) { testList(t, open) })
	t.Run("Revoke", func(t *testing.T) { testRevoke(t, open) })
	t.Run("Authenticate", func(t *testing.T) { testAuthenticate(t, open) })
	t.Run("Races", func(t *testing.T) { testRaces(t, open) })
}

// env is one fresh store.
type env struct {
	st  apitoken.Store
	ctx context.Context
}

func newEnv(t *testing.T, open Opener) *env {
	t.Helper()
	return &env{st: open(t), ctx: context.Background()}
}

// mustNew makes a token named name at Start+after, not yet stored.
func mustNew(t *testing.T, name string, after time.Duration) (apitoken.Token, string) {
	t.Helper()
	tok, secret, err := apitoken.New(name, Start.Add(after))
	require.NoError(t, err)
	return tok, secret
}

// mustCreate makes and stores a token, returning it and its secret.
func (e *env) mustCreate(t *testing.T, name string, after time.Duration) (apitoken.Token, string) {
	t.Helper()
	tok, secret := mustNew(t, name, after)
	require.NoError(t, e.st.Create(e.ctx, tok))
	return tok, secret
}

func (e *env) mustByHash(t *testing.T, hash string) apitoken.Token {
	t.Helper()
	tok, err := e.st.ByHash(e.ctx, hash)
	require.NoError(t, err)
	return tok
}

func (e *env) mustList(t *testing.T) []apitoken.Token {
	t.Helper()
	list, err := e.st.List(e.ctx)
	require.NoError(t, err)
	require.NotNil(t, list, "no token is an empty slice, not nil")
	return list
}

func (e *env) mustRevoke(t *testing.T, id string, now time.Time) apitoken.Token {
	t.Helper()
	tok, err := e.st.Revoke(e.ctx, id, now)
	require.NoError(t, err)
	return tok
}

// requireSameTime compares moments at millisecond precision, the coarsest a
// store may keep, and requires UTC.
func requireSameTime(t *testing.T, want, got time.Time, what string) {
	t.Helper()
	require.WithinDuration(t, want, got, time.Millisecond, what)
	require.Equal(t, time.UTC, got.Location(), "%s is UTC", what)
}
