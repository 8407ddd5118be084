package sqlite

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/callback"
	"transcriber/internal/clock"
	"transcriber/internal/job"
)

// A job's callback goes with its row when the row is removed (the
// expirer's Remove), through the callbacks_forget trigger.
func TestCallbackGoesWithItsJob(t *testing.T) {
	ctx := context.Background()
	clk := clock.NewFake(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	db, err := Open(ctx, filepath.Join(t.TempDir(), "forget.db"), clk)
	require.NoError(t, err)
	defer db.Close()
	jobs, cbs := NewJobStore(db), NewCallbacks(db)
	var ids []string
	for _, name := range []string{"a.mp3", "b.mp3"} {
		j, err := jobs.Create(ctx, job.Draft{Source: job.SourceAPI, OwnerID: "o", Filename: name, SizeBytes: 10, UploadWindow: time.Hour})
		require.NoError(t, err)
		_, _, err = cbs.Register(ctx, callback.Delivery{JobID: j.ID, URL: "https://x.example.com/", TokenHash: "h", WebhookID: "msg_" + j.ID},
			clk.Now().Add(time.Hour), clk.Now())
		require.NoError(t, err)
		ids = append(ids, j.ID)
	}
	_, err = db.sql.ExecContext(ctx, `DELETE FROM jobs WHERE id = ?`, ids[0])
	require.NoError(t, err)
	_, err = cbs.Get(ctx, ids[0])
	require.ErrorIs(t, err, callback.ErrNotFound)
	_, err = cbs.Get(ctx, ids[1])
	require.NoError(t, err, "another job's callback stays")
}

// ClaimDue's selection reads the callbacks_due index, in its order.
func TestClaimDueCallbacksUsesTheDueIndex(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "plan.db"), clock.System())
	require.NoError(t, err)
	defer db.Close()
	rows, err := db.sql.QueryContext(ctx, "EXPLAIN QUERY PLAN "+selectDueCallbacks, "pending", "x", "x", 10)
	require.NoError(t, err)
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, notUsed int
		var detail string
		require.NoError(t, rows.Scan(&id, &parent, &notUsed, &detail))
		plan = append(plan, detail)
	}
	require.NoError(t, rows.Err())
	require.Len(t, plan, 1, "%q", plan)
	require.Contains(t, plan[0], "USING INDEX callbacks_due (state=? AND next_at<?)")
}
