package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/clock/clocktest"
	"transcriber/internal/job"
	"transcriber/internal/outbox"
	"transcriber/internal/store/sqlite"
)

// The agenda's one read finds the earliest due work of the three kinds
// the timer does, and nothing when there is none.
func TestAgendaFindsTheEarliestWorkOfEveryKind(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	clk := clocktest.NewFake(now)
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "a.db"), clk)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	agenda := sqlite.NewAgenda(db)
	live := []job.State{job.AwaitingUpload, job.Created, job.Converted, job.Transcribe}
	next := func() (time.Time, bool) {
		t.Helper()
		at, ok, err := agenda.NextWork(ctx, live)
		require.NoError(t, err)
		return at, ok
	}

	_, ok := next()
	require.False(t, ok, "nothing at all")

	// A job waiting for its upload for an hour.
	_, err = sqlite.NewJobStore(db).Create(ctx, job.Draft{Source: job.SourceAPI, OwnerID: "o", UploadWindow: time.Hour})
	require.NoError(t, err)
	at, ok := next()
	require.True(t, ok)
	require.Equal(t, now.Add(time.Hour), at)
	_, ok, err = agenda.NextWork(ctx, []job.State{job.Done})
	require.NoError(t, err)
	require.False(t, ok, "only the states asked for count")

	// A callback due in 30 minutes comes first.
	box := sqlite.NewOutbox(db)
	_, _, err = box.Put(ctx, outbox.Entry{Kind: outbox.Callback, Key: "j1"}, now.Add(30*time.Minute), now)
	require.NoError(t, err)
	at, _ = next()
	require.Equal(t, now.Add(30*time.Minute), at)

	// A Telegram message due in 5 minutes, earlier still.
	_, _, err = box.Put(ctx, outbox.Entry{Kind: outbox.Telegram, Key: "1/2/result"}, now.Add(5*time.Minute), now)
	require.NoError(t, err)
	at, _ = next()
	require.Equal(t, now.Add(5*time.Minute), at)
}
