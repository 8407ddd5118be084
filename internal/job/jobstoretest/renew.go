package jobstoretest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/ident"
	"transcriber/internal/job"
)

func testRenew(t *testing.T, open Opener) {
	t.Run("a holder at work keeps its claim past the lease", func(t *testing.T) {
		e := newEnv(t, open)
		c := e.mustClaim(t, e.mustJobIn(t, "o", job.Created, 0).ID, job.Ingest)
		claim := c.Claim()
		for i := 0; i < 3; i++ {
			e.advance(job.RenewEvery)
			renewed, err := e.st.Renew(e.ctx, claim, job.Ingest)
			require.NoError(t, err)
			require.Equal(t, c.ClaimID, renewed.ID, "the same claim")
			requireSameTime(t, e.now().Add(job.Ingest.Lease), renewed.Until, "claim_until")
			claim = renewed
		}
		e.advance(job.Ingest.Lease - time.Millisecond)
		require.True(t, e.now().After(c.ClaimUntil), "past the first lease")
		_, err := e.st.Claim(e.ctx, c.ID, job.Ingest)
		require.ErrorIs(t, err, job.ErrNotClaimable, "still held")
		got, err := e.st.ClaimDue(e.ctx, job.Ingest, 5)
		require.NoError(t, err)
		require.Empty(t, got, "not due while held")

		stored := e.mustGet(t, c.ID)
		requireSameTime(t, claim.Until, stored.NextRunAt, "a held job is due when its claim expires")
		require.Equal(t, c.Attempts, stored.Attempts, "a renewal is no new attempt")
		require.Equal(t, c.UpdatedAt, stored.UpdatedAt, "a renewal is no change of the job")

		c.State = job.Converted
		saved := e.mustSave(t, c, job.Next{})
		require.Equal(t, job.Converted, saved.State, "the holder's save goes through")
	})

	t.Run("a claim that expired, was taken or was ended is lost", func(t *testing.T) {
		e := newEnv(t, open)
		j := e.mustJobIn(t, "o", job.Created, 0)
		c := e.mustClaim(t, j.ID, job.Ingest)
		e.advance(job.Ingest.Lease)
		_, err := e.st.Renew(e.ctx, c.Claim(), job.Ingest)
		require.ErrorIs(t, err, job.ErrClaimLost, "expired")

		other := e.mustClaim(t, j.ID, job.Ingest)
		_, err = e.st.Renew(e.ctx, c.Claim(), job.Ingest)
		require.ErrorIs(t, err, job.ErrClaimLost, "taken")
		require.Equal(t, other, e.mustGet(t, j.ID), "a refused renewal changes nothing")

		other.State = job.Converted
		e.mustSave(t, other, job.Next{})
		_, err = e.st.Renew(e.ctx, other.Claim(), job.Ingest)
		require.ErrorIs(t, err, job.ErrClaimLost, "ended by the holder's own save")

		held := e.mustClaim(t, e.mustJobIn(t, "o", job.Created, 0).ID, job.Ingest)
		_, err = e.st.Delete(e.ctx, held.ID)
		require.NoError(t, err)
		_, err = e.st.Renew(e.ctx, held.Claim(), job.Ingest)
		require.ErrorIs(t, err, job.ErrClaimLost, "taken away by a deletion")
	})

	t.Run("refuses what names no claim", func(t *testing.T) {
		e := newEnv(t, open)
		c := e.mustClaim(t, e.mustCreate(t, apiDraft("o")).ID, job.Ingest)
		_, err := e.st.Renew(e.ctx, job.Claim{JobID: ident.New(), ID: c.ClaimID}, job.Ingest)
		require.ErrorIs(t, err, job.ErrNotFound)
		_, err = e.st.Renew(e.ctx, job.Claim{JobID: c.ID}, job.Ingest)
		require.ErrorIs(t, err, job.ErrClaimLost, "no claim id")
		_, err = e.st.Renew(e.ctx, c.Claim(), job.Step{Name: "none", From: job.Ingest.From})
		require.ErrorIs(t, err, job.ErrInvalid, "a lease of 0")
		require.Equal(t, c, e.mustGet(t, c.ID))
	})
}

// testTakeBack runs when the store is a job.Reclaimer.
func testTakeBack(t *testing.T, open Opener) {
	e := newEnv(t, open)
	r, ok := e.st.(job.Reclaimer)
	if !ok {
		t.Skip("the store takes back no claims (job.Reclaimer)")
	}
	free := e.mustJobIn(t, "o", job.Created, time.Hour)
	expired := e.mustClaim(t, e.mustJobIn(t, "o", job.Created, 0).ID, job.Ingest)
	e.advance(job.Ingest.Lease)
	held := e.mustClaim(t, e.mustJobIn(t, "o", job.Converted, 0).ID, job.Ingest)
	polled := e.mustClaim(t, e.mustJobIn(t, "o", job.Transcribe, 0).ID, job.Poll)
	ended := e.mustClaim(t, e.mustJobIn(t, "o", job.Created, 0).ID, job.Ingest)
	ended.State = job.Failed
	ended = e.mustSave(t, ended, job.Next{})
	e.advance(time.Second)

	n, err := r.TakeBackClaims(e.ctx)
	require.NoError(t, err)
	require.Equal(t, 3, n, "the live jobs' claims, expired or not")
	for _, c := range []job.Job{held, polled, expired} {
		got := e.mustGet(t, c.ID)
		require.Empty(t, got.ClaimID)
		require.True(t, got.ClaimUntil.IsZero())
		require.False(t, got.NextRunAt.After(e.now()), "due at once")
		require.Equal(t, c.Attempts, got.Attempts, "the attempt that held it ended without a word, as a crash")
		require.Equal(t, c.State, got.State)
	}
	requireSameTime(t, e.now(), e.mustGet(t, held.ID).NextRunAt, "a held job, due when its claim would expire, is due now")
	require.Equal(t, free, e.mustGet(t, free.ID), "a job no one held is left as it was")
	require.Equal(t, ended, e.mustGet(t, ended.ID))

	_, err = e.st.Save(e.ctx, held, job.Next{})
	require.ErrorIs(t, err, job.ErrClaimLost, "the old holder has nothing left")
	got, err := e.st.ClaimDue(e.ctx, job.Ingest, 10)
	require.NoError(t, err)
	require.ElementsMatch(t, []string{held.ID, expired.ID}, ids(got))

	n, err = r.TakeBackClaims(e.ctx)
	require.NoError(t, err)
	require.Equal(t, 2, n, "the claims just made")
}
