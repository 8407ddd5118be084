package sqlite

import (
	"context"
	"fmt"
	"time"

	"transcriber/internal/job"
	"transcriber/internal/outbox"
)

// Agenda tells the timer when its earliest work is due (app.Agenda), in
// one query answered from the due indexes.
type Agenda struct{ db *DB }

func NewAgenda(db *DB) *Agenda { return &Agenda{db: db} }

// NextWork counts a leased outbox entry from its next_at: too early,
// never too late.
func (a *Agenda) NextWork(ctx context.Context, states []job.State) (time.Time, bool, error) {
	args := []any{string(outbox.Telegram), string(outbox.Pending), string(outbox.Callback), string(outbox.Pending)}
	jobs, jobArgs := nextDueQuery(states)
	if jobs == "" {
		jobs = `SELECT NULL`
	}
	args = append(args, jobArgs...)
	t, found, err := earliest(a.db.sql.QueryRowContext(ctx, `SELECT MIN(t) FROM (
		SELECT MIN(next_at) AS t FROM outbox WHERE kind = ? AND state = ?
		UNION ALL SELECT MIN(next_at) FROM outbox WHERE kind = ? AND state = ?
		UNION ALL `+jobs+`)`, args...))
	if err != nil {
		return time.Time{}, false, fmt.Errorf("next due work: %w", err)
	}
	return t, found, nil
}
