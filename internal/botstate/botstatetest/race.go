package botstatetest

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/botstate"
	"transcriber/internal/racetest"
)

// race starts fn in Racers goroutines at once and waits for them all.
func race(fn func(i int)) { racetest.Run(Racers, fn) }

// setFlag marks racer i in flags, a string of Racers '0' or '1' (empty is
// all '0'). It depends on nothing but its argument, as a change given to
// UpdateChat must: a store may run it again on a retried transaction.
func setFlag(flags string, i int) string {
	if flags == "" {
		flags = strings.Repeat("0", Racers)
	}
	b := []byte(flags)
	b[i] = '1'
	return string(b)
}

func testRaces(t *testing.T, open Opener) {
	t.Run("of updaters of one chat none loses an update", func(t *testing.T) {
		e := newEnv(t, open)
		all := strings.Repeat("1", Racers)
		for round := 0; round < Rounds; round++ {
			id := int64(1000 + round)
			got := make([]botstate.Chat, Racers)
			errs := make([]error, Racers)
			race(func(i int) {
				got[i], errs[i] = e.st.UpdateChat(e.ctx, id, at(time.Duration(round)*time.Second), func(c *botstate.Chat) {
					c.Language = setFlag(c.Language, i)
				})
			})
			saw := 0
			for i := range got {
				require.NoError(t, errs[i], "round %d", round)
				require.Equal(t, byte('1'), got[i].Language[i], "round %d: updater %d sees its own update", round, i)
				if got[i].Language == all {
					saw++
				}
			}
			require.Equal(t, 1, saw, "round %d: exactly one updater, the last, sees every update", round)
			require.Equal(t, all, e.mustChat(t, id).Language, "round %d: no update of %d is lost", round, Racers)
		}
	})
}
