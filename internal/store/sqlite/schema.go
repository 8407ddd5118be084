package sqlite

import (
	"context"
	"database/sql"
	"fmt"
)

// steps are the schema's steps, applied in order; PRAGMA user_version holds
// how many a database has. An applied step is never edited: a change is a
// new step, and docs/database.md changes with it.
//
// migrate runs the missing steps and writes user_version in one
// transaction, and SQLite's DDL is transactional, so a crash leaves either
// all of it or none. Still, every CREATE TABLE and CREATE INDEX says IF
// NOT EXISTS, so a step whose record was lost (a file restored from a copy,
// user_version written back by hand) runs again without harm. Steps 1 to 6
// said plain CREATE when they were applied: adding IF NOT EXISTS to them
// later was the one edit of an applied step allowed, since on a database
// that has the step it does nothing either way. ALTER TABLE … ADD COLUMN
// has no IF NOT EXISTS in SQLite: a step holding one (3, 4, 6, 8, 10, 11, 12, 13, 14) fails when
// run again on a database that has its column, and then the record is what
// to fix (PRAGMA user_version), never the step. docs/database.md says so.
var steps = []string{
	// 1: jobs, the job and its queue entry in one row.
	`CREATE TABLE IF NOT EXISTS jobs (
		id            TEXT    PRIMARY KEY,
		state         TEXT    NOT NULL,
		source        TEXT    NOT NULL,
		owner_id      TEXT    NOT NULL,
		language      TEXT    NOT NULL,
		filename      TEXT    NOT NULL,
		size_bytes    INTEGER NOT NULL,
		content_type  TEXT    NOT NULL,
		duration_ms   INTEGER NOT NULL,
		tg_chat_id    INTEGER,
		tg_message_id INTEGER,
		attempts      INTEGER NOT NULL,
		next_run_at   TEXT    NOT NULL,
		claim_id      TEXT,
		claim_until   TEXT,
		error_code    TEXT    NOT NULL,
		error_message TEXT    NOT NULL,
		created_at    TEXT    NOT NULL,
		updated_at    TEXT    NOT NULL
	);
	CREATE INDEX IF NOT EXISTS jobs_due ON jobs (state, next_run_at, id);
	CREATE INDEX IF NOT EXISTS jobs_owner ON jobs (owner_id, id);
	CREATE UNIQUE INDEX IF NOT EXISTS jobs_telegram ON jobs (tg_chat_id, tg_message_id) WHERE tg_chat_id IS NOT NULL;`,

	// 2: segments, the pieces of a job's audio and their recognitions.
	`CREATE TABLE IF NOT EXISTS segments (
		job_id       TEXT    NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
		seq          INTEGER NOT NULL,
		start_ms     INTEGER NOT NULL,
		duration_ms  INTEGER NOT NULL,
		audio_key    TEXT    NOT NULL,
		container    TEXT    NOT NULL,
		operation_id TEXT    NOT NULL,
		done         INTEGER NOT NULL,
		PRIMARY KEY (job_id, seq)
	);`,

	// 3: API tokens, and what the HTTP API needs of a job: the key that
	// makes a retried POST return the same job, and the mark of deletion.
	`CREATE TABLE IF NOT EXISTS api_tokens (
		hash       TEXT PRIMARY KEY,
		id         TEXT NOT NULL UNIQUE,
		name       TEXT NOT NULL,
		created_at TEXT NOT NULL,
		revoked_at TEXT
	);
	ALTER TABLE jobs ADD COLUMN idempotency_key TEXT;
	ALTER TABLE jobs ADD COLUMN deleted_at TEXT;
	CREATE UNIQUE INDEX IF NOT EXISTS jobs_idempotency ON jobs (owner_id, idempotency_key) WHERE idempotency_key IS NOT NULL;`,

	// 4: the end of a job's upload window, kept apart from next_run_at,
	// which a claim or a pause moves.
	`ALTER TABLE jobs ADD COLUMN upload_by TEXT;`,

	// 5: what the Telegram bot keeps besides jobs (botstate.Store): each
	// chat's settings, and the messages it posts, keyed by the Telegram
	// message they answer. telegram_deliveries_due serves ClaimDue.
	`CREATE TABLE IF NOT EXISTS telegram_chats (
		chat_id    INTEGER PRIMARY KEY,
		language   TEXT    NOT NULL DEFAULT '',
		format     TEXT    NOT NULL DEFAULT '',
		auto       TEXT    NOT NULL DEFAULT '',
		ui_lang    TEXT    NOT NULL DEFAULT '',
		blocked_at TEXT,
		updated_at TEXT    NOT NULL
	);
	CREATE TABLE IF NOT EXISTS telegram_deliveries (
		chat_id     INTEGER NOT NULL,
		message_id  INTEGER NOT NULL,
		part        TEXT    NOT NULL,
		job_id      TEXT    NOT NULL DEFAULT '',
		state       TEXT    NOT NULL,
		sent_id     INTEGER NOT NULL DEFAULT 0,
		attempts    INTEGER NOT NULL,
		next_at     TEXT    NOT NULL,
		lease_until TEXT    NOT NULL,
		updated_at  TEXT    NOT NULL,
		PRIMARY KEY (chat_id, message_id, part)
	);
	CREATE INDEX IF NOT EXISTS telegram_deliveries_due ON telegram_deliveries (state, next_at, chat_id, message_id, part);`,

	// 6: when a job ended, from which its row expires (job.Expirer), and
	// jobs_ended to find the expired ones. Jobs ended before this step end
	// at their last change. Jobs deleted before this step lose what Delete
	// now blanks (job.Forgotten).
	`ALTER TABLE jobs ADD COLUMN ended_at TEXT;
	UPDATE jobs SET ended_at = updated_at WHERE state IN ('done', 'failed', 'dead');
	CREATE INDEX IF NOT EXISTS jobs_ended ON jobs (ended_at, id) WHERE ended_at IS NOT NULL;
	UPDATE jobs SET filename = '', content_type = '', tg_chat_id = NULL, tg_message_id = NULL, idempotency_key = NULL,
		owner_id = CASE WHEN source = 'telegram' THEN '' ELSE owner_id END
	WHERE deleted_at IS NOT NULL;`,

	// 7: usage counters (quota.Counters), one row per key and window;
	// counters_expiry finds the expired ones (quota.Expirer).
	`CREATE TABLE IF NOT EXISTS counters (
		counter      TEXT    NOT NULL,
		window_start TEXT    NOT NULL,
		used         INTEGER NOT NULL,
		expires_at   TEXT    NOT NULL,
		PRIMARY KEY (counter, window_start)
	);
	CREATE INDEX IF NOT EXISTS counters_expiry ON counters (expires_at);`,

	// 8: spend control (package spend): who pays for a job, the audio
	// reserved for it and the day it was counted in. Jobs made before this
	// step are charged to nobody.
	`ALTER TABLE jobs ADD COLUMN charged_to TEXT;
	ALTER TABLE jobs ADD COLUMN reserved_seconds INTEGER;
	ALTER TABLE jobs ADD COLUMN reserved_day TEXT;`,

	// 9: jobs_unfinished finds a payer's unfinished jobs
	// (Store.Unfinished), reading no more rows than it returns.
	`CREATE INDEX IF NOT EXISTS jobs_unfinished ON jobs (charged_to, id) WHERE ended_at IS NULL;`,

	// 10: a job's priority (job.Priority: "normal" or "deferred"), and a
	// Telegram chat's choice of it (/mode). Jobs made before this step
	// are normal; a chat's empty mode is normal.
	`ALTER TABLE jobs ADD COLUMN priority TEXT;
	ALTER TABLE telegram_chats ADD COLUMN mode TEXT NOT NULL DEFAULT '';`,

	// 11: a job's features (job.Features, a small JSON object: speakers, a
	// summary, the audio's channels, why a summary is missing), and a
	// Telegram chat's choice of them (/speakers, /summary: the words
	// "speakers" and "summary"). Jobs made before this step, and chats
	// never set, have none.
	`ALTER TABLE jobs ADD COLUMN features TEXT;
	ALTER TABLE telegram_chats ADD COLUMN features TEXT NOT NULL DEFAULT '';`,
	// 12: signed callbacks (package callback): each token's callback
	// secret (tokens made before this step have none), and the callback of
	// a job made with a callback_url, keyed by the job. callbacks_due
	// serves ClaimDue; callbacks_forget removes a job's callback with its
	// row when the job expires.
	`ALTER TABLE api_tokens ADD COLUMN callback_secret TEXT NOT NULL DEFAULT '';
	CREATE TABLE IF NOT EXISTS callbacks (
		job_id      TEXT    PRIMARY KEY,
		url         TEXT    NOT NULL,
		token_hash  TEXT    NOT NULL,
		webhook_id  TEXT    NOT NULL,
		state       TEXT    NOT NULL,
		attempts    INTEGER NOT NULL,
		next_at     TEXT    NOT NULL,
		lease_until TEXT    NOT NULL,
		first_at    TEXT,
		last_at     TEXT,
		last_status INTEGER NOT NULL DEFAULT 0,
		last_error  TEXT    NOT NULL DEFAULT '',
		created_at  TEXT    NOT NULL,
		updated_at  TEXT    NOT NULL
	);
	CREATE INDEX IF NOT EXISTS callbacks_due ON callbacks (state, next_at, job_id);
	CREATE TRIGGER IF NOT EXISTS callbacks_forget AFTER DELETE ON jobs
	BEGIN DELETE FROM callbacks WHERE job_id = old.id; END;`,

	// 13: the window of the installation's count of recognitions in
	// flight that a segment's recognition was last counted in
	// (job.Segment.CountedIn). Segments written before this step are
	// counted in none; their recognitions are counted again at their
	// job's next check.
	`ALTER TABLE segments ADD COLUMN counted_in TEXT;`,

	// 14: how a job was recognized (job.Recognition: "sync" or "async")
	// and what the recognizer said it billed for it (job.BilledSeconds).
	// Jobs made before this step have neither: their bill is reckoned
	// from their segments.
	`ALTER TABLE jobs ADD COLUMN recognition TEXT;
	ALTER TABLE jobs ADD COLUMN billed_seconds INTEGER;`,

	// 15: the ids of the last changes of each usage counter (quota.Row,
	// quota.EncodeOps), so a change run twice for one call counts once.
	// Counters written before this step remember none.
	`ALTER TABLE counters ADD COLUMN ops TEXT NOT NULL DEFAULT '';`,

	// 16: the price reserved for a job, in millionths of a ruble
	// (job.ReservedMicros), against the month's budget.
	`ALTER TABLE jobs ADD COLUMN reserved_micros INTEGER;`,

	// 17: the job's reuse key (job.ReuseKey) and the index that finds a
	// done job to reuse by it.
	`ALTER TABLE jobs ADD COLUMN reuse_key TEXT;
	CREATE INDEX IF NOT EXISTS jobs_reuse ON jobs (reuse_key, ended_at) WHERE reuse_key IS NOT NULL;`,
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
			if _, err := tx.ExecContext(ctx, steps[i]); err != nil {
				return fmt.Errorf("schema step %d: %w", i+1, translate(err))
			}
		}
		// PRAGMA takes no parameters; the number is ours.
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", len(steps))); err != nil {
			return translate(err)
		}
		return nil
	})
}
