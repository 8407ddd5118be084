package ydb

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/ydb-platform/ydb-go-genproto/protos/Ydb"
	"github.com/ydb-platform/ydb-go-genproto/protos/Ydb_Issue"

	"transcriber/internal/clock"
)

// Migrate's schema operations, counted on memDB, a database in memory
// that does what YDB does with the statements Migrate sends: it refuses a
// CREATE TABLE of a table there (without IF NOT EXISTS), an ADD COLUMN of a
// column there and an ADD INDEX of an index there, and it can refuse an
// operation for the quota or build an index slowly. The YDB suite
// (store_test.go) runs the same Migrate against a real YDB.

const retention = 90 * 24 * time.Hour

type memTable struct {
	shape tableShape
	ttl   string // "P90D ON ended_at"; "" when none
}

type memOp struct {
	at   time.Time
	what string
}

type memDB struct {
	clk    *clock.Fake
	tables map[string]*memTable
	have   map[int]bool
	ttl    string
	ops    []memOp
	// fail answers the operation of that number (0-based) with the error
	// instead of running it.
	fail map[int]error
	// buildFor: an index added is building for that many describes.
	buildFor int
	building map[string]int
	// recordedUnbuilt names a step recorded while its index was building.
	recordedUnbuilt []int
}

func newMemDB() *memDB {
	return &memDB{
		clk:    clock.NewFake(time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)),
		tables: map[string]*memTable{}, have: map[int]bool{}, fail: map[int]error{}, building: map[string]int{},
	}
}

// older is a database made by an older build that applied steps 1 to k
// one by one and set the TTL of the five tables it knew to retention
// after them, with no record of it.
func older(t *testing.T, k int) *memDB {
	t.Helper()
	m := newMemDB()
	require.NoError(t, m.run(createSchemaSteps))
	for i := range k {
		require.NoError(t, m.run(steps[i].ddl))
		m.have[i+1] = true
	}
	for _, e := range expiring[:5] {
		if _, ok := m.tables[e.table]; ok {
			stmt, err := ttlStatement(e.table, e.column, retention)
			require.NoError(t, err)
			require.NoError(t, m.run(stmt))
		}
	}
	m.ops = nil
	return m
}

func (m *memDB) op(what string) error {
	n := len(m.ops)
	m.ops = append(m.ops, memOp{m.clk.Now(), what})
	if err, ok := m.fail[n]; ok {
		delete(m.fail, n)
		return err
	}
	return nil
}

func (m *memDB) listTables(context.Context) (map[string]bool, error) {
	if err := m.op("list"); err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for name := range m.tables {
		out[name] = true
	}
	return out, nil
}

func (m *memDB) describe(_ context.Context, tbl string) (tableShape, error) {
	if err := m.op("describe " + tbl); err != nil {
		return tableShape{}, err
	}
	tb, ok := m.tables[tbl]
	if !ok {
		return tableShape{}, fmt.Errorf("describe: no table %s", tbl)
	}
	out := tableShape{columns: maps.Clone(tb.shape.columns), indexes: map[string]bool{}}
	for ix := range tb.shape.indexes {
		key := tbl + "." + ix
		out.indexes[ix] = m.building[key] == 0
		if m.building[key] > 0 {
			m.building[key]--
		}
	}
	return out, nil
}

func (m *memDB) exec(_ context.Context, ddl string) error {
	if err := m.op(oneLine(ddl)); err != nil {
		return err
	}
	return m.run(ddl)
}

var reMemTTL = regexp.MustCompile(`TTL = Interval\("([^"]+)"\) ON (\w+)`)

// run does what YDB does with ddl.
func (m *memDB) run(ddl string) error {
	ttlOf := func() string {
		if t := reMemTTL.FindStringSubmatch(ddl); t != nil {
			return t[1] + " ON " + t[2]
		}
		return ""
	}
	if c := reCreateTable.FindStringSubmatch(ddl); c != nil {
		if _, there := m.tables[c[1]]; there {
			if strings.HasPrefix(ddl, "CREATE TABLE IF NOT EXISTS ") {
				return nil
			}
			return fmt.Errorf("table %s exists", c[1])
		}
		m.tables[c[1]] = &memTable{shape: shapeOf(ddl), ttl: ttlOf()}
		return nil
	}
	if a := reAddColumn.FindStringSubmatch(ddl); a != nil {
		tb, ok := m.tables[a[1]]
		switch {
		case !ok:
			return fmt.Errorf("no table %s", a[1])
		case tb.shape.columns[a[2]]:
			return fmt.Errorf("column %s.%s exists", a[1], a[2])
		}
		tb.shape.columns[a[2]] = true
		return nil
	}
	if a := reAddIndex.FindStringSubmatch(ddl); a != nil {
		tb, ok := m.tables[a[1]]
		switch {
		case !ok:
			return fmt.Errorf("no table %s", a[1])
		case tb.shape.indexes[a[2]]:
			return fmt.Errorf("index %s.%s exists", a[1], a[2])
		}
		tb.shape.indexes[a[2]] = true
		m.building[a[1]+"."+a[2]] = m.buildFor
		return nil
	}
	if s := regexp.MustCompile(`^ALTER TABLE (\w+) SET \(`).FindStringSubmatch(ddl); s != nil {
		tb, ok := m.tables[s[1]]
		if !ok {
			return fmt.Errorf("no table %s", s[1])
		}
		tb.ttl = ttlOf()
		return nil
	}
	return fmt.Errorf("memDB cannot run %.40q", ddl)
}

func (m *memDB) recorded(context.Context) (map[int]bool, string, error) {
	if m.tables[stepsTable] == nil {
		return nil, "", fmt.Errorf("no table %s", stepsTable)
	}
	return maps.Clone(m.have), m.ttl, nil
}

func (m *memDB) record(_ context.Context, nums []int, ttl string) error {
	if m.tables[stepsTable] == nil {
		return fmt.Errorf("no table %s", stepsTable)
	}
	for _, n := range nums {
		if m.have[n] {
			return fmt.Errorf("%w: step %d", ErrStepApplied, n)
		}
	}
	for _, n := range nums {
		m.have[n] = true
		if tbl, ix, ok := steps[n-1].addsIndex(); ok && m.building[tbl+"."+ix] > 0 {
			m.recordedUnbuilt = append(m.recordedUnbuilt, n)
		}
	}
	if ttl != "" {
		m.ttl = ttl
	}
	return nil
}

// state is what a database has, to compare two.
func (m *memDB) state() map[string]string {
	out := map[string]string{}
	for name, tb := range m.tables {
		out[name] = fmt.Sprintf("columns %v indexes %v ttl %q",
			slices.Sorted(maps.Keys(tb.shape.columns)), slices.Sorted(maps.Keys(tb.shape.indexes)), tb.ttl)
	}
	return out
}

func (m *memDB) schemaOps() int { return len(m.ops) }

// migrateMem runs Migrate on m, paced, with a sleep that moves m's clock.
func migrateMem(t *testing.T, m *memDB, r time.Duration, out *bytes.Buffer) ([]string, error) {
	t.Helper()
	o := MigrateOptions{Retention: r, Out: out, Sleep: func(_ context.Context, d time.Duration) error {
		m.clk.Advance(d)
		return nil
	}}
	if out == nil {
		o.Out = nil
	}
	return migrate(context.Background(), newPaced(m, m.clk, o), o.withDefaults())
}

func allStepNames() []string {
	var names []string
	for _, st := range steps {
		names = append(names, st.name)
	}
	return names
}

func TestMigrateNewDatabaseFitsTheQuota(t *testing.T) {
	m := newMemDB()
	applied, err := migrateMem(t, m, retention, nil)
	require.NoError(t, err)
	require.Equal(t, allStepNames(), applied)
	require.LessOrEqual(t, m.schemaOps(), 20, "a new database: %v", m.ops)
	require.Len(t, m.have, SchemaVersion(), "every step is recorded")
	want, err := ttlRecord(retention)
	require.NoError(t, err)
	require.Equal(t, want, m.ttl)
	for _, e := range expiring {
		require.Equal(t, "P90D ON "+e.column, m.tables[e.table].ttl, e.table)
	}
	require.Equal(t, "PT0S ON expires_at", m.tables["counters"].ttl, "counters keep their own TTL")

	t.Run("a rerun with nothing to do", func(t *testing.T) {
		m.ops = nil
		applied, err := migrateMem(t, m, retention, nil)
		require.NoError(t, err)
		require.Empty(t, applied)
		require.LessOrEqual(t, m.schemaOps(), 3, "%v", m.ops)
	})
	t.Run("a changed retention alters the TTLs once", func(t *testing.T) {
		m.ops = nil
		_, err := migrateMem(t, m, 30*24*time.Hour, nil)
		require.NoError(t, err)
		require.Equal(t, 1+len(expiring), m.schemaOps(), "%v", m.ops)
		for _, e := range expiring {
			require.Equal(t, "P30D ON "+e.column, m.tables[e.table].ttl, e.table)
		}
		m.ops = nil
		_, err = migrateMem(t, m, 30*24*time.Hour, nil)
		require.NoError(t, err)
		require.LessOrEqual(t, m.schemaOps(), 3, "%v", m.ops)
	})
}

// An older database gets its missing steps one by one, each recorded, and
// ends as a new database starts: the same tables, columns, indexes and
// TTLs. Each table is described at most once.
func TestMigrateOlderDatabaseGetsItsMissingSteps(t *testing.T) {
	fresh := newMemDB()
	_, err := migrateMem(t, fresh, retention, nil)
	require.NoError(t, err)

	for _, k := range []int{0, 7, 11, 15, 21, 22, SchemaVersion()} {
		t.Run(fmt.Sprintf("from step %d", k), func(t *testing.T) {
			m := older(t, k)
			applied, err := migrateMem(t, m, retention, nil)
			require.NoError(t, err)
			require.True(t, slices.Equal(allStepNames()[k:], applied), "%v", applied)
			require.Len(t, m.have, SchemaVersion())
			require.Equal(t, fresh.state(), m.state())
			require.Equal(t, fresh.ttl, m.ttl)
			seen := map[string]int{}
			for _, o := range m.ops {
				if strings.HasPrefix(o.what, "describe ") {
					seen[o.what]++
				}
			}
			for what, n := range seen {
				if what != "describe jobs" { // the index step looks again once it is added
					require.Equal(t, 1, n, what)
				}
			}
		})
	}
}

// The steps written into their tables make the tables the steps make,
// for the statements' schema check too.
func TestFinalTablesAreTheSteps(t *testing.T) {
	schema, errs := parseSchema(ddlOf(statementConstants(t)))
	require.Empty(t, errs)
	finals, err := finalTables(retention)
	require.NoError(t, err)
	var ddl []string
	for _, f := range finals {
		ddl = append(ddl, f.ddl)
	}
	final, errs := parseSchema(ddl)
	require.Empty(t, errs)
	delete(schema, stepsTable)
	require.Equal(t, schema, final)
	for _, e := range expiring {
		i := slices.IndexFunc(finals, func(f finalTable) bool { return f.name == e.table })
		require.NotEqual(t, -1, i, e.table)
		require.True(t, strings.HasSuffix(finals[i].ddl, `)`+"\nWITH (TTL = Interval(\"P90D\") ON "+e.column+")"), finals[i].ddl)
	}
}

// A step whose DDL took effect but whose record was lost is recorded
// again without its DDL: the table is described, not altered.
func TestMigrateRecordsAStepWhoseRecordWasLost(t *testing.T) {
	m := newMemDB()
	_, err := migrateMem(t, m, retention, nil)
	require.NoError(t, err)
	for _, n := range []int{8, 12, 16, 23} {
		delete(m.have, n)
	}
	m.ops = nil
	applied, err := migrateMem(t, m, retention, nil)
	require.NoError(t, err)
	require.Equal(t, []string{"jobs_ended_at", "counters", "jobs_unfinished", "segments_counted_in"}, applied)
	require.Len(t, m.have, SchemaVersion())
	for _, o := range m.ops {
		require.NotContains(t, o.what, "ALTER", "nothing is altered")
		require.NotContains(t, o.what, "CREATE", "nothing is created")
	}
}

// Operations run at most schemaOpsPerMinute in any minute, and a wait
// says so; an old database that had only schema_steps needs more than
// that.
func TestMigratePacesSchemaOperations(t *testing.T) {
	m := older(t, 0)
	var out bytes.Buffer
	_, err := migrateMem(t, m, retention, &out)
	require.NoError(t, err)
	require.Greater(t, m.schemaOps(), schemaOpsPerMinute, "the test needs more operations than a minute's")
	for i := range m.ops {
		j := i + schemaOpsPerMinute
		if j < len(m.ops) {
			require.GreaterOrEqual(t, m.ops[j].at.Sub(m.ops[i].at), time.Minute,
				"operations %d and %d are within a minute", i, j)
		}
	}
	require.Contains(t, out.String(), "schema operations in the last minute (a serverless database allows 30): waiting")
}

// A refusal for the quota waits a minute and runs the operation again,
// whether YDB answers OVERLOADED or GENERIC_ERROR with the quota's issue.
func TestMigrateWaitsOutAQuotaRefusal(t *testing.T) {
	quota := &Ydb_Issue.IssueMessage{Message: "Request exceeded a limit on the number of schema operations, try again later."}
	for name, err := range map[string]error{
		"overloaded":    operationError(t, Ydb.StatusIds_OVERLOADED, quota),
		"generic error": operationError(t, Ydb.StatusIds_GENERIC_ERROR, quota),
	} {
		t.Run(name, func(t *testing.T) {
			m := newMemDB()
			m.fail[3] = err
			var out bytes.Buffer
			applied, err := migrateMem(t, m, retention, &out)
			require.NoError(t, err)
			require.Len(t, applied, SchemaVersion())
			require.Equal(t, m.ops[3].what, m.ops[4].what, "the refused operation runs again")
			require.GreaterOrEqual(t, m.ops[4].at.Sub(m.ops[3].at), time.Minute)
			require.Contains(t, out.String(), "YDB refused a schema operation for its quota")
			require.Equal(t, newMemDBState(t), m.state())
		})
	}
	t.Run("another error stops the migrate", func(t *testing.T) {
		m := newMemDB()
		m.fail[3] = operationError(t, Ydb.StatusIds_SCHEME_ERROR)
		_, err := migrateMem(t, m, retention, nil)
		require.Error(t, err)
		require.Empty(t, m.have)
	})
}

func newMemDBState(t *testing.T) map[string]string {
	t.Helper()
	m := newMemDB()
	_, err := migrateMem(t, m, retention, nil)
	require.NoError(t, err)
	return m.state()
}

func TestIsSchemaQuota(t *testing.T) {
	quota := &Ydb_Issue.IssueMessage{Message: "Request exceeded a limit on the number of schema operations, try again later."}
	nested := &Ydb_Issue.IssueMessage{Message: "Execution failed", Issues: []*Ydb_Issue.IssueMessage{quota}}
	require.True(t, isSchemaQuota(operationError(t, Ydb.StatusIds_OVERLOADED)))
	require.True(t, isSchemaQuota(operationError(t, Ydb.StatusIds_GENERIC_ERROR, quota)))
	require.True(t, isSchemaQuota(operationError(t, Ydb.StatusIds_GENERIC_ERROR, nested)))
	require.False(t, isSchemaQuota(operationError(t, Ydb.StatusIds_GENERIC_ERROR)))
	require.False(t, isSchemaQuota(operationError(t, Ydb.StatusIds_SCHEME_ERROR)))
	require.False(t, isSchemaQuota(fmt.Errorf("disk full")))
}

// An index YDB is still building is recorded only once it is built:
// Migrate looks again, every indexPoll, and says that it waits.
func TestMigrateRecordsAnIndexOnlyWhenBuilt(t *testing.T) {
	t.Run("added now", func(t *testing.T) {
		m := older(t, 15)
		m.buildFor = 2
		var out bytes.Buffer
		_, err := migrateMem(t, m, retention, &out)
		require.NoError(t, err)
		require.True(t, m.have[16])
		require.Empty(t, m.recordedUnbuilt)
		require.Equal(t, 2, strings.Count(out.String(), "index jobs_unfinished of table jobs is being built"), out.String())
	})
	t.Run("added by a run that stopped", func(t *testing.T) {
		m := older(t, 16)
		delete(m.have, 16)
		m.building["jobs.jobs_unfinished"] = 1
		var out bytes.Buffer
		_, err := migrateMem(t, m, retention, &out)
		require.NoError(t, err)
		require.True(t, m.have[16])
		require.Empty(t, m.recordedUnbuilt)
		require.Contains(t, out.String(), "is being built")
		for _, o := range m.ops {
			require.NotContains(t, o.what, "ADD INDEX jobs_unfinished", "the index is not added again")
		}
	})
}

// The plan of a new database is the operations Migrate runs on one, one a
// line, at most 20; the plan of a database with nothing to do is at most
// 3; a plan changes nothing.
func TestPlan(t *testing.T) {
	ops, err := plan(context.Background(), newDatabase{}, MigrateOptions{Retention: retention}.withDefaults())
	require.NoError(t, err)
	require.LessOrEqual(t, len(ops), 20)
	m := newMemDB()
	_, err = migrateMem(t, m, retention, nil)
	require.NoError(t, err)
	var ran []string
	for _, o := range m.ops {
		ran = append(ran, o.what)
	}
	require.Len(t, ops, len(ran))
	for i, op := range ops {
		require.NotContains(t, op, "\n", "one a line")
		if ran[i] != "list" {
			require.Equal(t, ran[i], op)
		}
	}

	m.ops = nil
	ops, err = plan(context.Background(), m, MigrateOptions{Retention: retention}.withDefaults())
	require.NoError(t, err)
	require.LessOrEqual(t, len(ops), 3, "%v", ops)

	old := older(t, 12)
	before := old.state()
	ops, err = plan(context.Background(), old, MigrateOptions{Retention: retention}.withDefaults())
	require.NoError(t, err)
	require.Equal(t, before, old.state(), "a plan changes nothing")
	require.Len(t, old.have, 12, "a plan records nothing")
	old.ops = nil
	_, err = migrateMem(t, old, retention, nil)
	require.NoError(t, err)
	require.Len(t, ops, len(old.ops), "the plan counts what the migrate runs: %v", ops)
}

// Every table that grows with traffic expires: the Telegram deliveries
// too, from updated_at. A database whose record names the five tables an
// older build set gets the TTL of the deliveries at its next migrate.
func TestMigrateSetsTheTTLOfTheDeliveries(t *testing.T) {
	m := newMemDB()
	_, err := migrateMem(t, m, retention, nil)
	require.NoError(t, err)
	require.Equal(t, "P90D ON updated_at", m.tables["telegram_deliveries"].ttl)

	m = older(t, SchemaVersion())
	m.ttl = "P90D: jobs.ended_at segments.ended_at telegram_messages.created_at idempotency_keys.created_at callbacks.created_at"
	require.Empty(t, m.tables["telegram_deliveries"].ttl)
	_, err = migrateMem(t, m, retention, nil)
	require.NoError(t, err)
	require.Equal(t, "P90D ON updated_at", m.tables["telegram_deliveries"].ttl)
	want, err := ttlRecord(retention)
	require.NoError(t, err)
	require.Equal(t, want, m.ttl)
}
