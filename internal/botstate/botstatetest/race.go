package botstatetest

import (
	"strings"
	"sync"
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

	t.Run("of senders beginning one delivery exactly one takes it", func(t *testing.T) {
		e := newEnv(t, open)
		for round := 0; round < Rounds; round++ {
			k := key(int64(1000+round), "result")
			now := at(time.Duration(round) * time.Second)
			got := make([]botstate.Delivery, Racers)
			taken := make([]bool, Racers)
			errs := make([]error, Racers)
			race(func(i int) { got[i], taken[i], errs[i] = e.st.Begin(e.ctx, k, jobID, now, Lease) })

			n := 0
			for i := range got {
				require.NoError(t, errs[i], "round %d", round)
				if taken[i] {
					n++
				}
			}
			require.Equal(t, 1, n, "round %d: exactly one of %d senders takes it", round, Racers)
			stored := e.mustGet(t, k)
			require.Equal(t, 1, stored.Attempts, "round %d: one take, one attempt", round)
			for i := range got {
				require.Equal(t, stored, got[i], "round %d: every sender gets the delivery as stored", round)
			}
		}
	})

	t.Run("of schedulers of one delivery all get the one recorded", func(t *testing.T) {
		e := newEnv(t, open)
		for round := 0; round < Rounds; round++ {
			k := key(int64(1000+round), "status")
			got := make([]botstate.Delivery, Racers)
			errs := make([]error, Racers)
			race(func(i int) { got[i], errs[i] = e.st.Schedule(e.ctx, k, jobID, at(time.Duration(i)*time.Second), at(0)) })
			stored := e.mustGet(t, k)
			for i := range got {
				require.NoError(t, errs[i], "round %d", round)
				require.Equal(t, stored, got[i], "round %d: scheduler %d gets the delivery recorded", round, i)
			}
		}
	})

	t.Run("of sweepers of due deliveries each goes to exactly one", func(t *testing.T) {
		e := newEnv(t, open)
		for round := 0; round < Rounds/4; round++ {
			const deliveries = 40
			now := at(time.Duration(round) * time.Hour)
			want := make(map[botstate.Key]bool, deliveries)
			for i := 0; i < deliveries; i++ {
				k := botstate.Key{ChatID: int64(round + 1), MessageID: int64(i + 1), Part: "result"}
				e.mustSchedule(t, k, jobID, now.Add(-time.Duration(i)*time.Millisecond), now)
				want[k] = true
			}
			var mu sync.Mutex
			claimed := make(map[botstate.Key]int, deliveries)
			var failures []error
			race(func(int) {
				for {
					got, err := e.st.ClaimDue(e.ctx, now, Lease, 3)
					mu.Lock()
					if err != nil {
						failures = append(failures, err)
					}
					for _, d := range got {
						claimed[d.Key]++
					}
					mu.Unlock()
					if err != nil || len(got) == 0 {
						return
					}
				}
			})
			require.Empty(t, failures, "round %d", round)
			require.Len(t, claimed, deliveries, "round %d: every due delivery is taken", round)
			for k, n := range claimed {
				require.True(t, want[k], "round %d: only due deliveries are taken", round)
				require.Equal(t, 1, n, "round %d: delivery %v is taken by exactly one", round, k)
				require.Equal(t, 1, e.mustGet(t, k).Attempts, "round %d", round)
			}
			// Out of the way of the next round, whose time is past these leases.
			for k := range claimed {
				e.mustFinish(t, k, sent(1), now.Add(time.Second))
			}
		}
	})
}
