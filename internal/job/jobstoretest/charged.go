package jobstoretest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/job"
)

// testCharged: who pays for a job is kept from its draft, its
// reservation is recorded once, and Unfinished finds a payer's live jobs.
func testCharged(t *testing.T, open Opener) {
	t.Run("the payer is kept from the draft", func(t *testing.T) {
		e := newEnv(t, open)
		d := apiDraft("o")
		d.ChargedTo = "tok:o"
		j := e.mustCreate(t, d)
		require.Equal(t, "tok:o", j.ChargedTo)
		require.Equal(t, j, e.mustGet(t, j.ID))
		md := messageDraft(5, 6)
		md.ChargedTo = "tgu:77"
		m, _, err := e.st.CreateForMessage(e.ctx, md)
		require.NoError(t, err)
		require.Equal(t, "tgu:77", e.mustGet(t, m.ID).ChargedTo)
		kd := keyedDraft("o", "k")
		kd.ChargedTo = "tok:o"
		k, _, err := e.st.CreateOnce(e.ctx, kd)
		require.NoError(t, err)
		require.Equal(t, "tok:o", e.mustGet(t, k.ID).ChargedTo)
	})

	t.Run("a payer too long is refused", func(t *testing.T) {
		e := newEnv(t, open)
		d := apiDraft("o")
		d.ChargedTo = string(make([]byte, job.MaxChargedTo+1))
		_, err := e.st.Create(e.ctx, d)
		require.ErrorIs(t, err, job.ErrInvalid)
	})

	t.Run("a reservation is saved once, kept on its day, and moved to what is billed", func(t *testing.T) {
		e := newEnv(t, open)
		j := e.mustCreate(t, apiDraft("o"))
		c := e.mustClaim(t, j.ID, job.Ingest)
		day := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
		c.State, c.DurationMs, c.ReservedSeconds, c.ReservedMicros, c.ReservedDay = job.Created, 61_000, 61, 616_100, day
		saved := e.mustSave(t, c, job.Next{Keep: true})
		require.Equal(t, int64(61), saved.ReservedSeconds)
		require.Equal(t, int64(616_100), saved.ReservedMicros)
		requireSameTime(t, day, saved.ReservedDay, "reserved_day")
		require.Equal(t, saved, e.mustGet(t, j.ID))

		stale := saved
		stale.ReservedSeconds, stale.ReservedDay = 0, time.Time{}
		stale.State = job.Converted
		again := e.mustSave(t, stale, job.Next{Keep: true})
		require.Equal(t, int64(61), again.ReservedSeconds, "a copy without the reservation does not drop it")
		raised := again
		raised.ReservedSeconds, raised.ReservedDay = 62, day.Add(24*time.Hour)
		again = e.mustSave(t, raised, job.Next{Keep: true})
		require.Equal(t, int64(62), again.ReservedSeconds, "raised to what the audio made is billed")
		require.Equal(t, int64(616_100), again.ReservedMicros)
		requireSameTime(t, day, again.ReservedDay, "not moved to another day")

		lowered := again
		lowered.ReservedSeconds, lowered.ReservedMicros, lowered.ReservedDay = 15, 151_500, day.Add(24*time.Hour)
		again = e.mustSave(t, lowered, job.Next{})
		require.Equal(t, int64(15), again.ReservedSeconds, "lowered to what was billed")
		require.Equal(t, int64(151_500), again.ReservedMicros)
		requireSameTime(t, day, again.ReservedDay, "on the day it was counted in")
		require.Equal(t, again, e.mustGet(t, j.ID))
	})

	t.Run("unfinished jobs of a payer, oldest first, at most limit", func(t *testing.T) {
		e := newEnv(t, open)
		mk := func(payer string) job.Job {
			d := apiDraft("o")
			d.ChargedTo = payer
			e.advance(time.Millisecond)
			return e.mustCreate(t, d)
		}
		a, b, c := mk("tok:me"), mk("tok:me"), mk("tok:me")
		mk("tok:other")
		got, err := e.st.Unfinished(e.ctx, "tok:me", 10)
		require.NoError(t, err)
		require.Equal(t, []string{a.ID, b.ID, c.ID}, ids(got))
		require.Equal(t, "tok:me", got[0].ChargedTo)

		got, err = e.st.Unfinished(e.ctx, "tok:me", 2)
		require.NoError(t, err)
		require.Equal(t, []string{a.ID, b.ID}, ids(got), "no more than the limit")

		// b ends (failed), c is deleted: neither is unfinished any more.
		cb := e.mustClaim(t, b.ID, job.Ingest)
		cb.State = job.Failed
		e.mustSave(t, cb, job.Next{})
		_, err = e.st.Delete(e.ctx, c.ID)
		require.NoError(t, err)
		got, err = e.st.Unfinished(e.ctx, "tok:me", 10)
		require.NoError(t, err)
		require.Equal(t, []string{a.ID}, ids(got))

		got, err = e.st.Unfinished(e.ctx, "tok:nobody", 10)
		require.NoError(t, err)
		require.Empty(t, got)
	})

	t.Run("a deleted Telegram job forgets its payer", func(t *testing.T) {
		e := newEnv(t, open)
		md := messageDraft(5, 6)
		md.ChargedTo = "tgu:77"
		m, _, err := e.st.CreateForMessage(e.ctx, md)
		require.NoError(t, err)
		del, err := e.st.Delete(e.ctx, m.ID)
		require.NoError(t, err)
		require.Empty(t, del.ChargedTo)
		require.Empty(t, e.mustGet(t, m.ID).ChargedTo)
	})

	t.Run("refuses no payer or a limit out of range", func(t *testing.T) {
		e := newEnv(t, open)
		_, err := e.st.Unfinished(e.ctx, "", 1)
		require.ErrorIs(t, err, job.ErrInvalid)
		for _, limit := range []int{0, -1, job.MaxListLimit + 1} {
			_, err := e.st.Unfinished(e.ctx, "tok:me", limit)
			require.ErrorIs(t, err, job.ErrInvalid, "limit %d", limit)
		}
	})
}
