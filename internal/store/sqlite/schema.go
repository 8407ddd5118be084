package sqlite

import (
	"context"
	"database/sql"
	"fmt"
)

// steps are applied in order, with PRAGMA user_version (how many a
// database has) in one transaction. An applied step is never edited: a
// change is a new step, with docs/database.md. The history before the first
// deployment was folded into step 1. Every CREATE says IF NOT EXISTS, so a
// step whose record was lost runs again; ALTER TABLE … ADD COLUMN cannot,
// and then user_version is what to fix.
var steps = []string{
	// 1: the first form.
	`CREATE TABLE IF NOT EXISTS jobs (
		id               TEXT    PRIMARY KEY,
		state            TEXT    NOT NULL,
		source           TEXT    NOT NULL,
		owner_id         TEXT    NOT NULL,
		language         TEXT    NOT NULL,
		filename         TEXT    NOT NULL,
		size_bytes       INTEGER NOT NULL,
		content_type     TEXT    NOT NULL,
		duration_ms      INTEGER NOT NULL,
		tg_chat_id       INTEGER,
		tg_message_id    INTEGER,
		attempts         INTEGER NOT NULL,
		next_run_at      TEXT    NOT NULL,
		claim_id         TEXT,
		claim_until      TEXT,
		error_code       TEXT    NOT NULL,
		error_message    TEXT    NOT NULL,
		created_at       TEXT    NOT NULL,
		updated_at       TEXT    NOT NULL,
		idempotency_key  TEXT,
		deleted_at       TEXT,
		upload_by        TEXT,
		ended_at         TEXT,
		charged_to       TEXT,
		reserved_seconds INTEGER,
		reserved_day     TEXT,
		priority         TEXT,
		features         TEXT,
		recognition      TEXT,
		billed_seconds   INTEGER,
		reserved_micros  INTEGER,
		reuse_key        TEXT
	);
	CREATE INDEX IF NOT EXISTS jobs_due ON jobs (state, next_run_at, id);
	CREATE INDEX IF NOT EXISTS jobs_owner ON jobs (owner_id, id);
	CREATE UNIQUE INDEX IF NOT EXISTS jobs_telegram ON jobs (tg_chat_id, tg_message_id) WHERE tg_chat_id IS NOT NULL;
	CREATE UNIQUE INDEX IF NOT EXISTS jobs_idempotency ON jobs (owner_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
	CREATE INDEX IF NOT EXISTS jobs_ended ON jobs (ended_at, id) WHERE ended_at IS NOT NULL;
	CREATE INDEX IF NOT EXISTS jobs_unfinished ON jobs (charged_to, id) WHERE ended_at IS NULL;
	CREATE INDEX IF NOT EXISTS jobs_reuse ON jobs (reuse_key, ended_at) WHERE reuse_key IS NOT NULL;

	CREATE TABLE IF NOT EXISTS segments (
		job_id       TEXT    NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
		seq          INTEGER NOT NULL,
		start_ms     INTEGER NOT NULL,
		duration_ms  INTEGER NOT NULL,
		audio_key    TEXT    NOT NULL,
		container    TEXT    NOT NULL,
		operation_id TEXT    NOT NULL,
		done         INTEGER NOT NULL,
		PRIMARY KEY (job_id, seq)
	);

	CREATE TABLE IF NOT EXISTS api_tokens (
		hash            TEXT PRIMARY KEY,
		id              TEXT NOT NULL UNIQUE,
		name            TEXT NOT NULL,
		created_at      TEXT NOT NULL,
		revoked_at      TEXT,
		callback_secret TEXT NOT NULL DEFAULT ''
	);

	CREATE TABLE IF NOT EXISTS telegram_chats (
		chat_id    INTEGER PRIMARY KEY,
		language   TEXT    NOT NULL DEFAULT '',
		format     TEXT    NOT NULL DEFAULT '',
		auto       TEXT    NOT NULL DEFAULT '',
		ui_lang    TEXT    NOT NULL DEFAULT '',
		blocked_at TEXT,
		updated_at TEXT    NOT NULL,
		mode       TEXT    NOT NULL DEFAULT '',
		features   TEXT    NOT NULL DEFAULT ''
	);
	CREATE TABLE IF NOT EXISTS counters (
		counter      TEXT    NOT NULL,
		window_start TEXT    NOT NULL,
		used         INTEGER NOT NULL,
		expires_at   TEXT    NOT NULL,
		ops          TEXT    NOT NULL DEFAULT '',
		PRIMARY KEY (counter, window_start)
	);
	CREATE INDEX IF NOT EXISTS counters_expiry ON counters (expires_at);

	CREATE TABLE IF NOT EXISTS outbox (
		kind        TEXT    NOT NULL,
		key         TEXT    NOT NULL,
		job_id      TEXT    NOT NULL,
		payload     TEXT    NOT NULL,
		state       TEXT    NOT NULL,
		sent_id     INTEGER NOT NULL,
		attempts    INTEGER NOT NULL,
		next_at     TEXT    NOT NULL,
		lease_until TEXT    NOT NULL,
		first_at    TEXT,
		last_at     TEXT,
		last_status INTEGER NOT NULL,
		last_error  TEXT    NOT NULL,
		created_at  TEXT    NOT NULL,
		updated_at  TEXT    NOT NULL,
		PRIMARY KEY (kind, key)
	);
	CREATE INDEX IF NOT EXISTS outbox_due ON outbox (kind, state, next_at, key);
	CREATE TRIGGER IF NOT EXISTS outbox_forget_callback AFTER DELETE ON jobs
	BEGIN DELETE FROM outbox WHERE kind = 'callback' AND key = old.id; END;`,
}

// SchemaVersion is the number of schema steps this code knows.
func SchemaVersion() int { return len(steps) }

func (db *DB) migrate(ctx context.Context) error {
	return db.tx(ctx, func(tx *sql.Tx) error {
		var have int
		if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&have); err != nil {
			return translate(err)
		}
		if have > len(steps) {
			return fmt.Errorf("schema version %d is newer than this program's %d: run a newer build", have, len(steps))
		}
		for i := have; i < len(steps); i++ {
			if err := exec(ctx, tx, steps[i]); err != nil {
				return fmt.Errorf("schema step %d: %w", i+1, err)
			}
		}
		return exec(ctx, tx, fmt.Sprintf("PRAGMA user_version = %d", len(steps))) // PRAGMA takes no parameters; the number is ours
	})
}
