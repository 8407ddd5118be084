package sqlite

import (
	"context"
	"database/sql"

	"transcriber/internal/job"
)

const segmentColumns = `job_id, seq, start_ms, duration_ms, audio_key, container, operation_id, done, counted_in`

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// queryAll scans every row of query.
func queryAll[T any](ctx context.Context, q querier, query string, args []any, scan func(scanner) (T, error)) ([]T, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, translate(err)
		}
		out = append(out, v)
	}
	return out, translate(rows.Err())
}

func loadSegments(ctx context.Context, q querier, jobs []job.Job) error {
	if len(jobs) == 0 {
		return nil
	}
	at := make(map[string]int, len(jobs))
	args := make([]any, len(jobs))
	for i, j := range jobs {
		at[j.ID] = i
		args[i] = j.ID
		jobs[i].Segments = nil
	}
	rows, err := q.QueryContext(ctx, `SELECT `+segmentColumns+` FROM segments WHERE job_id IN (`+
		marks(len(jobs))+`) ORDER BY job_id, seq`, args...)
	if err != nil {
		return translate(err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			id string
			s  job.Segment
		)
		if err := rows.Scan(&id, &s.Seq, &s.StartMs, &s.DurationMs, &s.AudioKey, &s.Container, &s.OperationID, &s.Done, timeText(&s.CountedIn)); err != nil {
			return translate(err)
		}
		i := at[id]
		jobs[i].Segments = append(jobs[i].Segments, s)
	}
	return translate(rows.Err())
}

func writeSegments(ctx context.Context, tx *sql.Tx, j job.Job) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM segments WHERE job_id = ?`, j.ID); err != nil {
		return translate(err)
	}
	for _, s := range j.Segments {
		_, err := tx.ExecContext(ctx, `INSERT INTO segments (`+segmentColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			j.ID, s.Seq, s.StartMs, s.DurationMs, s.AudioKey, s.Container, s.OperationID, s.Done, nullTime(s.CountedIn))
		if err != nil {
			return translate(err)
		}
	}
	return nil
}
