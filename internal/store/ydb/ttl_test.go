package ydb

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The TTL statements name, for each expiring table, a Timestamp column
// of the schema, and write the retention as an ISO 8601 interval YDB reads.
func TestTTLStatementsAgreeWithSchema(t *testing.T) {
	schema, errs := parseSchema(ddlOf(statementConstants(t)))
	require.Empty(t, errs)
	require.Len(t, expiring, 5)
	for _, e := range expiring {
		tb, ok := schema[e.table]
		require.True(t, ok, "table %s", e.table)
		require.Equal(t, column{typ: "Timestamp"}, tb.columns[e.column], "%s.%s is a nullable Timestamp", e.table, e.column)
		require.Equal(t, "ALTER TABLE "+e.table+` SET (TTL = Interval("P90D") ON `+e.column+")", ttlStatement(e.table, e.column, 90*24*time.Hour))
	}
	require.Equal(t, "ended_at", expiring[0].column, "a job's row expires from its end, which a live job lacks")
}

func TestTTLInterval(t *testing.T) {
	for d, want := range map[time.Duration]string{
		24 * time.Hour:                    `Interval("P1D")`,
		36 * time.Hour:                    `Interval("PT129600S")`,
		time.Hour + 1500*time.Millisecond: `Interval("PT3601S")`,
	} {
		require.Contains(t, ttlStatement("jobs", "ended_at", d), want, d.String())
	}
	for _, d := range []time.Duration{0, -time.Hour, time.Millisecond} {
		_, err := migrate(context.Background(), newMemDB(), MigrateOptions{Retention: d})
		require.ErrorContains(t, err, "want at least a second", d.String())
		_, err = plan(context.Background(), nil, MigrateOptions{Retention: d})
		require.Error(t, err, d.String())
	}
}
