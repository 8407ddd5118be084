package ydb

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/ydb-platform/ydb-go-sdk/v3/query"
	"github.com/ydb-platform/ydb-go-sdk/v3/table/types"

	"transcriber/internal/clock"
)

// Every step is safe to run again after a stop between its DDL and its
// record: it is only CREATE TABLE statements, the one kind migrate has a
// rule for. A step of another kind needs a rule first.
func TestStepsRunAgain(t *testing.T) {
	made := map[string]bool{}
	for i, st := range steps {
		for _, ddl := range st.ddl {
			m := reCreateTable.FindStringSubmatch(ddl)
			require.NotNil(t, m, "step %d (%s): %.40q is not a CREATE TABLE: give it a rule to run again", i+1, st.name, ddl)
			require.False(t, made[m[1]], "step %d makes table %s again", i+1, m[1])
			made[m[1]] = true
			require.Equal(t, "CREATE TABLE IF NOT EXISTS "+ddl[len("CREATE TABLE "):], ifNotExists(ddl))
		}
	}
	for _, e := range expiring {
		require.True(t, made[e.table], "expiring table %s is made by a step", e.table)
	}
}

// Against a real YDB: a migrate that stopped after step 1's DDL, before its
// record (deleted here), succeeds when run again and records the step.
func TestMigrateRerunsAStepWhoseRecordWasLost(t *testing.T) {
	requireYDB(t)
	ctx := context.Background()
	db := testDB(t, clock.System())
	err := db.update(ctx, func(ctx context.Context, tx query.TxActor) error {
		return db.exec(ctx, tx, "DECLARE $step AS Int32;\nDELETE FROM schema_steps WHERE step = $step",
			params{{"$step", types.Int32Value(1)}})
	})
	require.NoError(t, err)
	applied, err := Migrate(ctx, db, MigrateOptions{Retention: 90 * 24 * time.Hour})
	require.NoError(t, err)
	require.Equal(t, []string{steps[0].name}, applied)
	have, _, err := ydbSchema{db: db}.recorded(ctx)
	require.NoError(t, err)
	require.Len(t, have, SchemaVersion())
}
