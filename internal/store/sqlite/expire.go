package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"transcriber/internal/job"
)

var _ job.Expirer = (*JobStore)(nil)

// selectExpired reads one range of jobs_ended, in its order.
var selectExpired = selectJob + ` WHERE ended_at IS NOT NULL AND ended_at < ? ORDER BY ended_at, id LIMIT ?`

func (s *JobStore) Expired(ctx context.Context, before time.Time, limit int) ([]job.Job, error) {
	if err := job.CheckClaimLimit(limit); err != nil {
		return nil, err
	}
	out, err := queryAll(ctx, s.db.sql, selectExpired, []any{formatTime(before), limit}, scanJob)
	if err != nil {
		return nil, fmt.Errorf("expired jobs: %w", err)
	}
	if err := loadSegments(ctx, s.db.sql, out); err != nil {
		return nil, fmt.Errorf("expired jobs: %w", err)
	}
	return out, nil
}

// Remove deletes rows ended before before; segments go by ON DELETE CASCADE.
func (s *JobStore) Remove(ctx context.Context, ids []string, before time.Time) (int, error) {
	n, err := txResult(ctx, s.db, func(tx *sql.Tx) (int, error) {
		n := 0
		for _, id := range ids {
			if id, err := job.ParseID(id); err == nil {
				k, err := execCount(ctx, tx, `DELETE FROM jobs WHERE id = ? AND ended_at IS NOT NULL AND ended_at < ?`, id, formatTime(before))
				if err != nil {
					return 0, err
				}
				n += k
			}
		}
		return n, nil
	})
	if err != nil {
		return 0, fmt.Errorf("remove expired jobs: %w", err)
	}
	return n, nil
}
