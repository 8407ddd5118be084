package sqlite

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"transcriber/internal/clock"
)

// Every read of the status is one range of an index, in its order: no
// scan of a table, no sort. The entries of a state come from jobs_due
// alone.
func TestStatusReadsUseTheirIndexes(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "plan.db"), clock.System())
	require.NoError(t, err)
	defer db.Close()
	for _, c := range []struct {
		name, query string
		args        []any
		want        string
	}{
		{"StateEntries", selectStateEntries, []any{"created", "x", 10}, "USING COVERING INDEX jobs_due (state=? AND next_run_at>?)"},
		{"LatestInState", selectLatestInState, []any{"dead", "x", 10}, "USING INDEX jobs_due (state=? AND next_run_at>?)"},
		{"InState", selectInState, []any{"callback", "failed", "x", 10}, "USING INDEX outbox_due (kind=? AND state=? AND next_at>?)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rows, err := db.sql.QueryContext(ctx, "EXPLAIN QUERY PLAN "+c.query, c.args...)
			require.NoError(t, err)
			defer rows.Close()
			var plan []string
			for rows.Next() {
				var id, parent, notUsed int
				var detail string
				require.NoError(t, rows.Scan(&id, &parent, &notUsed, &detail))
				plan = append(plan, detail)
			}
			require.NoError(t, rows.Err())
			require.Len(t, plan, 1, "one search, no sort: %q", plan)
			require.Contains(t, plan[0], c.want)
		})
	}
}
