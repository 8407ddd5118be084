package jobstoretest

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/job"
)

// testReuse: a job's reuse key is kept from its draft or recorded once by
// a save; Reusable finds the latest done, not deleted job of a key whose
// transcript has not expired, and a deletion blanks the key.
func testReuse(t *testing.T, open Opener) {
	key := func(c string) string { return strings.Repeat(c, job.MaxReuseKey) }
	done := func(e *env, t *testing.T, k string) job.Job {
		t.Helper()
		j := e.mustCreate(t, apiDraft("o"))
		c := e.mustClaim(t, j.ID, job.Ingest)
		c.State, c.ReuseKey = job.Created, k
		c = e.mustSave(t, c, job.Next{Keep: true})
		c.State = job.Converted
		c = e.mustSave(t, c, job.Next{Keep: true})
		c.State = job.Transcribe
		c = e.mustSave(t, c, job.Next{Keep: true})
		c.State = job.Done
		return e.mustSave(t, c, job.Next{})
	}

	t.Run("the latest done job of a key, not expired", func(t *testing.T) {
		e := newEnv(t, open)
		_, err := e.st.Reusable(e.ctx, key("a"), e.now().Add(-time.Hour))
		require.ErrorIs(t, err, job.ErrNotFound)
		_, err = e.st.Reusable(e.ctx, "", e.now().Add(-time.Hour))
		require.ErrorIs(t, err, job.ErrNotFound, "an empty key finds none")

		first := done(e, t, key("a"))
		require.Equal(t, key("a"), first.ReuseKey)
		require.Equal(t, first, e.mustGet(t, first.ID))
		e.advance(time.Minute)
		second := done(e, t, key("a"))
		e.advance(time.Minute)
		other := done(e, t, key("b"))

		got, err := e.st.Reusable(e.ctx, key("a"), e.now().Add(-time.Hour))
		require.NoError(t, err)
		require.Equal(t, second.ID, got.ID, "the latest")
		require.Equal(t, job.Done, got.State)
		got, err = e.st.Reusable(e.ctx, key("b"), e.now().Add(-time.Hour))
		require.NoError(t, err)
		require.Equal(t, other.ID, got.ID)

		_, err = e.st.Reusable(e.ctx, key("a"), second.EndedAt)
		require.ErrorIs(t, err, job.ErrNotFound, "ended at or before the cut: its transcript expired")
		got, err = e.st.Reusable(e.ctx, key("a"), first.EndedAt)
		require.NoError(t, err)
		require.Equal(t, second.ID, got.ID)
	})

	t.Run("a job not done, or deleted, lends nothing", func(t *testing.T) {
		e := newEnv(t, open)
		j := e.mustCreate(t, apiDraft("o"))
		c := e.mustClaim(t, j.ID, job.Ingest)
		c.State, c.ReuseKey = job.Created, key("c")
		e.mustSave(t, c, job.Next{})
		_, err := e.st.Reusable(e.ctx, key("c"), e.now().Add(-time.Hour))
		require.ErrorIs(t, err, job.ErrNotFound, "not done")

		d := done(e, t, key("d"))
		deleted, err := e.st.Delete(e.ctx, d.ID)
		require.NoError(t, err)
		require.Empty(t, deleted.ReuseKey, "a deletion blanks what names the recording")
		require.Empty(t, e.mustGet(t, d.ID).ReuseKey)
		_, err = e.st.Reusable(e.ctx, key("d"), e.now().Add(-time.Hour))
		require.ErrorIs(t, err, job.ErrNotFound, "deleted")
	})

	t.Run("recorded once: from the draft, or by the first save that has it", func(t *testing.T) {
		e := newEnv(t, open)
		md := messageDraft(7, 8)
		md.ReuseKey = key("e")
		m, _, err := e.st.CreateForMessage(e.ctx, md)
		require.NoError(t, err)
		require.Equal(t, key("e"), e.mustGet(t, m.ID).ReuseKey)
		c := e.mustClaim(t, m.ID, job.Ingest)
		c.State, c.ReuseKey = job.Created, key("f")
		require.Equal(t, key("e"), e.mustSave(t, c, job.Next{}).ReuseKey, "not moved to another recording")

		d := apiDraft("o")
		d.ReuseKey = key("g") + "x"
		_, err = e.st.Create(e.ctx, d)
		require.ErrorIs(t, err, job.ErrInvalid, "longer than a hex SHA-256")
	})
}
