package jobstoretest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"transcriber/internal/job"
)

// testPriority: a job's priority is kept from its draft (normal when the
// draft names none) through every way of making it and through a save;
// an unknown one is refused.
func testPriority(t *testing.T, open Opener) {
	t.Run("the priority is kept from the draft", func(t *testing.T) {
		e := newEnv(t, open)
		d := apiDraft("o")
		d.Priority = job.PriorityDeferred
		j := e.mustCreate(t, d)
		require.Equal(t, job.PriorityDeferred, j.Priority)
		require.Equal(t, j, e.mustGet(t, j.ID))
		require.True(t, e.mustGet(t, j.ID).Deferred())

		md := messageDraft(5, 6)
		md.Priority = job.PriorityDeferred
		m, _, err := e.st.CreateForMessage(e.ctx, md)
		require.NoError(t, err)
		require.Equal(t, job.PriorityDeferred, e.mustGet(t, m.ID).Priority)

		kd := keyedDraft("o", "k")
		kd.Priority = job.PriorityDeferred
		k, _, err := e.st.CreateOnce(e.ctx, kd)
		require.NoError(t, err)
		require.Equal(t, job.PriorityDeferred, e.mustGet(t, k.ID).Priority)

		n := e.mustCreate(t, apiDraft("o"))
		require.Equal(t, job.PriorityNormal, e.mustGet(t, n.ID).Priority, "no priority is normal")
		require.False(t, n.Deferred())
	})

	t.Run("a save keeps the priority", func(t *testing.T) {
		e := newEnv(t, open)
		d := apiDraft("o")
		d.Priority = job.PriorityDeferred
		j := e.mustCreate(t, d)
		c := e.mustClaim(t, j.ID, job.Ingest)
		c.State, c.Priority = job.Created, job.PriorityNormal
		saved, err := e.st.Save(e.ctx, c, job.Next{Keep: true})
		require.NoError(t, err)
		require.Equal(t, job.PriorityDeferred, saved.Priority, "a holder's copy does not change it")
		require.Equal(t, job.PriorityDeferred, e.mustGet(t, j.ID).Priority)
	})

	t.Run("an unknown priority is refused", func(t *testing.T) {
		e := newEnv(t, open)
		d := apiDraft("o")
		d.Priority = "urgent"
		_, err := e.st.Create(e.ctx, d)
		require.ErrorIs(t, err, job.ErrInvalid)
	})
}
