package jobstoretest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/errs"
	"transcriber/internal/ident"
	"transcriber/internal/job"
)

func testClaim(t *testing.T, open Opener) {
	t.Run("takes a job from the step's states", func(t *testing.T) {
		e := newEnv(t, open)
		j := e.mustCreate(t, apiDraft("o"))
		c := e.mustClaim(t, j.ID, job.Ingest)

		_, err := ident.Parse(c.ClaimID)
		require.NoError(t, err, "a claim id is an id")
		require.Equal(t, 1, c.Attempts)
		requireSameTime(t, e.now().Add(job.Ingest.Lease), c.ClaimUntil, "claim_until")
		requireSameTime(t, e.now(), c.UpdatedAt, "updated_at")
		require.Equal(t, job.AwaitingUpload, c.State, "a claim does not move the job")
		require.Equal(t, c, e.mustGet(t, j.ID))
	})

	t.Run("ignores next_run_at: an event runs its job now", func(t *testing.T) {
		e := newEnv(t, open)
		j := e.mustCreate(t, apiDraft("o"))
		require.True(t, j.NextRunAt.After(e.now()))
		e.mustClaim(t, j.ID, job.Ingest)
	})

	t.Run("a held job is not claimable", func(t *testing.T) {
		e := newEnv(t, open)
		j := e.mustCreate(t, apiDraft("o"))
		first := e.mustClaim(t, j.ID, job.Ingest)
		e.advance(job.Ingest.Lease - time.Second)
		_, err := e.st.Claim(e.ctx, j.ID, job.Ingest)
		require.ErrorIs(t, err, job.ErrNotClaimable)
		require.Equal(t, errs.Conflict, errs.KindOf(err))
		require.Equal(t, first, e.mustGet(t, j.ID), "a refused claim changes nothing")
	})

	t.Run("a job in another state is not claimable", func(t *testing.T) {
		e := newEnv(t, open)
		j := e.mustCreate(t, apiDraft("o"))
		_, err := e.st.Claim(e.ctx, j.ID, job.Poll)
		require.ErrorIs(t, err, job.ErrNotClaimable)
		require.Equal(t, j, e.mustGet(t, j.ID))
	})

	t.Run("a finished job is not claimable by any step", func(t *testing.T) {
		e := newEnv(t, open)
		j := e.mustCreate(t, apiDraft("o"))
		c := e.mustClaim(t, j.ID, job.Ingest)
		c.State = job.Failed
		e.mustSave(t, c, job.Next{})
		anyState := job.Step{Name: "any", From: job.States, Lease: time.Minute}
		_, err := e.st.Claim(e.ctx, j.ID, anyState)
		require.ErrorIs(t, err, job.ErrNotClaimable)
	})

	t.Run("unknown id is not found", func(t *testing.T) {
		e := newEnv(t, open)
		_, err := e.st.Claim(e.ctx, ident.New(), job.Ingest)
		require.ErrorIs(t, err, job.ErrNotFound)
	})

	t.Run("an expired lease is claimed again and the old holder loses", func(t *testing.T) {
		e := newEnv(t, open)
		j := e.mustCreate(t, apiDraft("o"))
		old := e.mustClaim(t, j.ID, job.Ingest)

		e.advance(job.Ingest.Lease)
		renewed := e.mustClaim(t, j.ID, job.Ingest)
		require.NotEqual(t, old.ClaimID, renewed.ClaimID)
		require.Equal(t, 2, renewed.Attempts, "attempts grow on every claim")

		old.State = job.Created
		_, err := e.st.Save(e.ctx, old, job.Next{})
		require.ErrorIs(t, err, job.ErrClaimLost)
		require.Equal(t, errs.Conflict, errs.KindOf(err))
		_, err = e.st.Release(e.ctx, old.Claim(), time.Second, job.Failure{Code: "x"})
		require.ErrorIs(t, err, job.ErrClaimLost)
		require.Equal(t, renewed, e.mustGet(t, j.ID), "the old holder changed nothing")

		renewed.State = job.Created
		saved := e.mustSave(t, renewed, job.Next{})
		require.Equal(t, job.Created, saved.State, "the new holder carries on")
	})

	t.Run("an expired claim no longer holds even if nobody took over", func(t *testing.T) {
		e := newEnv(t, open)
		j := e.mustCreate(t, apiDraft("o"))
		c := e.mustClaim(t, j.ID, job.Ingest)
		e.advance(job.Ingest.Lease)
		c.State = job.Created
		_, err := e.st.Save(e.ctx, c, job.Next{})
		require.ErrorIs(t, err, job.ErrClaimLost)
	})
}

func testClaimDue(t *testing.T, open Opener) {
	t.Run("takes due jobs by next_run_at, then id", func(t *testing.T) {
		e := newEnv(t, open)
		// Made in this order, due in another: c first, then a and b at the
		// same moment (so the id decides), then d.
		a := e.mustJobIn(t, "o", job.Created, 2*time.Second)
		b := e.mustJobIn(t, "o", job.Created, 2*time.Second)
		c := e.mustJobIn(t, "o", job.Converted, time.Second)
		d := e.mustJobIn(t, "o", job.Created, 3*time.Second)
		require.Less(t, a.ID, b.ID)
		e.advance(10 * time.Second)

		got, err := e.st.ClaimDue(e.ctx, job.Ingest, 3)
		require.NoError(t, err)
		require.Equal(t, []string{c.ID, a.ID, b.ID}, ids(got))
		for _, j := range got {
			require.NotEmpty(t, j.ClaimID)
			require.Equal(t, 1, j.Attempts)
			requireSameTime(t, e.now().Add(job.Ingest.Lease), j.ClaimUntil, "claim_until")
			require.Equal(t, j, e.mustGet(t, j.ID))
		}

		rest, err := e.st.ClaimDue(e.ctx, job.Ingest, 3)
		require.NoError(t, err)
		require.Equal(t, []string{d.ID}, ids(rest), "claimed jobs are not taken twice")
	})

	t.Run("skips jobs not yet due, held, finished or of other steps", func(t *testing.T) {
		e := newEnv(t, open)
		due := e.mustJobIn(t, "o", job.Created, 0)
		e.mustJobIn(t, "o", job.Created, time.Hour)                                  // paused
		e.mustJobIn(t, "o", job.Transcribe, 0)                                       // poll's
		e.mustCreate(t, apiDraft("o"))                                               // upload window open
		held := e.mustClaim(t, e.mustJobIn(t, "o", job.Converted, 0).ID, job.Ingest) // held
		done := e.mustJobIn(t, "o", job.Converted, 0)
		done = e.mustClaim(t, done.ID, job.Ingest)
		done.State = job.Failed
		e.mustSave(t, done, job.Next{})

		got, err := e.st.ClaimDue(e.ctx, job.Ingest, job.MaxClaimLimit)
		require.NoError(t, err)
		require.Equal(t, []string{due.ID}, ids(got))

		e.advance(job.Ingest.Lease)
		got, err = e.st.ClaimDue(e.ctx, job.Ingest, job.MaxClaimLimit)
		require.NoError(t, err)
		require.Contains(t, ids(got), held.ID, "an expired claim makes the job due again")
		require.Contains(t, ids(got), due.ID, "so does the lease of the first selection")
	})

	t.Run("an upload window that closed makes the job due", func(t *testing.T) {
		e := newEnv(t, open)
		j := e.mustCreate(t, apiDraft("o"))
		got, err := e.st.ClaimDue(e.ctx, job.Ingest, 10)
		require.NoError(t, err)
		require.Empty(t, got)
		e.advance(apiDraft("o").UploadWindow)
		got, err = e.st.ClaimDue(e.ctx, job.Ingest, 10)
		require.NoError(t, err)
		require.Equal(t, []string{j.ID}, ids(got))
	})

	t.Run("nothing due is an empty answer", func(t *testing.T) {
		e := newEnv(t, open)
		got, err := e.st.ClaimDue(e.ctx, job.Poll, 5)
		require.NoError(t, err)
		require.Empty(t, got)
	})

	t.Run("refuses a limit out of range", func(t *testing.T) {
		e := newEnv(t, open)
		for _, limit := range []int{0, -1, job.MaxClaimLimit + 1} {
			_, err := e.st.ClaimDue(e.ctx, job.Ingest, limit)
			require.ErrorIs(t, err, job.ErrInvalid, "limit %d", limit)
		}
	})
}

func ids(js []job.Job) []string {
	out := make([]string, len(js))
	for i, j := range js {
		out[i] = j.ID
	}
	return out
}
