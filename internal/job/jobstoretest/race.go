package jobstoretest

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"transcriber/internal/job"
	"transcriber/internal/racetest"
)

// race starts fn in Racers goroutines at once and waits for them all.
func race(fn func(i int)) { racetest.Run(Racers, fn) }

func testRaces(t *testing.T, open Opener) {
	t.Run("of claimers of one job exactly one wins", func(t *testing.T) {
		e := newEnv(t, open)
		for round := 0; round < Rounds; round++ {
			id := e.mustCreate(t, apiDraft("o")).ID
			won := make([]job.Job, Racers)
			errs := make([]error, Racers)
			race(func(i int) { won[i], errs[i] = e.st.Claim(e.ctx, id, job.Ingest) })

			var winners []job.Job
			for i, err := range errs {
				if err == nil {
					winners = append(winners, won[i])
					continue
				}
				require.ErrorIs(t, err, job.ErrNotClaimable, "round %d: a loser learns the job is taken", round)
			}
			require.Equal(t, 1, len(winners), "round %d: exactly one of %d claimers wins", round, Racers)
			stored := e.mustGet(t, id)
			require.Equal(t, winners[0].ClaimID, stored.ClaimID, "round %d: the winner's claim is the stored one", round)
			require.Equal(t, 1, stored.Attempts, "round %d: one claim, one attempt", round)
		}
	})

	t.Run("of claimers of due jobs each job goes to exactly one", func(t *testing.T) {
		e := newEnv(t, open)
		for round := 0; round < Rounds/4; round++ {
			const jobs = 40
			want := make(map[string]bool, jobs)
			for i := 0; i < jobs; i++ {
				want[e.mustJobIn(t, "o", job.Converted, 0).ID] = true
			}
			var mu sync.Mutex
			claimed := make(map[string]int, jobs)
			var failures []error
			race(func(int) {
				for {
					got, err := e.st.ClaimDue(e.ctx, job.Ingest, 3)
					mu.Lock()
					if err != nil {
						failures = append(failures, err)
					}
					for _, j := range got {
						claimed[j.ID]++
					}
					mu.Unlock()
					if err != nil || len(got) == 0 {
						return
					}
				}
			})
			require.Empty(t, failures, "round %d", round)
			require.Len(t, claimed, jobs, "round %d: every due job is claimed", round)
			for id, n := range claimed {
				require.True(t, want[id], "round %d: only due jobs are claimed", round)
				require.Equal(t, 1, n, "round %d: job %s is claimed by exactly one", round, id)
			}
			// Move them out of the way for the next round.
			for id := range claimed {
				j := e.mustGet(t, id)
				j.State = job.Transcribe
				e.mustSave(t, j, job.Next{})
			}
		}
	})

	t.Run("of savers under one claim the first wins when the claim ends", func(t *testing.T) {
		e := newEnv(t, open)
		for round := 0; round < Rounds; round++ {
			c := e.mustClaim(t, e.mustCreate(t, apiDraft("o")).ID, job.Ingest)
			c.State = job.Created
			errs := make([]error, Racers)
			race(func(i int) { _, errs[i] = e.st.Save(e.ctx, c, job.Next{}) })
			ok := 0
			for _, err := range errs {
				if err == nil {
					ok++
					continue
				}
				require.ErrorIs(t, err, job.ErrClaimLost, "round %d", round)
			}
			require.Equal(t, 1, ok, "round %d: a claim ends with the first save", round)
		}
	})

	t.Run("of creators for one Telegram message exactly one creates", func(t *testing.T) {
		e := newEnv(t, open)
		for round := 0; round < Rounds; round++ {
			msg := int64(1000 + round)
			got := make([]job.Job, Racers)
			created := make([]bool, Racers)
			errs := make([]error, Racers)
			race(func(i int) { got[i], created[i], errs[i] = e.st.CreateForMessage(e.ctx, messageDraft(-42, msg)) })

			n := 0
			for i := range got {
				require.NoError(t, errs[i], "round %d", round)
				require.Equal(t, got[0].ID, got[i].ID, "round %d: every caller gets the same job", round)
				if created[i] {
					n++
				}
			}
			require.Equal(t, 1, n, "round %d: exactly one caller created the job", round)
		}
		page, err := e.st.List(e.ctx, "", "", job.MaxListLimit)
		require.NoError(t, err)
		require.Len(t, page.Jobs, Rounds, "one job per message, no more")
	})
}
