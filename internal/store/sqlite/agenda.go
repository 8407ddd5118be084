package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"transcriber/internal/botstate"
	"transcriber/internal/callback"
	"transcriber/internal/job"
)

// Agenda tells the timer when its earliest work is due (app.Agenda): a
// job in the given states, a pending Telegram delivery or a pending
// callback, in one query answered from the due indexes.
type Agenda struct{ db *DB }

// NewAgenda returns the agenda of the tables in db.
func NewAgenda(db *DB) *Agenda { return &Agenda{db: db} }

// NextWork returns the earliest time a job in states, a pending delivery
// or a pending callback is due; false when there is none. A delivery or
// callback whose lease runs on counts from its next_at: too early, never
// too late.
func (a *Agenda) NextWork(ctx context.Context, states []job.State) (time.Time, bool, error) {
	args := []any{string(botstate.Pending), string(callback.Pending)}
	jobs, jobArgs := nextDueQuery(states)
	if jobs == "" {
		jobs = `SELECT NULL`
	}
	args = append(args, jobArgs...)
	var at sql.NullString
	err := a.db.sql.QueryRowContext(ctx, `SELECT MIN(t) FROM (
		SELECT MIN(next_at) AS t FROM telegram_deliveries WHERE state = ?
		UNION ALL SELECT MIN(next_at) FROM callbacks WHERE state = ?
		UNION ALL `+jobs+`)`, args...).Scan(&at)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("next due work: %w", translate(err))
	}
	t, err := parseNullTime(at)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("next due work: %w", err)
	}
	return t, at.Valid, nil
}
