package ydb

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/ydb-platform/ydb-go-genproto/protos/Ydb"
	"github.com/ydb-platform/ydb-go-genproto/protos/Ydb_Issue"

	"transcriber/internal/clock/clocktest"
)

// Migrate's schema operations, counted on memDB, a database in memory that
// does what YDB does with the statements Migrate sends: it refuses a CREATE
// TABLE (without IF NOT EXISTS) of a table there, and can refuse an
// operation for the quota. The YDB suite (store_test.go) runs the same
// Migrate against a real YDB.

const retention = 90 * 24 * time.Hour

type memOp struct {
	at   time.Time
	what string
}

type memDB struct {
	clk    *clocktest.Fake
	tables map[string]string // name → TTL ("P90D ON ended_at"; "" when none)
	have   map[int]bool
	ttl    string
	ops    []memOp
	// fail answers the operation of that number (0-based) with the error.
	fail map[int]error
}

func newMemDB() *memDB {
	return &memDB{
		clk:    clocktest.NewFake(time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)),
		tables: map[string]string{}, have: map[int]bool{}, fail: map[int]error{},
	}
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

func (m *memDB) exec(_ context.Context, ddl string) error {
	if err := m.op(oneLine(ddl)); err != nil {
		return err
	}
	return m.run(ddl)
}

var (
	reMemTTL = regexp.MustCompile(`TTL = Interval\("([^"]+)"\) ON (\w+)`)
	reMemSet = regexp.MustCompile(`^ALTER TABLE (\w+) SET \(`)
)

// run does what YDB does with ddl.
func (m *memDB) run(ddl string) error {
	ttl := ""
	if t := reMemTTL.FindStringSubmatch(ddl); t != nil {
		ttl = t[1] + " ON " + t[2]
	}
	if c := reCreateTable.FindStringSubmatch(ddl); c != nil {
		if _, there := m.tables[c[1]]; there {
			if strings.HasPrefix(ddl, "CREATE TABLE IF NOT EXISTS ") {
				return nil
			}
			return fmt.Errorf("table %s exists", c[1])
		}
		m.tables[c[1]] = ttl
		return nil
	}
	if s := reMemSet.FindStringSubmatch(ddl); s != nil {
		if _, ok := m.tables[s[1]]; !ok {
			return fmt.Errorf("no table %s", s[1])
		}
		m.tables[s[1]] = ttl
		return nil
	}
	return fmt.Errorf("memDB cannot run %.40q", ddl)
}

func (m *memDB) recorded(context.Context) (map[int]bool, string, error) {
	if _, ok := m.tables[stepsTable]; !ok {
		return nil, "", fmt.Errorf("no table %s", stepsTable)
	}
	return maps.Clone(m.have), m.ttl, nil
}

func (m *memDB) record(_ context.Context, n int, ttl string) error {
	if _, ok := m.tables[stepsTable]; !ok {
		return fmt.Errorf("no table %s", stepsTable)
	}
	if m.have[n] {
		return fmt.Errorf("%w: step %d", ErrStepApplied, n)
	}
	if n > 0 {
		m.have[n] = true
	}
	if ttl != "" {
		m.ttl = ttl
	}
	return nil
}

// migrateMem runs Migrate on m, paced, with a sleep that moves m's clock.
func migrateMem(t *testing.T, m *memDB, r time.Duration, out *bytes.Buffer) ([]string, error) {
	t.Helper()
	o := MigrateOptions{Retention: r}
	if out != nil {
		o.Out = out
	}
	return migrate(context.Background(), newPaced(m, m.clk, o.Out, m.sleep), o)
}

func (m *memDB) sleep(_ context.Context, d time.Duration) error {
	m.clk.Advance(d)
	return nil
}

func migrated(t *testing.T) *memDB {
	t.Helper()
	m := newMemDB()
	_, err := migrateMem(t, m, retention, nil)
	require.NoError(t, err)
	return m
}

func TestMigrateNewDatabaseFitsTheQuota(t *testing.T) {
	m := newMemDB()
	applied, err := migrateMem(t, m, retention, nil)
	require.NoError(t, err)
	require.Equal(t, []string{"tables"}, applied)
	require.Len(t, m.ops, 2+len(steps[0].ddl), "list, schema_steps, one a table: %v", m.ops)
	require.Len(t, m.have, SchemaVersion(), "every step is recorded")
	want := ttlRecord(retention)
	require.Equal(t, want, m.ttl)
	for _, e := range expiring {
		require.Equal(t, "P90D ON "+e.column, m.tables[e.table], e.table)
	}
	require.Equal(t, "PT0S ON expires_at", m.tables["counters"], "counters keep their own TTL")

	t.Run("a rerun with nothing to do lists the tables", func(t *testing.T) {
		m.ops = nil
		applied, err := migrateMem(t, m, retention, nil)
		require.NoError(t, err)
		require.Empty(t, applied)
		require.Len(t, m.ops, 1, "%v", m.ops)
	})
	t.Run("a changed retention alters the TTLs once", func(t *testing.T) {
		m.ops = nil
		_, err := migrateMem(t, m, 30*24*time.Hour, nil)
		require.NoError(t, err)
		require.Len(t, m.ops, 1+len(expiring), "%v", m.ops)
		for _, e := range expiring {
			require.Equal(t, "P30D ON "+e.column, m.tables[e.table], e.table)
		}
		m.ops = nil
		_, err = migrateMem(t, m, 30*24*time.Hour, nil)
		require.NoError(t, err)
		require.Len(t, m.ops, 1, "%v", m.ops)
	})
}

// Every table that grows with traffic expires, the outbox (the Telegram
// deliveries, the callbacks) too; a TTL record naming fewer tables has
// them set at the next migrate.
func TestMigrateSetsTheTTLOfTheDeliveries(t *testing.T) {
	m := migrated(t)
	require.Equal(t, "P90D ON updated_at", m.tables["outbox"])

	m.ttl = "P90D: jobs.ended_at segments.ended_at telegram_messages.created_at idempotency_keys.created_at"
	m.tables["outbox"] = ""
	_, err := migrateMem(t, m, retention, nil)
	require.NoError(t, err)
	require.Equal(t, "P90D ON updated_at", m.tables["outbox"])
	want := ttlRecord(retention)
	require.Equal(t, want, m.ttl)
}

// A run that stopped part way (some tables made, maybe schema_steps, no
// record) is completed: the state ends as a new database's, TTLs included,
// and a table there is not made again.
func TestMigrateCompletesAPartlyAppliedSchema(t *testing.T) {
	fresh := migrated(t)
	for _, withSteps := range []bool{false, true} {
		t.Run(fmt.Sprintf("schema_steps there: %v", withSteps), func(t *testing.T) {
			m := newMemDB()
			require.NoError(t, m.run(createJobs))                                              // no TTL: another run's retention
			require.NoError(t, m.run(`CREATE TABLE telegram_chats (x Utf8, PRIMARY KEY (x))`)) // its shape is not looked at
			if withSteps {
				require.NoError(t, m.run(createSchemaSteps))
			}
			applied, err := migrateMem(t, m, retention, nil)
			require.NoError(t, err)
			require.Equal(t, []string{"tables"}, applied)
			require.Equal(t, fresh.tables, m.tables)
			require.Equal(t, fresh.have, m.have)
			require.Equal(t, fresh.ttl, m.ttl)
			for _, o := range m.ops {
				require.NotContains(t, o.what, "CREATE TABLE IF NOT EXISTS jobs ", "a table there is not made again")
			}
		})
	}
}

// A step whose DDL took effect but whose record was lost is recorded again
// without DDL; a step added later runs alone on a migrated database.
func TestMigrateRecordsAStepWhoseRecordWasLost(t *testing.T) {
	m := migrated(t)
	delete(m.have, 1)
	m.ops = nil
	applied, err := migrateMem(t, m, retention, nil)
	require.NoError(t, err)
	require.Equal(t, []string{"tables"}, applied)
	require.Len(t, m.have, SchemaVersion())
	require.Len(t, m.ops, 1, "only the listing: %v", m.ops)

	all := steps
	t.Cleanup(func() { steps = all })
	steps = append(all[:len(all):len(all)], step{"later", []string{"CREATE TABLE later (\n\tk Utf8 NOT NULL,\n\tPRIMARY KEY (k)\n)"}})
	m.ops = nil
	applied, err = migrateMem(t, m, retention, nil)
	require.NoError(t, err)
	require.Equal(t, []string{"later"}, applied)
	require.True(t, m.have[2])
	require.Len(t, m.ops, 2, "%v", m.ops)
	require.Equal(t, "CREATE TABLE IF NOT EXISTS later ( k Utf8 NOT NULL, PRIMARY KEY (k) )", m.ops[1].what)

	steps = all
	_, err = migrateMem(t, m, retention, nil)
	require.ErrorContains(t, err, "newer than this program's 1: run a newer build")
}

// Operations run at most schemaOpsPerMinute in any minute, and a wait says so.
func TestMigratePacesSchemaOperations(t *testing.T) {
	m := newMemDB()
	var out bytes.Buffer
	p := newPaced(m, m.clk, &out, m.sleep)
	for range 3 * schemaOpsPerMinute {
		_, err := p.listTables(context.Background())
		require.NoError(t, err)
	}
	for i := range m.ops {
		if j := i + schemaOpsPerMinute; j < len(m.ops) {
			require.GreaterOrEqual(t, m.ops[j].at.Sub(m.ops[i].at), time.Minute, "operations %d and %d are within a minute", i, j)
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
			require.Equal(t, migrated(t).tables, m.tables)
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

// The plan of a new database is the operations Migrate runs on one, one a
// line; a plan of a database with nothing to do only lists; a plan changes
// nothing and counts what the migrate then runs.
func TestPlan(t *testing.T) {
	ops, err := plan(context.Background(), nil, MigrateOptions{Retention: retention})
	require.NoError(t, err)
	m := migrated(t)
	require.Len(t, ops, len(m.ops))
	for i, op := range ops {
		require.NotContains(t, op, "\n", "one a line")
		if m.ops[i].what != "list" {
			require.Equal(t, m.ops[i].what, op)
		}
	}

	m.ops = nil
	ops, err = plan(context.Background(), m, MigrateOptions{Retention: retention})
	require.NoError(t, err)
	require.Equal(t, []string{"list the tables"}, ops)

	part := newMemDB()
	require.NoError(t, part.run(createJobs))
	ops, err = plan(context.Background(), part, MigrateOptions{Retention: retention})
	require.NoError(t, err)
	require.Equal(t, map[string]string{"jobs": ""}, part.tables, "a plan changes nothing")
	require.Empty(t, part.have, "a plan records nothing")
	part.ops = nil
	_, err = migrateMem(t, part, retention, nil)
	require.NoError(t, err)
	require.Len(t, ops, len(part.ops), "%v", ops)
}
