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
//
// A run again after a commit whose answer was lost (DB.lose) finds its
// earlier claims again: it reads each by its key (get) and keeps those
// still as it wrote them (same), which are no longer due; its selection
// (query, whose last argument is its limit) then takes only the rest.
func claimDue[D any](ctx context.Context, db *DB, limit int, query string, args []any,
	scan func(scanner) (D, error), apply func(D) (D, error), write func(*sql.Tx, D) error,
	get func(*sql.Tx, D) (D, bool, error), same func(cur, wrote D) bool,
) ([]D, error) {
	var claimed, wrote []D
	err := db.tx(ctx, func(tx *sql.Tx) error {
		claimed = make([]D, 0, limit)
		for _, w := range wrote {
			cur, found, err := get(tx, w)
			if err != nil {
				return err
			}
			if found && same(cur, w) {
				claimed = append(claimed, cur)
			}
		}
		if len(claimed) == limit {
			return nil
		}
		args := append(append([]any(nil), args[:len(args)-1]...), limit-len(claimed))
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
		wrote = claimed
		return nil
	})
	return claimed, err
}
