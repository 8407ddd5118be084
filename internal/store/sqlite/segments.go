package sqlite

import (
	"context"
	"database/sql"

	"transcriber/internal/job"
)

const segmentColumns = `job_id, seq, start_ms, duration_ms, audio_key, container, operation_id, done`

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
	_, err := queryAll(ctx, q, `SELECT `+segmentColumns+` FROM segments WHERE job_id IN (`+marks(len(jobs))+`) ORDER BY job_id, seq`, args,
		func(r scanner) (struct{}, error) {
			var (
				id string
				s  job.Segment
			)
			err := r.Scan(&id, &s.Seq, &s.StartMs, &s.DurationMs, &s.AudioKey, &s.Container, &s.OperationID, &s.Done)
			if err == nil {
				jobs[at[id]].Segments = append(jobs[at[id]].Segments, s)
			}
			return struct{}{}, err
		})
	return err
}

func writeSegments(ctx context.Context, tx *sql.Tx, j job.Job) error {
	err := exec(ctx, tx, `DELETE FROM segments WHERE job_id = ?`, j.ID)
	for _, s := range j.Segments {
		if err == nil {
			err = exec(ctx, tx, `INSERT INTO segments (`+segmentColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
				j.ID, s.Seq, s.StartMs, s.DurationMs, s.AudioKey, s.Container, s.OperationID, s.Done)
		}
	}
	return err
}
