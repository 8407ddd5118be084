package sqlite

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"transcriber/internal/clock"
)

// Store.Unfinished reads a payer's unfinished jobs through the partial
// index jobs_unfinished, not by scanning the table.
func TestUnfinishedUsesItsIndex(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "plan.db"), clock.System())
	require.NoError(t, err)
	defer db.Close()
	rows, err := db.sql.QueryContext(ctx, `EXPLAIN QUERY PLAN `+selectJob+` WHERE charged_to = ? AND ended_at IS NULL ORDER BY id LIMIT ?`, "tok:x", 3)
	require.NoError(t, err)
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		require.NoError(t, rows.Scan(&id, &parent, &unused, &detail))
		plan = append(plan, detail)
	}
	require.NoError(t, rows.Err())
	require.Contains(t, strings.Join(plan, "\n"), "USING INDEX jobs_unfinished")
	require.NotContains(t, strings.Join(plan, "\n"), "TEMP B-TREE", "the index gives the order")
}
