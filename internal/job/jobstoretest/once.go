package jobstoretest

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/ident"
	"transcriber/internal/job"
)

func keyedDraft(owner, key string) job.Draft {
	d := apiDraft(owner)
	d.IdempotencyKey = key
	return d
}

func testCreateOnce(t *testing.T, open Opener) {
	t.Run("the same owner and key return the first job", func(t *testing.T) {
		e := newEnv(t, open)
		first, created, err := e.st.CreateOnce(e.ctx, keyedDraft("me", "req-1"))
		require.NoError(t, err)
		require.True(t, created)
		require.Equal(t, "req-1", first.IdempotencyKey)
		require.Equal(t, first, e.mustGet(t, first.ID))

		again, created, err := e.st.CreateOnce(e.ctx, keyedDraft("me", "req-1"))
		require.NoError(t, err)
		require.False(t, created)
		require.Equal(t, first, again)

		other, created, err := e.st.CreateOnce(e.ctx, keyedDraft("someone-else", "req-1"))
		require.NoError(t, err)
		require.True(t, created, "keys are per owner")
		require.NotEqual(t, first.ID, other.ID)
	})

	t.Run("concurrent calls make one job", func(t *testing.T) {
		e := newEnv(t, open)
		got := make([]job.Job, Racers)
		created := make([]bool, Racers)
		errs := make([]error, Racers)
		race(func(i int) { got[i], created[i], errs[i] = e.st.CreateOnce(e.ctx, keyedDraft("me", "race")) })
		n := 0
		for i := range got {
			require.NoError(t, errs[i])
			require.Equal(t, got[0].ID, got[i].ID)
			if created[i] {
				n++
			}
		}
		require.Equal(t, 1, n)
	})

	t.Run("refuses a draft without key or owner, and a key on Create", func(t *testing.T) {
		e := newEnv(t, open)
		_, _, err := e.st.CreateOnce(e.ctx, apiDraft("me"))
		require.ErrorIs(t, err, job.ErrInvalid)
		_, _, err = e.st.CreateOnce(e.ctx, keyedDraft("", "k"))
		require.ErrorIs(t, err, job.ErrInvalid)
		_, _, err = e.st.CreateOnce(e.ctx, keyedDraft("me", strings.Repeat("k", job.MaxIdempotencyKey+1)))
		require.ErrorIs(t, err, job.ErrInvalid)
		_, err = e.st.Create(e.ctx, keyedDraft("me", "k"))
		require.ErrorIs(t, err, job.ErrInvalid)
	})
}

func testDelete(t *testing.T, open Opener) {
	t.Run("a live job ends failed, its claim taken away", func(t *testing.T) {
		e := newEnv(t, open)
		c := e.mustClaim(t, e.mustJobIn(t, "o", job.Converted, 0).ID, job.Ingest)
		e.advance(time.Second)
		d, err := e.st.Delete(e.ctx, c.ID)
		require.NoError(t, err)
		require.True(t, d.Deleted())
		requireSameTime(t, e.now(), d.DeletedAt, "deleted_at")
		require.Equal(t, job.Failed, d.State)
		require.Equal(t, job.ErrDeleted.Code, d.ErrorCode)
		require.Empty(t, d.ClaimID)
		require.Equal(t, d, e.mustGet(t, c.ID))

		c.State = job.Transcribe
		_, err = e.st.Save(e.ctx, c, job.Next{})
		require.ErrorIs(t, err, job.ErrClaimLost, "the step still running stops at its next save")
		_, err = e.st.Claim(e.ctx, c.ID, job.Ingest)
		require.ErrorIs(t, err, job.ErrNotClaimable)
	})

	t.Run("a finished job keeps its state; deleting again changes nothing", func(t *testing.T) {
		e := newEnv(t, open)
		c := e.mustClaim(t, e.mustJobIn(t, "o", job.Transcribe, 0).ID, job.Poll)
		c.State = job.Done
		e.mustSave(t, c, job.Next{})
		d, err := e.st.Delete(e.ctx, c.ID)
		require.NoError(t, err)
		require.Equal(t, job.Done, d.State)
		require.True(t, d.Deleted())
		e.advance(time.Minute)
		again, err := e.st.Delete(e.ctx, c.ID)
		require.NoError(t, err)
		require.Equal(t, d, again)
	})

	t.Run("unknown or malformed id is not found", func(t *testing.T) {
		e := newEnv(t, open)
		_, err := e.st.Delete(e.ctx, ident.New())
		require.ErrorIs(t, err, job.ErrNotFound)
		_, err = e.st.Delete(e.ctx, "../x")
		require.ErrorIs(t, err, job.ErrNotFound)
	})
}
