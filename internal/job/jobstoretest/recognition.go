package jobstoretest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"transcriber/internal/job"
)

// testRecognition: the fast priority is kept as the others are; how a job
// was recognized and what the recognizer said it billed are written by a
// save and kept: a holder's copy that does not know them leaves them, a
// job recorded as asynchronous stays so, and values the domain does not
// know are refused with nothing written.
func testRecognition(t *testing.T, open Opener) {
	t.Run("the fast priority is kept from the draft", func(t *testing.T) {
		e := newEnv(t, open)
		d := apiDraft("o")
		d.Priority = job.PriorityFast
		j := e.mustCreate(t, d)
		require.Equal(t, job.PriorityFast, j.Priority)
		got := e.mustGet(t, j.ID)
		require.Equal(t, j, got)
		require.True(t, got.Fast())
		require.False(t, got.Deferred())

		md := messageDraft(5, 6)
		md.Priority = job.PriorityFast
		m, _, err := e.st.CreateForMessage(e.ctx, md)
		require.NoError(t, err)
		require.Equal(t, job.PriorityFast, e.mustGet(t, m.ID).Priority)

		kd := keyedDraft("o", "k")
		kd.Priority = job.PriorityFast
		k, _, err := e.st.CreateOnce(e.ctx, kd)
		require.NoError(t, err)
		require.Equal(t, job.PriorityFast, e.mustGet(t, k.ID).Priority)
	})

	t.Run("a new job is not recognized yet", func(t *testing.T) {
		e := newEnv(t, open)
		j := e.mustCreate(t, apiDraft("o"))
		require.Equal(t, job.Recognition(""), j.Recognition)
		require.Zero(t, j.BilledSeconds)
		got := e.mustGet(t, j.ID)
		require.Equal(t, job.Recognition(""), got.Recognition)
		require.Zero(t, got.BilledSeconds)
	})

	t.Run("a synchronous recognition is saved with its bill, to the end", func(t *testing.T) {
		e := newEnv(t, open)
		d := apiDraft("o")
		d.Priority = job.PriorityFast
		j := e.mustCreate(t, d)
		c := e.mustClaim(t, j.ID, job.Ingest)
		c.State, c.Recognition = job.Created, job.RecognitionSync
		c = e.mustSave(t, c, job.Next{Keep: true})
		require.Equal(t, job.RecognitionSync, c.Recognition)

		for _, s := range []job.State{job.Converted, job.Transcribe, job.Done} {
			c.State = s
			if s == job.Done {
				c.BilledSeconds = 15
			}
			c = e.mustSave(t, c, job.Next{Keep: s != job.Done})
		}
		got := e.mustGet(t, j.ID)
		require.Equal(t, job.Done, got.State)
		require.Equal(t, job.RecognitionSync, got.Recognition)
		require.Equal(t, int64(15), got.BilledSeconds)
		require.Equal(t, c, got)

		page, err := e.st.List(e.ctx, "o", "", 10)
		require.NoError(t, err)
		require.Len(t, page.Jobs, 1)
		require.Equal(t, job.RecognitionSync, page.Jobs[0].Recognition)
		require.Equal(t, int64(15), page.Jobs[0].BilledSeconds)
	})

	t.Run("a copy that does not know them keeps them", func(t *testing.T) {
		e := newEnv(t, open)
		j := e.mustCreate(t, apiDraft("o"))
		c := e.mustClaim(t, j.ID, job.Ingest)
		c.State, c.Recognition, c.BilledSeconds = job.Created, job.RecognitionSync, 30
		e.mustSave(t, c, job.Next{Keep: true})
		c.State, c.Recognition, c.BilledSeconds = job.Converted, "", 0
		saved := e.mustSave(t, c, job.Next{Keep: true})
		require.Equal(t, job.RecognitionSync, saved.Recognition)
		require.Equal(t, int64(30), saved.BilledSeconds)
		require.Equal(t, saved, e.mustGet(t, j.ID))
	})

	t.Run("a synchronous try may fall back to asynchronous, never back", func(t *testing.T) {
		e := newEnv(t, open)
		j := e.mustCreate(t, apiDraft("o"))
		c := e.mustClaim(t, j.ID, job.Ingest)
		c.State, c.Recognition = job.Created, job.RecognitionSync
		c = e.mustSave(t, c, job.Next{Keep: true})
		c.State, c.Recognition = job.Converted, job.RecognitionAsync
		c = e.mustSave(t, c, job.Next{Keep: true})
		require.Equal(t, job.RecognitionAsync, c.Recognition)
		c.State, c.Recognition = job.Transcribe, job.RecognitionSync
		saved := e.mustSave(t, c, job.Next{})
		require.Equal(t, job.RecognitionAsync, saved.Recognition, "submitted audio is not recognized again")
		require.Equal(t, job.RecognitionAsync, e.mustGet(t, j.ID).Recognition)
	})

	t.Run("what the domain does not know is refused", func(t *testing.T) {
		e := newEnv(t, open)
		j := e.mustCreate(t, apiDraft("o"))
		c := e.mustClaim(t, j.ID, job.Ingest)
		before := e.mustGet(t, j.ID)

		bad := c
		bad.State, bad.Recognition = job.Created, "streaming"
		_, err := e.st.Save(e.ctx, bad, job.Next{Keep: true})
		require.ErrorIs(t, err, job.ErrInvalid)

		bad = c
		bad.State, bad.BilledSeconds = job.Created, -15
		_, err = e.st.Save(e.ctx, bad, job.Next{Keep: true})
		require.ErrorIs(t, err, job.ErrInvalid)
		require.Equal(t, before, e.mustGet(t, j.ID), "nothing written")
	})
}
