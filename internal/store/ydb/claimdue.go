package ydb

import (
	"context"

	"github.com/ydb-platform/ydb-go-sdk/v3/query"
)

// claimDue is the due selection the Telegram deliveries and the callbacks
// share: in one transaction, select the due rows (selectStmt with the
// parameters due makes for a limit, each read by scan), apply the claim
// to each (apply, the port's rule) and write them all with upsertStmt and
// the parameters rows makes of them. Two sweepers that select the same
// rows both write them; the first commit wins, the other's locks are
// invalidated and the SDK runs it again, when those rows are held. A run
// again after its own commit (the answer lost) reads each row its earlier
// run claimed by its key (get) and keeps those still as it wrote them
// (same): they are no longer due, and are this call's; it selects only
// the rest of limit.
func claimDue[D any](ctx context.Context, db *DB, limit int, selectStmt string, due func(limit int) params,
	scan func(query.Row) (D, error), apply func(D) (D, error), upsertStmt string, rows func(...D) params,
	get func(context.Context, query.TxActor, D) (D, bool, error), same func(cur, wrote D) bool,
) ([]D, error) {
	var claimed, wrote []D
	err := db.update(ctx, func(ctx context.Context, tx query.TxActor) error {
		claimed = nil
		if !earlierCommit(ctx) {
			wrote = nil // an earlier run did not commit: its claims are no one's
		}
		for _, w := range wrote {
			cur, found, err := get(ctx, tx, w)
			if err != nil {
				return err
			}
			if found && same(cur, w) {
				claimed = append(claimed, cur)
			}
		}
		want := limit - len(claimed)
		if want == 0 {
			wrote = claimed
			return nil
		}
		var selected []D
		err := db.rows(ctx, tx, selectStmt, due(want), func(row query.Row) error {
			d, err := scan(row)
			selected = append(selected, d)
			return err
		})
		if err != nil {
			return err
		}
		if len(selected) == 0 {
			wrote = claimed
			return nil
		}
		next := make([]D, 0, len(selected))
		for _, cur := range selected {
			d, err := apply(cur)
			if err != nil {
				return err
			}
			next = append(next, d)
		}
		if err := db.exec(ctx, tx, upsertStmt, rows(next...)); err != nil {
			return err
		}
		claimed = append(claimed, next...)
		wrote = claimed
		return nil
	})
	if claimed == nil {
		claimed = []D{}
	}
	return claimed, err
}
