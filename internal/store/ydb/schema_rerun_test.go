package ydb

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/ydb-platform/ydb-go-sdk/v3/query"
	"github.com/ydb-platform/ydb-go-sdk/v3/table/types"

	"transcriber/internal/clock"
)

// Every step is safe to run again after a crash between its DDL and its
// record: a CREATE TABLE runs as CREATE TABLE IF NOT EXISTS, an ADD COLUMN
// or ADD INDEX is looked for first (stepper.apply). A step of another kind has
// no rule yet.
func TestStepsRunAgain(t *testing.T) {
	creates, adds, indexes := 0, 0, 0
	for i, st := range steps {
		stmt := st.statement()
		switch {
		case strings.HasPrefix(st.ddl, "CREATE TABLE "):
			creates++
			require.True(t, strings.HasPrefix(stmt, "CREATE TABLE IF NOT EXISTS "), "step %d", i+1)
			require.Equal(t, strings.TrimPrefix(st.ddl, "CREATE TABLE "), strings.TrimPrefix(stmt, "CREATE TABLE IF NOT EXISTS "),
				"step %d: nothing else changes", i+1)
		case strings.Contains(st.ddl, " ADD INDEX "):
			tbl, ix, ok := st.addsIndex()
			require.True(t, ok, "step %d (%s) adds an index stepper.apply cannot find", i+1, st.name)
			indexes++
			require.Equal(t, st.ddl, stmt, "step %d runs as written", i+1)
			require.Contains(t, st.ddl, "ALTER TABLE "+tbl+" ADD INDEX "+ix+" ")
		default:
			tbl, col, ok := st.addsColumn()
			require.True(t, ok, "step %d (%s) is neither CREATE TABLE nor ADD COLUMN: give it a rule to run again", i+1, st.name)
			adds++
			require.Equal(t, st.ddl, stmt, "step %d runs as written", i+1)
			require.Contains(t, st.ddl, "ALTER TABLE "+tbl+" ADD COLUMN "+col+" ")
		}
	}
	require.Equal(t, 9, creates)
	require.Equal(t, 18, adds)
	require.Equal(t, 2, indexes)
	tbl, col, ok := steps[7].addsColumn()
	require.True(t, ok)
	require.Equal(t, [2]string{"jobs", "ended_at"}, [2]string{tbl, col})
}

// Against a real YDB: a migrate that crashed after a step's DDL, before its
// record (the record is deleted here), succeeds when run again and records
// the step, for the ADD INDEX step, a CREATE TABLE and two ADD COLUMN
// steps.
func TestMigrateRerunsAStepWhoseRecordWasLost(t *testing.T) {
	requireYDB(t)
	ctx := context.Background()
	db := testDB(t, clock.System())
	for _, n := range []int{SchemaVersion(), 16, 12, 8} {
		err := db.update(ctx, func(ctx context.Context, tx query.TxActor) error {
			return db.exec(ctx, tx, "DECLARE $step AS Int32;\nDELETE FROM schema_steps WHERE step = $step",
				params{{"$step", types.Int32Value(int32(n))}}) //nolint:gosec // a step number
		})
		require.NoError(t, err)
		applied, err := Migrate(ctx, db, MigrateOptions{Retention: 90 * 24 * time.Hour})
		require.NoError(t, err, "step %d runs again", n)
		require.Equal(t, []string{steps[n-1].name}, applied)
		have, _, err := ydbSchema{db: db}.recorded(ctx)
		require.NoError(t, err)
		require.Len(t, have, SchemaVersion(), "step %d is recorded again", n)
	}
}
