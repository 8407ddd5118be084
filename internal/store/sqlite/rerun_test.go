package sqlite_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/apitoken"
	"transcriber/internal/clock/clocktest"
	"transcriber/internal/job"
	"transcriber/internal/outbox"
	"transcriber/internal/store/sqlite"
)

// Every write of the store is safe to run twice: its transaction commits,
// its answer is lost, and it runs again on what it committed (the model
// of YDB's SDK running an idempotent transaction again,
// sqlite.LoseAnswers), and the call answers what one run would have.
// Each case says what the second run would do without its own write
// recognized.
func TestWritesWhoseAnswerIsLostRunAgainSafely(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	open := func(t *testing.T) (*sqlite.DB, *clocktest.Fake) {
		clk := clocktest.NewFake(now)
		return openDB(t, clk), clk
	}
	lose := func(t *testing.T, db *sqlite.DB) {
		t.Helper()
		lost := sqlite.LoseAnswers(db, 1)
		t.Cleanup(func() { require.Equal(t, 1, lost(), "the call's commit lost its answer") })
	}
	apiDraft := job.Draft{Source: job.SourceAPI, OwnerID: "owner", UploadWindow: time.Hour}

	t.Run("Create: its own row, not a key taken", func(t *testing.T) {
		db, _ := open(t)
		st := sqlite.NewJobStore(db)
		lose(t, db)
		j, err := st.Create(ctx, apiDraft)
		require.NoError(t, err)
		got, err := st.Get(ctx, j.ID)
		require.NoError(t, err)
		require.True(t, job.Same(got, j))
	})

	t.Run("CreateOnce: made by this call, not found made", func(t *testing.T) {
		db, _ := open(t)
		st := sqlite.NewJobStore(db)
		d := apiDraft
		d.IdempotencyKey = "k1"
		lose(t, db)
		j, created, err := st.CreateOnce(ctx, d)
		require.NoError(t, err)
		require.True(t, created)
		again, created, err := st.CreateOnce(ctx, d)
		require.NoError(t, err)
		require.False(t, created, "a later call finds it made")
		require.Equal(t, j.ID, again.ID)
	})

	t.Run("CreateForMessage: made by this call", func(t *testing.T) {
		db, _ := open(t)
		st := sqlite.NewJobStore(db)
		lose(t, db)
		_, created, err := st.CreateForMessage(ctx, job.Draft{Source: job.SourceTelegram, TelegramChatID: 5, TelegramMessageID: 6, UploadWindow: time.Hour})
		require.NoError(t, err)
		require.True(t, created, "the bot fetches the file of a job it made")
	})

	t.Run("Claim, Save, Release: the call's own claim, not held or lost", func(t *testing.T) {
		db, clk := open(t)
		st := sqlite.NewJobStore(db)
		j, err := st.Create(ctx, apiDraft)
		require.NoError(t, err)

		lose(t, db)
		claimed, err := st.Claim(ctx, j.ID, job.Ingest)
		require.NoError(t, err, "not the job held, by this very claim")
		require.Equal(t, 1, claimed.Attempts)

		clk.Advance(time.Second)
		lost := sqlite.LoseAnswers(db, 1)
		claimed.State = job.Created
		saved, err := st.Save(ctx, claimed, job.Next{After: time.Minute})
		require.NoError(t, err, "not the claim lost: this save ended it")
		require.Equal(t, job.Created, saved.State)
		require.Zero(t, saved.Attempts)
		require.Equal(t, 1, lost())

		again, err := st.Claim(ctx, j.ID, job.Ingest)
		require.NoError(t, err)
		lost = sqlite.LoseAnswers(db, 1)
		released, err := st.Release(ctx, again.Claim(), 4*time.Second, job.Failure{Code: "store_unavailable", Message: "later"})
		require.NoError(t, err, "not the claim lost: this release ended it")
		require.Empty(t, released.ClaimID)
		require.Equal(t, 1, lost())
		got, err := st.Get(ctx, j.ID)
		require.NoError(t, err)
		require.Equal(t, 1, got.Attempts, "one attempt counted")
	})

	t.Run("Delete", func(t *testing.T) {
		db, _ := open(t)
		st := sqlite.NewJobStore(db)
		j, err := st.Create(ctx, apiDraft)
		require.NoError(t, err)
		lose(t, db)
		d, err := st.Delete(ctx, j.ID)
		require.NoError(t, err)
		require.Equal(t, job.Failed, d.State)
	})

	t.Run("ClaimDue: the call's own claims, not none left due", func(t *testing.T) {
		db, clk := open(t)
		st := sqlite.NewJobStore(db)
		var ids []string
		for i := 0; i < 3; i++ {
			j, err := st.Create(ctx, apiDraft)
			require.NoError(t, err)
			ids = append(ids, j.ID)
		}
		clk.Advance(2 * time.Hour) // their upload windows closed: due for ingest
		lose(t, db)
		got, err := st.ClaimDue(ctx, job.Ingest, 2)
		require.NoError(t, err)
		require.Len(t, got, 2, "the two the first run claimed")
		require.Equal(t, ids[:2], []string{got[0].ID, got[1].ID})
		for _, j := range got {
			require.Equal(t, 1, j.Attempts)
		}
		rest, err := st.ClaimDue(ctx, job.Ingest, 5)
		require.NoError(t, err)
		require.Len(t, rest, 1, "the third is still due")
	})

	t.Run("tokens: Create finds its own token, not a conflict; Revoke", func(t *testing.T) {
		db, _ := open(t)
		st := sqlite.NewTokenStore(db)
		tok, _, err := apitoken.New("ci", now)
		require.NoError(t, err)
		lose(t, db)
		require.NoError(t, st.Create(ctx, tok))
		require.ErrorIs(t, st.Create(ctx, tok), apitoken.ErrConflict, "another call's create is still a conflict")
		lost := sqlite.LoseAnswers(db, 1)
		r, err := st.Revoke(ctx, tok.ID, now.Add(time.Minute))
		require.NoError(t, err)
		require.Equal(t, now.Add(time.Minute), r.RevokedAt)
		require.Equal(t, 1, lost())
	})

	t.Run("outbox: Put made by this call, Begin's own take, Finish counts its attempt once, ClaimDue's own claims", func(t *testing.T) {
		db, _ := open(t)
		st := sqlite.NewOutbox(db)
		cb := outbox.Entry{Kind: outbox.Callback, Key: "j1", JobID: "j1", Payload: "p"}
		lose(t, db)
		_, created, err := st.Put(ctx, cb, now, now)
		require.NoError(t, err)
		require.True(t, created)

		lost := sqlite.LoseAnswers(db, 1)
		_, taken, err := st.Begin(ctx, cb, now, time.Minute)
		require.NoError(t, err)
		require.True(t, taken, "not held by someone: this call took it, and sends")
		require.Equal(t, 1, lost())

		lost = sqlite.LoseAnswers(db, 1)
		d, err := st.Finish(ctx, cb.Kind, cb.Key, outbox.Outcome{State: outbox.Pending, NextAt: now.Add(time.Minute),
			Attempt: &outbox.Attempt{At: now, Status: 503, Error: "status_not_2xx"}}, now.Add(time.Second))
		require.NoError(t, err)
		require.Equal(t, 1, d.Attempts, "one POST, counted once")
		require.Equal(t, 1, lost())

		msg := outbox.Entry{Kind: outbox.Telegram, Key: "1/2/status"}
		lost = sqlite.LoseAnswers(db, 1)
		_, taken, err = st.Begin(ctx, msg, now, time.Minute)
		require.NoError(t, err)
		require.True(t, taken, "made and taken by this call")
		require.Equal(t, 1, lost())

		lost = sqlite.LoseAnswers(db, 1)
		due, err := st.ClaimDue(ctx, outbox.Callback, now.Add(2*time.Minute), time.Minute, 10)
		require.NoError(t, err)
		require.Len(t, due, 1, "the claim the first run made")
		require.Equal(t, 1, lost())
	})

	t.Run("counters: a reservation and a release count once", func(t *testing.T) {
		db, _ := open(t)
		c := sqlite.NewCounters(db)
		lose(t, db)
		used, ok, err := c.Reserve(ctx, "k", now, 3, 10)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, int64(3), used)
		n, err := c.Used(ctx, "k", now)
		require.NoError(t, err)
		require.Equal(t, int64(3), n, "not 6")

		lost := sqlite.LoseAnswers(db, 1)
		require.NoError(t, c.Release(ctx, "k", now, 2))
		require.Equal(t, 1, lost())
		n, err = c.Used(ctx, "k", now)
		require.NoError(t, err)
		require.Equal(t, int64(1), n, "not 0")
	})
}
