package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/botstate"
	"transcriber/internal/clock"
	"transcriber/internal/clock/clocktest"
	"transcriber/internal/job"
	"transcriber/internal/outbox"
)

func version(t *testing.T, db *DB) int {
	var v int
	require.NoError(t, db.sql.QueryRowContext(context.Background(), "PRAGMA user_version").Scan(&v))
	return v
}

// A step whose record was lost (user_version written back) runs again
// without harm and keeps the rows; a step added later applies to that
// database.
func TestMigrateRerunsAStepWhoseRecordWasLost(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "rerun.db")
	w := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	db, err := Open(ctx, path, clocktest.NewFake(w))
	require.NoError(t, err)
	_, ok, err := NewCounters(db).Reserve(ctx, "k", w, 3, 10)
	require.NoError(t, err)
	require.True(t, ok)
	_, err = db.sql.ExecContext(ctx, "PRAGMA user_version = 0")
	require.NoError(t, err)
	require.NoError(t, db.Close())

	db, err = Open(ctx, path, clocktest.NewFake(w))
	require.NoError(t, err, "step 1 runs again on a database that has it")
	require.Equal(t, SchemaVersion(), version(t, db))
	require.NoError(t, db.Close())

	all := steps
	t.Cleanup(func() { steps = all })
	steps = append(all[:len(all):len(all)], `CREATE TABLE IF NOT EXISTS later (x TEXT)`)
	db, err = Open(ctx, path, clocktest.NewFake(w))
	require.NoError(t, err, "a later step applies")
	defer db.Close()
	require.Equal(t, len(all)+1, version(t, db))
	var n int
	require.NoError(t, db.sql.QueryRowContext(ctx, "SELECT COUNT(*) FROM later").Scan(&n))
	n64, err := NewCounters(db).Used(ctx, "k", w)
	require.NoError(t, err)
	require.Equal(t, int64(3), n64, "the rows are kept")
}

// Every CREATE says IF NOT EXISTS, so step 1 can run again.
func TestCreatesSayIfNotExists(t *testing.T) {
	for _, stmt := range strings.Split(steps[0], ";") {
		if stmt = strings.TrimSpace(stmt); strings.HasPrefix(stmt, "CREATE") {
			require.Contains(t, stmt, "IF NOT EXISTS", "%.50s", stmt)
		}
	}
}

// A database with part of step 1 and no record (jobs only, with a row)
// is completed, its row intact, and the other stores work on it.
func TestOpenCompletesAPartlyAppliedSchema(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "part.db")
	raw, err := sql.Open("sqlite", "file:"+path)
	require.NoError(t, err)
	_, err = raw.ExecContext(ctx, steps[0][:strings.Index(steps[0], "CREATE INDEX")])
	require.NoError(t, err)
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	_, err = raw.ExecContext(ctx, `INSERT INTO jobs (id, state, source, owner_id, language, filename, size_bytes,
		content_type, duration_ms, attempts, next_run_at, error_code, error_message, created_at, updated_at)
		VALUES (?, 'created', 'api', 'o', '', 'a.mp3', 10, '', 0, 0, ?, '', '', ?, ?)`,
		"01jd0m3y8k9q2r5t7v4w6x8z0a", formatTime(now), formatTime(now), formatTime(now))
	require.NoError(t, err)
	require.NoError(t, raw.Close())

	db, err := Open(ctx, path, clocktest.NewFake(now))
	require.NoError(t, err)
	defer db.Close()
	require.Equal(t, SchemaVersion(), version(t, db))
	j, err := NewJobStore(db).Get(ctx, "01jd0m3y8k9q2r5t7v4w6x8z0a")
	require.NoError(t, err)
	require.Equal(t, job.Created, j.State)

	j, _, err = NewJobStore(db).CreateForMessage(ctx, job.Draft{
		Source: job.SourceTelegram, Filename: "voice.ogg", SizeBytes: 10, ContentType: "audio/ogg",
		TelegramChatID: -100123, TelegramMessageID: 7,
	})
	require.NoError(t, err)
	bot := NewBotState(db)
	c, err := bot.UpdateChat(ctx, -100123, now, func(c *botstate.Chat) { c.Language = "ru-RU" })
	require.NoError(t, err)
	require.Equal(t, "ru-RU", c.Language)
	d, taken, err := NewOutbox(db).Begin(ctx, outbox.Entry{Kind: outbox.Telegram, Key: "-100123/7/result", JobID: j.ID}, now, time.Minute)
	require.NoError(t, err)
	require.True(t, taken)
	require.Equal(t, j.ID, d.JobID)
}

func queryPlan(t *testing.T, query string, args ...any) []string {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "plan.db"), clock.System())
	require.NoError(t, err)
	defer db.Close()
	rows, err := db.sql.QueryContext(ctx, "EXPLAIN QUERY PLAN "+query, args...)
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
	return plan
}

// Expired reads jobs_ended in its order.
func TestExpiredUsesTheEndedIndex(t *testing.T) {
	plan := queryPlan(t, selectExpired, "x", 10)
	require.Contains(t, plan[0], "USING INDEX jobs_ended (ended_at>? AND ended_at<?)")
	require.NotContains(t, plan[0], "TEMP B-TREE")
}

// ClaimDue's selection reads outbox_due in its order.
func TestClaimDueUsesTheDueIndex(t *testing.T) {
	plan := queryPlan(t, selectDue, "telegram", "pending", "x", "x", 10)
	require.Contains(t, plan[0], "USING INDEX outbox_due (kind=? AND state=? AND next_at<?)")
}

func TestOpenRefusesANewerSchema(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "new.db")
	db, err := Open(ctx, path, clock.System())
	require.NoError(t, err)
	_, err = db.sql.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", SchemaVersion()+1))
	require.NoError(t, err)
	require.NoError(t, db.Close())

	_, err = Open(ctx, path, clock.System())
	require.ErrorContains(t, err, "newer than this program")
}
