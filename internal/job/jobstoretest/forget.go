package jobstoretest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/job"
)

// testForget: Delete blanks what the sender gave or what names them, and
// frees the job's idempotency key and Telegram message.
func testForget(t *testing.T, open Opener) {
	t.Run("an API job loses its filename, media type and key; its owner stays", func(t *testing.T) {
		e := newEnv(t, open)
		d := keyedDraft("me", "req-1")
		d.ContentType = "audio/mp4; name=\"Ivan Petrov\""
		first, created, err := e.st.CreateOnce(e.ctx, d)
		require.NoError(t, err)
		require.True(t, created)

		e.advance(time.Second)
		del, err := e.st.Delete(e.ctx, first.ID)
		require.NoError(t, err)
		require.True(t, del.Deleted())
		require.Empty(t, del.Filename)
		require.Empty(t, del.ContentType)
		require.Empty(t, del.IdempotencyKey)
		require.Equal(t, "me", del.OwnerID, "the API answers the owner about a deleted job")
		require.Equal(t, first.SizeBytes, del.SizeBytes)
		require.Equal(t, del, e.mustGet(t, first.ID), "what Delete returns is what is stored")

		again, created, err := e.st.CreateOnce(e.ctx, d)
		require.NoError(t, err)
		require.True(t, created, "the key of a deleted job makes a new job")
		require.NotEqual(t, first.ID, again.ID)
		require.Equal(t, d.Filename, again.Filename)
		require.Equal(t, "req-1", again.IdempotencyKey)
		same, created, err := e.st.CreateOnce(e.ctx, d)
		require.NoError(t, err)
		require.False(t, created, "and the key holds for the new job")
		require.Equal(t, again, same)

		require.Equal(t, del, e.mustGet(t, first.ID), "the deleted job is untouched by the new one")
		page, err := e.st.List(e.ctx, "me", "", job.MaxListLimit)
		require.NoError(t, err)
		require.Len(t, page.Jobs, 2, "the owner still lists the deleted job, and the new one")
		require.Equal(t, again.ID, page.Jobs[0].ID)
		require.Equal(t, del, page.Jobs[1])

		e.advance(time.Minute)
		twice, err := e.st.Delete(e.ctx, first.ID)
		require.NoError(t, err)
		require.Equal(t, del, twice, "deleting again changes nothing")
	})

	t.Run("a Telegram job loses its chat, message, owner and filename", func(t *testing.T) {
		e := newEnv(t, open)
		d := messageDraft(-100123, 42)
		d.OwnerID = "tg:-100123"
		first, created, err := e.st.CreateForMessage(e.ctx, d)
		require.NoError(t, err)
		require.True(t, created)

		del, err := e.st.Delete(e.ctx, first.ID)
		require.NoError(t, err)
		require.Zero(t, del.TelegramChatID)
		require.Zero(t, del.TelegramMessageID)
		require.Empty(t, del.OwnerID, "a Telegram owner is the chat")
		require.Empty(t, del.Filename)
		require.Empty(t, del.ContentType)
		require.Equal(t, job.SourceTelegram, del.Source)
		require.Equal(t, job.Failed, del.State)
		require.Equal(t, del, e.mustGet(t, first.ID))

		page, err := e.st.List(e.ctx, "tg:-100123", "", job.MaxListLimit)
		require.NoError(t, err)
		require.Empty(t, page.Jobs, "the chat's listing no longer holds it")

		again, created, err := e.st.CreateForMessage(e.ctx, d)
		require.NoError(t, err)
		require.True(t, created, "the message of a deleted job makes a new job")
		require.NotEqual(t, first.ID, again.ID)
		require.Equal(t, int64(-100123), again.TelegramChatID)
		require.Equal(t, int64(42), again.TelegramMessageID)
		same, created, err := e.st.CreateForMessage(e.ctx, d)
		require.NoError(t, err)
		require.False(t, created)
		require.Equal(t, again, same)
		require.Equal(t, del, e.mustGet(t, first.ID))
	})

	t.Run("the deleted job keeps its segments for the caller to purge", func(t *testing.T) {
		e := newEnv(t, open)
		c := e.mustClaim(t, e.mustJobIn(t, "o", job.Converted, 0).ID, job.Ingest)
		c.State = job.Transcribe
		c.Segments = []job.Segment{{Seq: 0, DurationMs: 1000, AudioKey: job.AudioKey(c.ID, 0), Container: "OGG_OPUS", OperationID: "op-1"}}
		c = e.mustSave(t, c, job.Next{})
		del, err := e.st.Delete(e.ctx, c.ID)
		require.NoError(t, err)
		require.Equal(t, c.Segments, del.Segments)
		require.Equal(t, del, e.mustGet(t, c.ID))
	})
}

// testEnded: EndedAt is set when a job reaches a terminal state, and the
// rows of jobs ended long ago expire (for a store that expires them
// itself, job.Expirer).
func testEnded(t *testing.T, open Opener) {
	t.Run("a live job has no end; a terminal save and a delete set it", func(t *testing.T) {
		e := newEnv(t, open)
		live := e.mustJobIn(t, "o", job.Transcribe, 0)
		require.True(t, live.EndedAt.IsZero())
		c := e.mustClaim(t, live.ID, job.Poll)
		require.True(t, c.EndedAt.IsZero())
		e.advance(time.Second)
		c.State = job.Done
		done := e.mustSave(t, c, job.Next{})
		requireSameTime(t, e.now(), done.EndedAt, "ended_at of a done job")
		require.Equal(t, done, e.mustGet(t, c.ID))

		e.advance(time.Minute)
		del, err := e.st.Delete(e.ctx, c.ID)
		require.NoError(t, err)
		require.Equal(t, done.EndedAt, del.EndedAt, "deleting an ended job keeps when it ended")

		other := e.mustJobIn(t, "o", job.Created, 0)
		del, err = e.st.Delete(e.ctx, other.ID)
		require.NoError(t, err)
		requireSameTime(t, e.now(), del.EndedAt, "a live job deleted ends then")
	})

	t.Run("rows of jobs ended before the cut expire, oldest first, live ones never", func(t *testing.T) {
		e := newEnv(t, open)
		ex, ok := e.st.(job.Expirer)
		if !ok {
			t.Skip("the store leaves expiry to its backend")
		}
		end := func(state job.State) job.Job {
			c := e.mustClaim(t, e.mustJobIn(t, "o", job.Transcribe, 0).ID, job.Poll)
			c.State = state
			c.Segments = []job.Segment{{Seq: 0, DurationMs: 1000, AudioKey: job.AudioKey(c.ID, 0), Container: "OGG_OPUS", OperationID: "op"}}
			return e.mustSave(t, c, job.Next{})
		}
		old1 := end(job.Done)
		e.advance(time.Second)
		old2 := end(job.Dead)
		e.advance(time.Second)
		deleted, err := e.st.Delete(e.ctx, e.mustJobIn(t, "o", job.Created, 0).ID)
		require.NoError(t, err)
		stale := e.mustCreate(t, apiDraft("o")) // live, however old
		e.advance(time.Hour)
		cut := e.now()
		e.advance(time.Second)
		recent := end(job.Failed)

		_, err = ex.Expired(e.ctx, cut, 0)
		require.ErrorIs(t, err, job.ErrInvalid)

		got, err := ex.Expired(e.ctx, cut, 2)
		require.NoError(t, err)
		require.Len(t, got, 2)
		require.Equal(t, []string{old1.ID, old2.ID}, []string{got[0].ID, got[1].ID}, "the longest ended first")
		require.Equal(t, old1, got[0], "with its segments")

		got, err = ex.Expired(e.ctx, cut, job.MaxClaimLimit)
		require.NoError(t, err)
		require.Len(t, got, 3)
		require.Equal(t, deleted.ID, got[2].ID)

		n, err := ex.Remove(e.ctx, []string{old1.ID, old2.ID, recent.ID, stale.ID, deleted.ID}, cut)
		require.NoError(t, err)
		require.Equal(t, 3, n, "the recent and the live job stay")
		for _, id := range []string{old1.ID, old2.ID, deleted.ID} {
			_, err := e.st.Get(e.ctx, id)
			require.ErrorIs(t, err, job.ErrNotFound, "an expired job is gone")
		}
		require.Equal(t, recent, e.mustGet(t, recent.ID))
		require.Equal(t, stale, e.mustGet(t, stale.ID))
		got, err = ex.Expired(e.ctx, cut, job.MaxClaimLimit)
		require.NoError(t, err)
		require.Empty(t, got)
		n, err = ex.Remove(e.ctx, []string{old1.ID}, cut)
		require.NoError(t, err)
		require.Zero(t, n, "a job already gone is skipped")
	})
}
