package ydb

import (
	"context"

	"github.com/ydb-platform/ydb-go-sdk/v3/query"
)

// claimDue is the due selection the Telegram deliveries and the callbacks
// share: in one transaction, select the due rows (selectStmt with p, each
// read by scan), apply the claim to each (apply, the port's rule) and
// write them all with upsertStmt and the parameters rows makes of them.
// Two sweepers that select the same rows both write them; the first commit
// wins, the other's locks are invalidated and the SDK runs it again, when
// those rows are held.
func claimDue[D any](ctx context.Context, db *DB, selectStmt string, p params, scan func(query.Row) (D, error),
	apply func(D) (D, error), upsertStmt string, rows func(...D) params,
) ([]D, error) {
	var claimed []D
	err := db.update(ctx, func(ctx context.Context, tx query.TxActor) error {
		claimed = nil
		var due []D
		err := db.rows(ctx, tx, selectStmt, p, func(row query.Row) error {
			d, err := scan(row)
			due = append(due, d)
			return err
		})
		if err != nil || len(due) == 0 {
			return err
		}
		next := make([]D, 0, len(due))
		for _, cur := range due {
			d, err := apply(cur)
			if err != nil {
				return err
			}
			next = append(next, d)
		}
		if err := db.exec(ctx, tx, upsertStmt, rows(next...)); err != nil {
			return err
		}
		claimed = next
		return nil
	})
	if claimed == nil {
		claimed = []D{}
	}
	return claimed, err
}
