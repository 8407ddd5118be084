package sqlite

import (
	"context"
	"database/sql"
)

// claimDue is the due selection the Telegram deliveries and the callbacks
// share: in one write transaction, select the due rows (query with args,
// each read by scan), apply the claim to each (apply, the port's rule),
// and write it back (write), so no other caller selects them meanwhile.
// Its errors are translated; the caller names what it claimed.
func claimDue[D any](ctx context.Context, db *DB, limit int, query string, args []any,
	scan func(scanner) (D, error), apply func(D) (D, error), write func(*sql.Tx, D) error,
) ([]D, error) {
	claimed := make([]D, 0, limit)
	err := db.tx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, query, args...)
		if err != nil {
			return translate(err)
		}
		var due []D
		for rows.Next() {
			d, err := scan(rows)
			if err != nil {
				_ = rows.Close()
				return translate(err)
			}
			due = append(due, d)
		}
		if err := rows.Close(); err != nil {
			return translate(err)
		}
		if err := rows.Err(); err != nil {
			return translate(err)
		}
		for _, cur := range due {
			d, err := apply(cur)
			if err != nil {
				return err
			}
			if err := write(tx, d); err != nil {
				return translate(err)
			}
			claimed = append(claimed, d)
		}
		return nil
	})
	return claimed, err
}
