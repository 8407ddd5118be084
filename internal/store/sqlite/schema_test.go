package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/botstate"
	"transcriber/internal/clock"
	"transcriber/internal/job"
)

// A database made by an older build is brought up to date, its rows intact.
func TestOpenAppliesTheMissingSteps(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	raw, err := sql.Open("sqlite", "file:"+path)
	require.NoError(t, err)
	_, err = raw.ExecContext(ctx, steps[0])
	require.NoError(t, err)
	_, err = raw.ExecContext(ctx, "PRAGMA user_version = 1")
	require.NoError(t, err)
	now := formatTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	// The row as a build of schema version 1 wrote it.
	_, err = raw.ExecContext(ctx, `INSERT INTO jobs (id, state, source, owner_id, language, filename, size_bytes,
		content_type, duration_ms, tg_chat_id, tg_message_id, attempts, next_run_at, claim_id, claim_until,
		error_code, error_message, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		"01jd0m3y8k9q2r5t7v4w6x8z0a", "created", "api", "o", "", "a.mp3", 10, "",
		0, nil, nil, 0, now, nil, nil, "", "", now, now)
	require.NoError(t, err)
	require.NoError(t, raw.Close())

	db, err := Open(ctx, path, clock.System())
	require.NoError(t, err)
	defer db.Close()
	var version int
	require.NoError(t, db.sql.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version))
	require.Equal(t, SchemaVersion(), version)
	j, err := NewJobStore(db).Get(ctx, "01jd0m3y8k9q2r5t7v4w6x8z0a")
	require.NoError(t, err)
	require.Equal(t, job.Created, j.State)
	require.Empty(t, j.Segments)
}

// A database of schema version 4, the last before the bot's tables, gains
// them (step 5) with its jobs intact, and the bot state store works on it.
func TestOpenAddsTheBotTablesToAVersion4Database(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v4.db")
	raw, err := sql.Open("sqlite", "file:"+path)
	require.NoError(t, err)
	for _, step := range steps[:4] {
		_, err = raw.ExecContext(ctx, step)
		require.NoError(t, err)
	}
	_, err = raw.ExecContext(ctx, "PRAGMA user_version = 4")
	require.NoError(t, err)
	require.NoError(t, raw.Close())
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

	db, err := Open(ctx, path, clock.NewFake(now))
	require.NoError(t, err)
	defer db.Close()
	j, _, err := NewJobStore(db).CreateForMessage(ctx, job.Draft{
		Source: job.SourceTelegram, Filename: "voice.ogg", SizeBytes: 10, ContentType: "audio/ogg",
		TelegramChatID: -100123, TelegramMessageID: 7,
	})
	require.NoError(t, err)

	var version int
	require.NoError(t, db.sql.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version))
	require.Equal(t, SchemaVersion(), version)
	for _, table := range []string{"telegram_chats", "telegram_deliveries"} {
		var n int
		require.NoError(t, db.sql.QueryRowContext(ctx, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?", table).Scan(&n))
		require.Equal(t, 1, n, table)
	}

	bot := NewBotState(db)
	c, err := bot.UpdateChat(ctx, -100123, now, func(c *botstate.Chat) { c.Language = "ru-RU" })
	require.NoError(t, err)
	require.Equal(t, "ru-RU", c.Language)
	d, taken, err := bot.Begin(ctx, botstate.Key{ChatID: -100123, MessageID: 7, Part: "result"}, j.ID, now, time.Minute)
	require.NoError(t, err)
	require.True(t, taken)
	require.Equal(t, j.ID, d.JobID)
}

// Step 6 gives the jobs that ended before it an end (their last change),
// so they expire, and blanks the jobs deleted before it as Delete now does.
func TestStep6EndsOldJobsAndForgetsDeletedOnes(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v5.db")
	raw, err := sql.Open("sqlite", "file:"+path)
	require.NoError(t, err)
	for _, step := range steps[:5] {
		_, err = raw.ExecContext(ctx, step)
		require.NoError(t, err)
	}
	_, err = raw.ExecContext(ctx, "PRAGMA user_version = 5")
	require.NoError(t, err)
	t0, t1 := formatTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), formatTime(time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC))
	insert := `INSERT INTO jobs (id, state, source, owner_id, language, filename, size_bytes, content_type, duration_ms,
		tg_chat_id, tg_message_id, attempts, next_run_at, error_code, error_message, idempotency_key, deleted_at,
		created_at, updated_at) VALUES (?, ?, ?, ?, '', ?, 10, ?, 0, ?, ?, 0, ?, '', '', ?, ?, ?, ?)`
	for _, r := range [][]any{
		{"01jd0m3y8k9q2r5t7v4w6x8z0a", "done", "api", "o", "a.mp3", "audio/mpeg", nil, nil, t0, "k", nil, t0, t1},
		{"01jd0m3y8k9q2r5t7v4w6x8z0b", "transcribe", "api", "o", "b.mp3", "audio/mpeg", nil, nil, t0, nil, nil, t0, t1},
		{"01jd0m3y8k9q2r5t7v4w6x8z0c", "failed", "telegram", "tg:5", "voice.ogg", "audio/ogg", 5, 7, t0, nil, t1, t0, t1},
		{"01jd0m3y8k9q2r5t7v4w6x8z0d", "done", "api", "o", "d.mp3", "audio/mpeg", nil, nil, t0, "k2", t1, t0, t1},
	} {
		_, err = raw.ExecContext(ctx, insert, r...)
		require.NoError(t, err)
	}
	require.NoError(t, raw.Close())

	db, err := Open(ctx, path, clock.System())
	require.NoError(t, err)
	defer db.Close()
	st := NewJobStore(db)
	get := func(id string) job.Job {
		j, err := st.Get(ctx, id)
		require.NoError(t, err)
		return j
	}
	done := get("01jd0m3y8k9q2r5t7v4w6x8z0a")
	require.Equal(t, done.UpdatedAt, done.EndedAt, "an ended job ends at its last change")
	require.Equal(t, "a.mp3", done.Filename, "a job not deleted keeps its fields")
	require.Equal(t, "k", done.IdempotencyKey)
	require.True(t, get("01jd0m3y8k9q2r5t7v4w6x8z0b").EndedAt.IsZero(), "a live job has no end")

	tg := get("01jd0m3y8k9q2r5t7v4w6x8z0c")
	require.Equal(t, job.Job{}, job.Job{Filename: tg.Filename, ContentType: tg.ContentType, OwnerID: tg.OwnerID,
		TelegramChatID: tg.TelegramChatID, TelegramMessageID: tg.TelegramMessageID}, "a deleted Telegram job is forgotten")
	api := get("01jd0m3y8k9q2r5t7v4w6x8z0d")
	require.Empty(t, api.Filename)
	require.Empty(t, api.IdempotencyKey)
	require.Equal(t, "o", api.OwnerID, "a deleted API job keeps its owner")
}

// Expired reads jobs_ended in its order.
func TestExpiredUsesTheEndedIndex(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "plan.db"), clock.System())
	require.NoError(t, err)
	defer db.Close()
	rows, err := db.sql.QueryContext(ctx, "EXPLAIN QUERY PLAN "+selectExpired, "x", 10)
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
	require.Contains(t, plan[0], "USING INDEX jobs_ended (ended_at>? AND ended_at<?)")
	require.NotContains(t, plan[0], "TEMP B-TREE")
}

// ClaimDue's selection reads the telegram_deliveries_due index, in its
// order, with no sort of its own.
func TestClaimDueUsesTheDueIndex(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "plan.db"), clock.System())
	require.NoError(t, err)
	defer db.Close()
	rows, err := db.sql.QueryContext(ctx, "EXPLAIN QUERY PLAN "+selectDueDeliveries, "pending", "x", "x", 10)
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
	require.Contains(t, plan[0], "USING INDEX telegram_deliveries_due (state=? AND next_at<?)")
}

func TestOpenRefusesANewerSchema(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "new.db")
	db, err := Open(ctx, path, clock.System())
	require.NoError(t, err)
	_, err = db.sql.ExecContext(ctx, "PRAGMA user_version = 99")
	require.NoError(t, err)
	require.NoError(t, db.Close())

	_, err = Open(ctx, path, clock.System())
	require.ErrorContains(t, err, "newer than this program")
}
