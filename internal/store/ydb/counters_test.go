package ydb

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/clock/clocktest"
	"transcriber/internal/quota"
	"transcriber/internal/quota/quotatest"
	"transcriber/internal/racetest"
)

// counterBound are the parameters the counters store binds to each of its
// statements, made by the functions it calls.
func counterBound() map[string]params {
	w := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	return map[string]params{
		"selectCounter":  counterKeyParams("speechkit_requests", w),
		"selectCounters": countersKeysParams([]string{"speechkit_requests#0", "speechkit_requests#+"}, w),
		"upsertCounter":  counterParams("speechkit_requests", w, quota.Row{Used: 3, Ops: []string{"01JD0000000000000000000000"}}),
	}
}

// The counters' statements agree with the schema the steps make and with
// the parameters the store binds, by the check every statement passes.
func TestCounterStatementsAgreeWithSchema(t *testing.T) {
	consts := statementConstants(t)
	schema, errs := parseSchema(ddlOf(consts))
	require.Empty(t, errs)
	counters, ok := schema["counters"]
	require.True(t, ok, "a schema step creates counters")
	require.Equal(t, column{typ: "Utf8", notNull: true}, counters.columns["counter"])
	require.Equal(t, column{typ: "Timestamp", notNull: true}, counters.columns["window_start"])
	require.Equal(t, column{typ: "Timestamp"}, counters.columns["expires_at"])
	require.Equal(t, column{typ: "Utf8"}, counters.columns["ops"], "the last changes' ids, added by step 26")
	require.Len(t, counters.columns, 5)

	bound := counterBound()
	for name, p := range bound {
		text, ok := consts[name]
		require.True(t, ok, "statement %s is in a statement file", name)
		require.Empty(t, checkStatement(schema, text, p), name)
	}
	for name, text := range consts {
		if isStatement(text) && strings.Contains(text, " counters ") {
			require.Contains(t, bound, name, "statement %s of the counters is checked here", name)
		}
	}

	t.Run("the check catches a column renamed on one side", func(t *testing.T) {
		altered := strings.Replace(consts["upsertCounter"], "(counter, window_start, used,", "(counter, window_start, usd,", 1)
		require.NotEqual(t, consts["upsertCounter"], altered)
		require.Contains(t, fmt.Sprint(checkStatement(schema, altered, bound["upsertCounter"])), "usd")
	})
	t.Run("the check catches a parameter bound with another type", func(t *testing.T) {
		w := quotatest.Window
		p := append(counterKeyParams("k", w), param{"$used", utf8("3")}, param{"$expires_at", ts(w)})
		require.NotEmpty(t, checkStatement(schema, consts["upsertCounter"], p))
	})
}

// The counters table's rows expire by its own TTL, at expires_at, which
// the store writes as the window plus quota.Retention.
func TestCountersExpireByTTL(t *testing.T) {
	require.Contains(t, createCounters, `WITH (TTL = Interval("PT0S") ON expires_at)`)
	w := time.Date(2026, 3, 1, 10, 0, 0, 123_456_789, time.UTC)
	p := counterParams("k", w, quota.Row{Used: 1})
	require.Len(t, p, 5)
	require.Equal(t, "$expires_at", p[3].name)
	require.Equal(t, ts(w.Truncate(time.Millisecond).Add(quota.Retention)), p[3].value)
	require.Equal(t, ts(w.Truncate(time.Millisecond)), p[1].value, "a window is kept at milliseconds, as the embedded store keeps it")
}

func TestCountersContract(t *testing.T) {
	requireYDB(t)
	quotatest.Run(t, func(t *testing.T) quota.Counters {
		return NewCounters(testDB(t, clocktest.NewFake(quotatest.Window)))
	})
}

// A counter spread over rows (quota.Spread) in this store: racers against
// one limit, exactly limit of them win, and the rows sum to it.
func TestSpreadCountersKeepTheLimit(t *testing.T) {
	requireYDB(t)
	ctx := context.Background()
	c := quota.Spread(NewCounters(testDB(t, clocktest.NewFake(quotatest.Window))), quota.DefaultShards, []string{"hot"})
	var won atomic.Int64
	racetest.Run(quotatest.Racers, func(int) {
		_, ok, err := c.Reserve(ctx, "hot", quotatest.Window, 1, 11)
		if err == nil && ok {
			won.Add(1)
		}
	})
	require.Equal(t, int64(11), won.Load())
	used, err := c.Used(ctx, "hot", quotatest.Window)
	require.NoError(t, err)
	require.Equal(t, int64(11), used)
}
