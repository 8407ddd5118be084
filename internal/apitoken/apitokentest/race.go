package apitokentest

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/apitoken"
)

func testRaces(t *testing.T, open Opener) {
	t.Run("of creators of one token exactly one wins", func(t *testing.T) {
		e := newEnv(t, open)
		tok, _ := mustNew(t, "ci", 0)
		errsOut := make([]error, Racers)
		var wg sync.WaitGroup
		for i := range errsOut {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errsOut[i] = e.st.Create(e.ctx, tok)
			}()
		}
		wg.Wait()
		won := 0
		for _, err := range errsOut {
			if err == nil {
				won++
				continue
			}
			require.ErrorIs(t, err, apitoken.ErrConflict)
		}
		require.Equal(t, 1, won, "exactly one of %d creators wins", Racers)
		require.Equal(t, []apitoken.Token{tok}, e.mustList(t))
	})

	t.Run("of revokers of one token all see one time", func(t *testing.T) {
		e := newEnv(t, open)
		tok, secret := e.mustCreate(t, "ci", 0)
		got := make([]apitoken.Token, Racers)
		errsOut := make([]error, Racers)
		var wg sync.WaitGroup
		for i := range got {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got[i], errsOut[i] = e.st.Revoke(e.ctx, tok.ID, Start.Add(time.Duration(i+1)*time.Second))
			}()
		}
		wg.Wait()
		stored := e.mustByHash(t, apitoken.Hash(secret))
		require.True(t, stored.Revoked())
		for i := range got {
			require.NoError(t, errsOut[i])
			require.Equal(t, stored, got[i], "revoker %d sees the first revocation", i)
		}
	})
}
