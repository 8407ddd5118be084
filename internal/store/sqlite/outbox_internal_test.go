package sqlite

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/clock/clocktest"
	"transcriber/internal/job"
	"transcriber/internal/outbox"
)

// A job's callback goes with its row when the row is removed (the
// expirer's Remove), through the outbox_forget_callback trigger.
func TestCallbackGoesWithItsJob(t *testing.T) {
	ctx := context.Background()
	clk := clocktest.NewFake(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	db, err := Open(ctx, filepath.Join(t.TempDir(), "forget.db"), clk)
	require.NoError(t, err)
	defer db.Close()
	jobs, box := NewJobStore(db), NewOutbox(db)
	var ids []string
	for _, name := range []string{"a.mp3", "b.mp3"} {
		j, err := jobs.Create(ctx, job.Draft{Source: job.SourceAPI, OwnerID: "o", Filename: name, SizeBytes: 10, UploadWindow: time.Hour})
		require.NoError(t, err)
		for _, kind := range []outbox.Kind{outbox.Callback, outbox.Telegram} {
			_, _, err = box.Put(ctx, outbox.Entry{Kind: kind, Key: j.ID, JobID: j.ID}, clk.Now().Add(time.Hour), clk.Now())
			require.NoError(t, err)
		}
		ids = append(ids, j.ID)
	}
	_, err = db.sql.ExecContext(ctx, `DELETE FROM jobs WHERE id = ?`, ids[0])
	require.NoError(t, err)
	_, err = box.Get(ctx, outbox.Callback, ids[0])
	require.ErrorIs(t, err, outbox.ErrNotFound)
	_, err = box.Get(ctx, outbox.Callback, ids[1])
	require.NoError(t, err, "another job's callback stays")
	_, err = box.Get(ctx, outbox.Telegram, ids[0])
	require.NoError(t, err, "a Telegram entry expires by itself")
}
