package jobstoretest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/errs"
	"transcriber/internal/ident"
	"transcriber/internal/job"
)

func testSave(t *testing.T, open Opener) {
	t.Run("writes the step's result and ends the claim", func(t *testing.T) {
		e := newEnv(t, open)
		j := e.mustCreate(t, apiDraft("o"))
		c := e.mustClaim(t, j.ID, job.Ingest)
		e.advance(3 * time.Second)

		c.State = job.Created
		c.DurationMs = 61_500
		c.ErrorCode, c.ErrorMessage = "", ""
		saved := e.mustSave(t, c, job.Next{After: 5 * time.Second})

		require.Equal(t, job.Created, saved.State)
		require.Equal(t, int64(61_500), saved.DurationMs)
		require.Zero(t, saved.Attempts, "a successful step returns attempts to 0")
		require.Empty(t, saved.ClaimID)
		require.True(t, saved.ClaimUntil.IsZero())
		requireSameTime(t, e.now().Add(5*time.Second), saved.NextRunAt, "next_run_at")
		requireSameTime(t, e.now(), saved.UpdatedAt, "updated_at")
		requireSameTime(t, j.CreatedAt, saved.CreatedAt, "created_at")
		require.Equal(t, saved, e.mustGet(t, j.ID))
	})

	t.Run("keeps the claim when asked", func(t *testing.T) {
		e := newEnv(t, open)
		c := e.mustClaim(t, e.mustCreate(t, apiDraft("o")).ID, job.Ingest)
		c.State = job.Created
		kept := e.mustSave(t, c, job.Next{Keep: true})
		require.Equal(t, c.ClaimID, kept.ClaimID)
		require.Equal(t, c.ClaimUntil, kept.ClaimUntil)
		require.Equal(t, c.Attempts, kept.Attempts, "the attempt goes on")

		kept.State = job.Converted
		next := e.mustSave(t, kept, job.Next{})
		require.Equal(t, job.Converted, next.State, "the holder goes on to the next state")
		require.Empty(t, next.ClaimID)
		require.Zero(t, next.Attempts, "the step ended well")
	})

	t.Run("a terminal state ends the claim even when asked to keep it", func(t *testing.T) {
		e := newEnv(t, open)
		c := e.mustClaim(t, e.mustCreate(t, apiDraft("o")).ID, job.Ingest)
		c.State = job.Failed
		c.ErrorCode, c.ErrorMessage = "no_audio_stream", "the file has no sound in it"
		saved := e.mustSave(t, c, job.Next{Keep: true})
		require.Empty(t, saved.ClaimID)
		require.Equal(t, "no_audio_stream", saved.ErrorCode)
		require.Equal(t, "the file has no sound in it", saved.ErrorMessage)
	})

	t.Run("fields fixed at creation stay", func(t *testing.T) {
		e := newEnv(t, open)
		j := e.mustCreate(t, apiDraft("owner-1"))
		c := e.mustClaim(t, j.ID, job.Ingest)
		c.State = job.Created
		c.OwnerID, c.Filename, c.SizeBytes, c.Source = "intruder", "other", 1, job.SourceTelegram
		c.CreatedAt = c.CreatedAt.Add(-time.Hour)
		c.Attempts = 99
		saved := e.mustSave(t, c, job.Next{})
		require.Equal(t, j.OwnerID, saved.OwnerID)
		require.Equal(t, j.Filename, saved.Filename)
		require.Equal(t, j.SizeBytes, saved.SizeBytes)
		require.Equal(t, j.Source, saved.Source)
		require.Equal(t, j.CreatedAt, saved.CreatedAt)
		require.Zero(t, saved.Attempts)
	})

	t.Run("an illegal move is refused and changes nothing", func(t *testing.T) {
		e := newEnv(t, open)
		j := e.mustCreate(t, apiDraft("o"))
		c := e.mustClaim(t, j.ID, job.Ingest)
		for _, to := range []job.State{job.Converted, job.Transcribe, "paused", ""} {
			bad := c
			bad.State = to
			_, err := e.st.Save(e.ctx, bad, job.Next{})
			require.ErrorIs(t, err, job.ErrIllegalMove, "awaiting_upload to %q", to)
		}
		require.Equal(t, c, e.mustGet(t, j.ID))
	})

	t.Run("nothing leaves a terminal state", func(t *testing.T) {
		e := newEnv(t, open)
		c := e.mustClaim(t, e.mustJobIn(t, "o", job.Transcribe, 0).ID, job.Poll)
		c.State = job.Done
		done := e.mustSave(t, c, job.Next{Keep: true})
		done.ClaimID = c.ClaimID
		done.State = job.Transcribe
		_, err := e.st.Save(e.ctx, done, job.Next{})
		require.Error(t, err, "a finished job cannot be saved again")
		require.True(t, errors.Is(err, job.ErrClaimLost) || errors.Is(err, job.ErrIllegalMove), "got %v", err)
	})

	t.Run("without the claim the save is lost", func(t *testing.T) {
		e := newEnv(t, open)
		j := e.mustCreate(t, apiDraft("o"))
		j.State = job.Created
		_, err := e.st.Save(e.ctx, j, job.Next{})
		require.ErrorIs(t, err, job.ErrClaimLost, "a job never claimed")

		c := e.mustClaim(t, j.ID, job.Ingest)
		forged := c
		forged.ClaimID = ident.New()
		forged.State = job.Created
		_, err = e.st.Save(e.ctx, forged, job.Next{})
		require.ErrorIs(t, err, job.ErrClaimLost, "another claim id")

		c.State = job.Created
		e.mustSave(t, c, job.Next{})
		c.State = job.Converted
		_, err = e.st.Save(e.ctx, c, job.Next{})
		require.ErrorIs(t, err, job.ErrClaimLost, "a claim already ended by a save")
	})

	t.Run("unknown id is not found", func(t *testing.T) {
		e := newEnv(t, open)
		_, err := e.st.Save(e.ctx, job.Job{ID: ident.New(), State: job.Created, ClaimID: ident.New()}, job.Next{})
		require.ErrorIs(t, err, job.ErrNotFound)
	})

	t.Run("refuses a negative delay", func(t *testing.T) {
		e := newEnv(t, open)
		c := e.mustClaim(t, e.mustCreate(t, apiDraft("o")).ID, job.Ingest)
		c.State = job.Created
		_, err := e.st.Save(e.ctx, c, job.Next{After: -time.Second})
		require.ErrorIs(t, err, job.ErrInvalid)
	})
}

func testRelease(t *testing.T, open Opener) {
	t.Run("ends the claim, keeps attempts, pauses", func(t *testing.T) {
		e := newEnv(t, open)
		j := e.mustJobIn(t, "o", job.Created, 0)
		c := e.mustClaim(t, j.ID, job.Ingest)
		e.advance(time.Second)
		f := job.Failure{Code: "storage_unavailable", Message: "storage did not answer; we will try again"}
		r, err := e.st.Release(e.ctx, c.Claim(), 4*time.Second, f)
		require.NoError(t, err)

		require.Equal(t, job.Created, r.State)
		require.Equal(t, 1, r.Attempts)
		require.Empty(t, r.ClaimID)
		require.Equal(t, f.Code, r.ErrorCode)
		require.Equal(t, f.Message, r.ErrorMessage)
		requireSameTime(t, e.now().Add(4*time.Second), r.NextRunAt, "next_run_at")
		require.Equal(t, r, e.mustGet(t, j.ID))

		e.advance(3 * time.Second)
		got, err := e.st.ClaimDue(e.ctx, job.Ingest, 5)
		require.NoError(t, err)
		require.Empty(t, got, "not due during the pause")
		e.advance(time.Second)
		got, err = e.st.ClaimDue(e.ctx, job.Ingest, 5)
		require.NoError(t, err)
		require.Equal(t, []string{j.ID}, ids(got))
		require.Equal(t, 2, got[0].Attempts)
	})

	t.Run("a failure that is not the job's does not count its attempt", func(t *testing.T) {
		e := newEnv(t, open)
		id := e.mustJobIn(t, "o", job.Created, 0).ID
		c := e.mustClaim(t, id, job.Ingest)
		_, err := e.st.Release(e.ctx, c.Claim(), 0, job.Failure{Code: "own"})
		require.NoError(t, err)
		c = e.mustClaim(t, id, job.Ingest)
		require.Equal(t, 2, c.Attempts)
		f := job.Failure{Code: "speechkit_unavailable", Message: "the speech recognizer is unavailable", Uncounted: true}
		r, err := e.st.Release(e.ctx, c.Claim(), time.Minute, f)
		require.NoError(t, err)
		require.Equal(t, 1, r.Attempts, "the job keeps the attempt its own failure cost, not the outage's")
		require.Equal(t, f.Code, r.ErrorCode, "the failure is recorded all the same")
		requireSameTime(t, e.now().Add(time.Minute), r.NextRunAt, "next_run_at")
		require.Equal(t, r, e.mustGet(t, id))
	})

	t.Run("a lost claim is refused", func(t *testing.T) {
		e := newEnv(t, open)
		c := e.mustClaim(t, e.mustCreate(t, apiDraft("o")).ID, job.Ingest)
		_, err := e.st.Release(e.ctx, job.Claim{JobID: c.ID, ID: ident.New()}, time.Second, job.Failure{})
		require.ErrorIs(t, err, job.ErrClaimLost)
		_, err = e.st.Release(e.ctx, job.Claim{JobID: ident.New(), ID: c.ClaimID}, time.Second, job.Failure{})
		require.ErrorIs(t, err, job.ErrNotFound)
		_, err = e.st.Release(e.ctx, c.Claim(), -time.Second, job.Failure{})
		require.ErrorIs(t, err, job.ErrInvalid)
		require.Equal(t, c, e.mustGet(t, c.ID))
	})
}

func testSettle(t *testing.T, open Opener) {
	p := job.DefaultPolicy
	transient := errs.Wrap(errors.New("connection reset"), errs.Unavailable, "speechkit_unavailable", "recognition is unavailable")

	t.Run("a permanent error fails the job", func(t *testing.T) {
		e := newEnv(t, open)
		c := e.mustClaim(t, e.mustJobIn(t, "o", job.Created, 0).ID, job.Ingest)
		bad := errs.New(errs.Permanent, "no_audio_stream", "the file has no sound in it")
		got, err := job.Settle(e.ctx, e.st, p, c, bad)
		require.NoError(t, err)
		require.Equal(t, job.Failed, got.State)
		require.Equal(t, "no_audio_stream", got.ErrorCode)
		require.Equal(t, "the file has no sound in it", got.ErrorMessage)
	})

	t.Run("transient errors are retried until the limit, then the job is dead", func(t *testing.T) {
		e := newEnv(t, open)
		id := e.mustJobIn(t, "o", job.Created, 0).ID
		for attempt := 1; attempt < p.MaxAttempts; attempt++ {
			c := e.mustClaim(t, id, job.Ingest)
			require.Equal(t, attempt, c.Attempts)
			got, err := job.Settle(e.ctx, e.st, p, c, transient)
			require.NoError(t, err)
			require.Equal(t, job.Created, got.State)
			requireSameTime(t, e.now().Add(p.Pause(attempt)), got.NextRunAt, "pause")
			e.advance(p.Pause(attempt))
		}
		c := e.mustClaim(t, id, job.Ingest)
		got, err := job.Settle(e.ctx, e.st, p, c, transient)
		require.NoError(t, err)
		require.Equal(t, job.Dead, got.State)
		require.Equal(t, "speechkit_unavailable", got.ErrorCode)
		require.Equal(t, fmt.Sprintf("recognition is unavailable; the service gave up after %d attempts: send the file again later", p.MaxAttempts),
			got.ErrorMessage, "the cause is not recorded, and no further try is promised")
	})

	t.Run("a job whose last attempt crashed is abandoned on its next claim", func(t *testing.T) {
		e := newEnv(t, open)
		id := e.mustJobIn(t, "o", job.Created, 0).ID
		var c job.Job
		for i := 0; i <= p.MaxAttempts; i++ {
			c = e.mustClaim(t, id, job.Ingest)
			e.advance(job.Ingest.Lease)
		}
		require.True(t, p.Abandoned(c))
	})
}
