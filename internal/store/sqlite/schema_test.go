package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

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
