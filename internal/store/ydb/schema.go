package ydb

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"

	"transcriber/internal/errs"
)

// step is one schema step: a name for people and its DDL.
type step struct {
	name string
	ddl  []string
}

// steps are applied in order and recorded in schema_steps by number
// (1-based); an applied step is never edited (a change is a new step, with
// docs/database.md). DDL runs outside transactions, so Migrate may meet a
// step again: a listed table's CREATE TABLE is skipped, the rest run IF NOT
// EXISTS; YQL has none for ADD COLUMN or ADD INDEX, so another kind of step
// needs a rule in migrate first (TestStepsRunAgain).
var steps = []step{
	{"tables", []string{createJobs, createSegments, createTelegramMessages, createIdempotencyKeys, createAPITokens,
		createTelegramChats, createCounters, createOutbox}},
}

var reCreateTable = regexp.MustCompile(`^CREATE TABLE (?:IF NOT EXISTS )?(\w+) \(`)

// ifNotExists makes a CREATE TABLE statement CREATE TABLE IF NOT EXISTS
// (https://ydb.tech/docs/en/yql/reference/syntax/create_table/).
func ifNotExists(ddl string) string {
	if rest, ok := strings.CutPrefix(ddl, "CREATE TABLE "); ok {
		return "CREATE TABLE IF NOT EXISTS " + rest
	}
	return ddl
}

// expiring are the tables whose rows expire JOB_RETENTION after a column;
// NULL never expires (https://ydb.tech/docs/en/concepts/ttl): a live job.
// An outbox entry is last written well before: Telegram resends an update for a
// day at most, the shortest retention (pipeline.MinJobRetention). counters
// has a TTL of its own. A table added here changes ttlRecord, so the next
// migrate sets its TTL.
var expiring = []struct{ table, column string }{
	{"jobs", "ended_at"},
	{"segments", "ended_at"},
	{"telegram_messages", "created_at"},
	{"idempotency_keys", "created_at"},
	{"outbox", "updated_at"},
}

// ttlInterval writes retention, at least a second (migrate checks), as an
// ISO 8601 Interval: whole days as P<n>D, else seconds
// (https://ydb.tech/docs/en/yql/reference/recipes/ttl).
func ttlInterval(retention time.Duration) string {
	if retention%(24*time.Hour) == 0 {
		return fmt.Sprintf("P%dD", int64(retention/(24*time.Hour)))
	}
	return fmt.Sprintf("PT%dS", int64(retention/time.Second))
}

// ttlClause is a TTL setting as CREATE TABLE … WITH and ALTER TABLE … SET
// write it (https://ydb.tech/docs/en/yql/reference/syntax/create_table/with).
func ttlClause(column string, retention time.Duration) string {
	return fmt.Sprintf("TTL = Interval(%q) ON %s", ttlInterval(retention), column)
}

func ttlStatement(table, column string, retention time.Duration) string {
	return fmt.Sprintf("ALTER TABLE %s SET (%s)", table, ttlClause(column, retention))
}

// ttlRecord is what schema_steps records of the TTLs set (row ttlStep): the
// retention and every expiring table, so a change of either differs from
// the record and Migrate sets the TTLs again, and an unchanged one costs no
// schema operation.
func ttlRecord(retention time.Duration) string {
	var b strings.Builder
	b.WriteString(ttlInterval(retention) + ":")
	for _, e := range expiring {
		b.WriteString(" " + e.table + "." + e.column)
	}
	return b.String()
}

// ttlStep is the schema_steps row that records the TTLs; steps count from 1.
const ttlStep = 0

// SchemaVersion is the number of schema steps this code knows.
func SchemaVersion() int { return len(steps) }

// ErrStepApplied: a step Migrate was about to record is recorded already by
// a concurrent migrate. Run it again.
var ErrStepApplied = errs.New(errs.Conflict, "schema_step_applied", "a schema step is already recorded as applied")

// DefaultMigrateTimeout bounds a Migrate whose context has no deadline,
// instead of one store call's DefaultCallTimeout: a refused schema
// operation waits a minute (quotaWait).
const DefaultMigrateTimeout = 10 * time.Minute

// MigrateOptions are what Migrate and Plan need besides the database.
type MigrateOptions struct {
	// Retention is JOB_RETENTION: the TTL of the expiring tables.
	Retention time.Duration
	// Out gets a line whenever Migrate waits for the quota; nil discards.
	Out io.Writer
}

// Migrate applies and records the missing steps and sets the TTLs when
// their record differs (ttlRecord), paced within the serverless quota of
// schema operations; a new table gets its TTL in its CREATE TABLE, and a run
// with nothing to do costs one operation (the listing). A database with a
// step unknown here is refused. It returns the names of the steps applied.
func Migrate(ctx context.Context, db *DB, o MigrateOptions) ([]string, error) {
	ctx, cancel := bound(ctx, DefaultMigrateTimeout)
	defer cancel()
	return migrate(ctx, newPaced(ydbSchema{db: db}, db.clock, o.Out, nil), o)
}

// Plan returns, one a line, the schema operations Migrate would run on db
// (on a new database when db is nil), changing nothing: the listing runs,
// the DDL does not.
func Plan(ctx context.Context, db *DB, o MigrateOptions) ([]string, error) {
	ctx, cancel := bound(ctx, DefaultMigrateTimeout)
	defer cancel()
	var inner schemaDB
	if db != nil {
		inner = newPaced(ydbSchema{db: db}, db.clock, o.Out, nil)
	}
	return plan(ctx, inner, o)
}

const stepsTable = "schema_steps"

func migrate(ctx context.Context, s schemaDB, o MigrateOptions) ([]string, error) {
	if o.Retention < time.Second {
		return nil, fmt.Errorf("migrate: retention %s: want at least a second", o.Retention)
	}
	ttl := ttlRecord(o.Retention)
	tables, err := s.listTables(ctx)
	if err != nil {
		return nil, fmt.Errorf("migrate: list the tables: %w", err)
	}
	have, recorded := map[int]bool{}, ""
	if tables[stepsTable] {
		if have, recorded, err = s.recorded(ctx); err != nil {
			return nil, fmt.Errorf("migrate: %w", err)
		}
	} else if err := s.exec(ctx, ifNotExists(createSchemaSteps)); err != nil {
		return nil, fmt.Errorf("migrate: create table %s: %w", stepsTable, err)
	}
	for n := range have {
		if n > len(steps) {
			return nil, fmt.Errorf("migrate: the database has schema step %d, newer than this program's %d: run a newer build", n, len(steps))
		}
	}
	made := map[string]bool{}
	var applied []string
	for i, st := range steps {
		n := i + 1
		if have[n] {
			continue
		}
		for _, ddl := range st.ddl {
			m := reCreateTable.FindStringSubmatch(ddl)
			if m == nil {
				return applied, fmt.Errorf("migrate: schema step %d (%s): no rule to run %.40q again", n, st.name, ddl)
			}
			if tables[m[1]] {
				continue
			}
			if err := s.exec(ctx, withTTL(ifNotExists(ddl), m[1], o.Retention)); err != nil {
				return applied, fmt.Errorf("migrate: schema step %d (%s): create table %s: %w", n, st.name, m[1], err)
			}
			tables[m[1]], made[m[1]] = true, true
		}
		if err := s.record(ctx, n, ""); err != nil {
			return applied, fmt.Errorf("migrate: record schema step %d (%s): %w", n, st.name, err)
		}
		applied = append(applied, st.name)
	}
	if recorded == ttl {
		return applied, nil
	}
	// Setting a TTL again changes nothing, so a run stopped here is run again.
	for _, e := range expiring {
		if made[e.table] {
			continue
		}
		if err := s.exec(ctx, ttlStatement(e.table, e.column, o.Retention)); err != nil {
			return applied, fmt.Errorf("migrate: set the TTL of %s: %w", e.table, err)
		}
	}
	if err := s.record(ctx, 0, ttl); err != nil {
		return applied, fmt.Errorf("migrate: record the TTL: %w", err)
	}
	return applied, nil
}

// withTTL adds table's TTL to its CREATE TABLE if it expires.
func withTTL(ddl, table string, retention time.Duration) string {
	for _, e := range expiring {
		if e.table == table {
			return ddl + "\nWITH (" + ttlClause(e.column, retention) + ")"
		}
	}
	return ddl
}
