package jobstoretest

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/errs"
	"transcriber/internal/ident"
	"transcriber/internal/job"
)

func testCreate(t *testing.T, open Opener) {
	t.Run("records the draft waiting for its upload", func(t *testing.T) {
		e := newEnv(t, open)
		d := apiDraft("owner-1")
		j := e.mustCreate(t, d)

		canon, err := ident.Parse(j.ID)
		require.NoError(t, err)
		require.Equal(t, canon, j.ID, "ids are stored lower-case")
		require.Equal(t, job.AwaitingUpload, j.State)
		require.Equal(t, d.Source, j.Source)
		require.Equal(t, d.OwnerID, j.OwnerID)
		require.Equal(t, d.Language, j.Language)
		require.Equal(t, d.Filename, j.Filename)
		require.Equal(t, d.SizeBytes, j.SizeBytes)
		require.Equal(t, d.ContentType, j.ContentType)
		require.Zero(t, j.Attempts)
		require.Empty(t, j.ClaimID)
		require.True(t, j.ClaimUntil.IsZero())
		requireSameTime(t, e.now(), j.CreatedAt, "created_at")
		requireSameTime(t, e.now(), j.UpdatedAt, "updated_at")
		requireSameTime(t, e.now().Add(d.UploadWindow), j.NextRunAt, "next_run_at is the end of the upload window")
		requireSameTime(t, e.now().Add(d.UploadWindow), j.UploadBy, "upload_by is the end of the upload window")

		require.Equal(t, j, e.mustGet(t, j.ID), "what Create returns is what is stored")
	})

	t.Run("keeps text as given", func(t *testing.T) {
		e := newEnv(t, open)
		d := apiDraft("owner-1")
		d.Filename = "Запись 'интервью'; DROP TABLE jobs; -- 🎙.m4a"
		j := e.mustCreate(t, d)
		require.Equal(t, d.Filename, e.mustGet(t, j.ID).Filename)
	})

	t.Run("ids of one owner sort by creation", func(t *testing.T) {
		e := newEnv(t, open)
		var prev string
		for i := 0; i < 50; i++ {
			j := e.mustCreate(t, apiDraft("owner-1"))
			require.Greater(t, j.ID, prev)
			prev = j.ID
		}
	})

	t.Run("refuses an invalid draft and records nothing", func(t *testing.T) {
		e := newEnv(t, open)
		bad := map[string]job.Draft{
			"unknown source":  {Source: "fax", OwnerID: "o"},
			"negative size":   {Source: job.SourceAPI, OwnerID: "o", SizeBytes: -1},
			"negative window": {Source: job.SourceAPI, OwnerID: "o", UploadWindow: -time.Second},
			"telegram draft":  func() job.Draft { d := messageDraft(1, 2); d.OwnerID = "o"; return d }(),
			"half a message":  {Source: job.SourceAPI, OwnerID: "o", TelegramChatID: 5},
		}
		for name, d := range bad {
			_, err := e.st.Create(e.ctx, d)
			require.ErrorIs(t, err, job.ErrInvalid, name)
			require.Equal(t, errs.Invalid, errs.KindOf(err), name)
		}
		page, err := e.st.List(e.ctx, "o", "", job.MaxListLimit)
		require.NoError(t, err)
		require.Empty(t, page.Jobs)
	})
}

func testCreateForMessage(t *testing.T, open Opener) {
	t.Run("a second call returns the first job", func(t *testing.T) {
		e := newEnv(t, open)
		first, created, err := e.st.CreateForMessage(e.ctx, messageDraft(-100123, 42))
		require.NoError(t, err)
		require.True(t, created)
		require.Equal(t, job.SourceTelegram, first.Source)
		require.Equal(t, int64(-100123), first.TelegramChatID)
		require.Equal(t, int64(42), first.TelegramMessageID)
		require.Equal(t, first, e.mustGet(t, first.ID))

		e.advance(time.Minute)
		again, created, err := e.st.CreateForMessage(e.ctx, messageDraft(-100123, 42))
		require.NoError(t, err)
		require.False(t, created)
		require.Equal(t, first, again, "the redelivered update finds the same job, untouched")
	})

	t.Run("the same message id in another chat is another job", func(t *testing.T) {
		e := newEnv(t, open)
		a, _, err := e.st.CreateForMessage(e.ctx, messageDraft(1, 7))
		require.NoError(t, err)
		b, created, err := e.st.CreateForMessage(e.ctx, messageDraft(2, 7))
		require.NoError(t, err)
		require.True(t, created)
		require.NotEqual(t, a.ID, b.ID)
		c, created, err := e.st.CreateForMessage(e.ctx, messageDraft(1, 8))
		require.NoError(t, err)
		require.True(t, created)
		require.NotEqual(t, a.ID, c.ID)
	})

	t.Run("refuses a draft without a message", func(t *testing.T) {
		e := newEnv(t, open)
		_, _, err := e.st.CreateForMessage(e.ctx, apiDraft("o"))
		require.ErrorIs(t, err, job.ErrInvalid)
		d := messageDraft(0, 0)
		_, _, err = e.st.CreateForMessage(e.ctx, d)
		require.ErrorIs(t, err, job.ErrInvalid)
	})
}

func testGet(t *testing.T, open Opener) {
	t.Run("unknown id is not found", func(t *testing.T) {
		e := newEnv(t, open)
		_, err := e.st.Get(e.ctx, ident.New())
		require.ErrorIs(t, err, job.ErrNotFound)
		require.Equal(t, errs.NotFound, errs.KindOf(err))
	})

	t.Run("upper-case id finds the job", func(t *testing.T) {
		e := newEnv(t, open)
		j := e.mustCreate(t, apiDraft("o"))
		got, err := e.st.Get(e.ctx, strings.ToUpper(j.ID))
		require.NoError(t, err)
		require.Equal(t, j, got)
	})

	t.Run("a malformed id is not found without a backend call", func(t *testing.T) {
		e := newEnv(t, open)
		j := e.mustCreate(t, apiDraft("o"))
		e.brk()

		for _, id := range []string{"", "42", "../sources/x", j.ID + "0", strings.Repeat("u", ident.Len), "01jd0m3y8k9q2r5t7v4w6x8z0a'--"} {
			_, err := e.st.Get(e.ctx, id)
			require.ErrorIs(t, err, job.ErrNotFound, "Get(%q)", id)
			_, err = e.st.Claim(e.ctx, id, job.Ingest)
			require.ErrorIs(t, err, job.ErrNotFound, "Claim(%q)", id)
			_, err = e.st.Save(e.ctx, job.Job{ID: id, State: job.Created, ClaimID: ident.New()}, job.Next{})
			require.ErrorIs(t, err, job.ErrNotFound, "Save(%q)", id)
			_, err = e.st.Release(e.ctx, job.Claim{JobID: id, ID: ident.New()}, 0, job.Failure{})
			require.ErrorIs(t, err, job.ErrNotFound, "Release(%q)", id)
		}

		// The broken backend does fail a well-formed id: the answers above
		// came without reaching it.
		_, err := e.st.Get(e.ctx, j.ID)
		require.Error(t, err, "a call that reaches the broken backend fails")
		require.NotErrorIs(t, err, job.ErrNotFound)
	})
}
