package jobstoretest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/job"
)

func twoSegments(id string) []job.Segment {
	return []job.Segment{
		{Seq: 0, StartMs: 0, DurationMs: 13_800_000, AudioKey: job.AudioKey(id, 0), Container: "OGG_OPUS"},
		{Seq: 1, StartMs: 13_800_000, DurationMs: 420_000, AudioKey: job.AudioKey(id, 1), Container: "OGG_OPUS"},
	}
}

func testSegments(t *testing.T, open Opener) {
	t.Run("are saved with the job and come back with every read", func(t *testing.T) {
		e := newEnv(t, open)
		j := e.mustJobIn(t, "o", job.Created, 0)
		c := e.mustClaim(t, j.ID, job.Ingest)
		require.Empty(t, c.Segments)

		c.State = job.Converted
		c.Segments = twoSegments(j.ID)
		saved := e.mustSave(t, c, job.Next{})
		require.Equal(t, twoSegments(j.ID), saved.Segments)
		require.Equal(t, saved, e.mustGet(t, j.ID))

		claimed := e.mustClaim(t, j.ID, job.Ingest)
		require.Equal(t, twoSegments(j.ID), claimed.Segments, "a claim returns the segments")

		claimed.State = job.Transcribe
		claimed.Segments[0].OperationID = "op-0"
		claimed.Segments[1].OperationID = "op-1"
		claimed.Segments[1].Done = true
		saved = e.mustSave(t, claimed, job.Next{})
		require.Equal(t, "op-0", saved.Segments[0].OperationID)
		require.True(t, saved.Segments[1].Done)

		got, err := e.st.ClaimDue(e.ctx, job.Poll, 10)
		require.NoError(t, err)
		require.Len(t, got, 1)
		require.Equal(t, saved.Segments, got[0].Segments, "due selection returns the segments")

		r, err := e.st.Release(e.ctx, got[0].Claim(), time.Second, job.Failure{Code: "x"})
		require.NoError(t, err)
		require.Nil(t, r.Segments, "a release answers without them")
		require.Equal(t, saved.Segments, e.mustGet(t, j.ID).Segments, "and keeps them")
	})

	t.Run("a save replaces them", func(t *testing.T) {
		e := newEnv(t, open)
		j := e.mustJobIn(t, "o", job.Created, 0)
		c := e.mustClaim(t, j.ID, job.Ingest)
		c.Segments = twoSegments(j.ID)
		c = e.mustSave(t, c, job.Next{Keep: true})
		c.Segments = c.Segments[:1]
		require.Len(t, e.mustSave(t, c, job.Next{}).Segments, 1)
		require.Len(t, e.mustGet(t, j.ID).Segments, 1)
	})

	t.Run("out of order they are refused", func(t *testing.T) {
		e := newEnv(t, open)
		c := e.mustClaim(t, e.mustJobIn(t, "o", job.Created, 0).ID, job.Ingest)
		c.Segments = twoSegments(c.ID)
		c.Segments[1].Seq = 5
		_, err := e.st.Save(e.ctx, c, job.Next{})
		require.ErrorIs(t, err, job.ErrInvalid)
		require.Empty(t, e.mustGet(t, c.ID).Segments)
	})
}

func testNextDue(t *testing.T, open Opener) {
	t.Run("nothing live is nothing due", func(t *testing.T) {
		e := newEnv(t, open)
		_, ok, err := e.st.NextDue(e.ctx, job.States)
		require.NoError(t, err)
		require.False(t, ok)
		c := e.mustClaim(t, e.mustJobIn(t, "o", job.Transcribe, 0).ID, job.Poll)
		c.State = job.Done
		e.mustSave(t, c, job.Next{})
		_, ok, err = e.st.NextDue(e.ctx, job.States)
		require.NoError(t, err)
		require.False(t, ok, "finished jobs are never due")
	})

	t.Run("is the earliest next_run_at of the given states", func(t *testing.T) {
		e := newEnv(t, open)
		e.mustJobIn(t, "o", job.Transcribe, 30*time.Second)
		e.mustJobIn(t, "o", job.Transcribe, 10*time.Second)
		e.mustJobIn(t, "o", job.Created, 5*time.Second)
		at, ok, err := e.st.NextDue(e.ctx, []job.State{job.Transcribe})
		require.NoError(t, err)
		require.True(t, ok)
		requireSameTime(t, e.now().Add(10*time.Second), at, "next due")
		at, ok, err = e.st.NextDue(e.ctx, []job.State{job.Transcribe, job.Created})
		require.NoError(t, err)
		require.True(t, ok)
		requireSameTime(t, e.now().Add(5*time.Second), at, "next due")
	})

	t.Run("a held job is due when its claim expires", func(t *testing.T) {
		e := newEnv(t, open)
		j := e.mustJobIn(t, "o", job.Transcribe, 0)
		c := e.mustClaim(t, j.ID, job.Poll)
		require.Equal(t, c.ClaimUntil, c.NextRunAt)
		at, ok, err := e.st.NextDue(e.ctx, []job.State{job.Transcribe})
		require.NoError(t, err)
		require.True(t, ok)
		requireSameTime(t, c.ClaimUntil, at, "a claimed job's next due")

		kept := e.mustSave(t, c, job.Next{Keep: true, After: time.Second})
		require.Equal(t, c.ClaimUntil, kept.NextRunAt, "a kept claim keeps the job out of due selection")
	})
}
