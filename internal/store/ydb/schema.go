package ydb

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"

	"transcriber/internal/clock"
	"transcriber/internal/errs"
)

// step is one schema step: a name for people and one DDL statement.
type step struct {
	name string
	ddl  string
}

// steps are the schema's steps, applied in order by Migrate on a database
// that has some of them, and recorded in schema_steps by number (1-based);
// a new database gets their end result at once (finalTables). An applied
// step is never edited: a change is a new step, and docs/database.md
// changes with it.
//
// YDB runs DDL outside transactions, so Migrate can crash (or lose its
// connection) after a step's DDL and before its record; the next run then
// meets the step again, and every step must be safe to run again (see
// statement and stepper.apply). A new step that is neither CREATE TABLE nor
// ALTER TABLE … ADD COLUMN or ADD INDEX needs a rule there first
// (TestStepsRunAgain says so), and one for finalTables.
var steps = []step{
	{"jobs", createJobs},
	{"segments", createSegments},
	{"telegram_messages", createTelegramMessages},
	{"idempotency_keys", createIdempotencyKeys},
	{"api_tokens", createAPITokens},
	{"telegram_chats", createTelegramChats},           // botstate_statements.go
	{"telegram_deliveries", createTelegramDeliveries}, // botstate_statements.go
	{"jobs_ended_at", alterJobsEndedAt},
	{"segments_ended_at", alterSegmentsEndedAt},
	{"telegram_messages_created_at", alterTelegramMessagesCreatedAt},
	{"idempotency_keys_created_at", alterIdempotencyKeysCreatedAt},
	{"counters", createCounters}, // counters_statements.go
	{"jobs_charged_to", alterJobsChargedTo},
	{"jobs_reserved_seconds", alterJobsReservedSeconds},
	{"jobs_reserved_day", alterJobsReservedDay},
	{"jobs_unfinished", alterJobsUnfinishedIndex},
	{"jobs_priority", alterJobsPriority},
	{"telegram_chats_mode", alterTelegramChatsMode},
	{"jobs_features", alterJobsFeatures},
	{"telegram_chats_features", alterTelegramChatsFeatures},      // botstate_statements.go
	{"api_tokens_callback_secret", alterAPITokensCallbackSecret}, // callbacks_statements.go
	{"callbacks", createCallbacks},                               // callbacks_statements.go
	{"segments_counted_in", alterSegmentsCountedIn},
	{"jobs_recognition", alterJobsRecognition},
	{"jobs_billed_seconds", alterJobsBilledSeconds},
	{"counters_ops", alterCountersOps}, // counters_statements.go
	{"jobs_reserved_micros", alterJobsReservedMicros},
	{"jobs_reuse_key", alterJobsReuseKey},
	{"jobs_reuse", alterJobsReuseIndex},
}

// statement is what Migrate runs for s: its DDL, with CREATE TABLE made
// CREATE TABLE IF NOT EXISTS, which does nothing when the table is there
// (https://ydb.tech/docs/en/yql/reference/syntax/create_table/). The
// applied steps 1 to 7 and 12 ran as plain CREATE TABLE; running them
// with IF NOT EXISTS instead is the one change of an applied step that is
// safe, since on a database that has the step it does nothing either way.
// The step constants keep the plain form, which the schema check reads.
func (s step) statement() string { return ifNotExists(s.ddl) }

// ifNotExists makes a CREATE TABLE statement CREATE TABLE IF NOT EXISTS;
// any other statement it returns as it is.
func ifNotExists(ddl string) string {
	if rest, ok := strings.CutPrefix(ddl, "CREATE TABLE "); ok {
		return "CREATE TABLE IF NOT EXISTS " + rest
	}
	return ddl
}

var (
	reCreateTable = regexp.MustCompile(`^CREATE TABLE (?:IF NOT EXISTS )?(\w+) \(`)
	reAddColumn   = regexp.MustCompile(`^ALTER TABLE (\w+) ADD COLUMN (\w+) \w+$`)
	reAddIndex    = regexp.MustCompile(`^ALTER TABLE (\w+) ADD INDEX (\w+) GLOBAL SYNC ON \([^)]*\)$`)
)

// creates returns the table a CREATE TABLE step makes.
func (s step) creates() (tbl string, ok bool) {
	m := reCreateTable.FindStringSubmatch(s.ddl)
	if m == nil {
		return "", false
	}
	return m[1], true
}

// addsColumn returns the table and the column of an ALTER TABLE … ADD
// COLUMN step. YQL has no ADD COLUMN IF NOT EXISTS, and ADD COLUMN of a
// column that exists fails
// (https://ydb.tech/docs/en/yql/reference/syntax/alter_table/columns), so
// Migrate looks first (stepper.apply).
func (s step) addsColumn() (tbl, column string, ok bool) {
	m := reAddColumn.FindStringSubmatch(s.ddl)
	if m == nil {
		return "", "", false
	}
	return m[1], m[2], true
}

// addsIndex returns the table and the index of an ALTER TABLE … ADD
// INDEX step. YQL has no ADD INDEX IF NOT EXISTS, and adding an index
// that exists fails
// (https://ydb.tech/docs/en/yql/reference/syntax/alter_table/indexes), so
// Migrate looks first (stepper.apply).
func (s step) addsIndex() (tbl, index string, ok bool) {
	m := reAddIndex.FindStringSubmatch(s.ddl)
	if m == nil {
		return "", "", false
	}
	return m[1], m[2], true
}

// expiring are the tables whose rows expire by YDB's TTL after
// JOB_RETENTION, and the column each row's lifetime is counted from (steps
// 8 to 11, 22 and 7). A NULL there never expires
// (https://ydb.tech/docs/en/concepts/ttl): a live job, its segments, and
// key rows older than steps 10 and 11. A callback's row (step 22) expires
// retention after it was registered, when its job was made. A Telegram
// delivery's (step 7) expires retention after it was last written (never
// NULL): every take and outcome writes it, so it has long been settled,
// and Telegram sends an update again for a day at most, less than the
// shortest retention (pipeline.MinJobRetention). counters expire by a TTL
// of their own (step 12). Adding a table here changes ttlRecord, so the
// next migrate sets it on an existing database.
var expiring = []struct{ table, column string }{
	{"jobs", "ended_at"},
	{"segments", "ended_at"},
	{"telegram_messages", "created_at"},
	{"idempotency_keys", "created_at"},
	{"callbacks", "created_at"},
	{"telegram_deliveries", "updated_at"},
}

// ttlInterval writes retention as YQL's Interval takes it, in ISO 8601:
// whole days as P<n>D, else seconds.
// https://ydb.tech/docs/en/yql/reference/recipes/ttl
func ttlInterval(retention time.Duration) (string, error) {
	if retention < time.Second {
		return "", fmt.Errorf("retention %s: want at least a second", retention)
	}
	if retention%(24*time.Hour) == 0 {
		return fmt.Sprintf("P%dD", int64(retention/(24*time.Hour))), nil
	}
	return fmt.Sprintf("PT%dS", int64(retention/time.Second)), nil
}

// ttlClause is the TTL setting of a table whose rows expire retention
// after column, as CREATE TABLE … WITH and ALTER TABLE … SET write it.
// https://ydb.tech/docs/en/yql/reference/syntax/create_table/with
func ttlClause(column string, retention time.Duration) (string, error) {
	iv, err := ttlInterval(retention)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("TTL = Interval(%q) ON %s", iv, column), nil
}

// ttlStatement sets table's TTL: a row expires retention after its column.
func ttlStatement(table, column string, retention time.Duration) (string, error) {
	c, err := ttlClause(column, retention)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("ALTER TABLE %s SET (%s)", table, c), nil
}

// ttlRecord is what schema_steps records of the TTLs set (row ttlStep):
// the retention and every expiring table and column, so a change of
// either (JOB_RETENTION, or a table added to expiring) differs from the
// record and Migrate sets the TTLs again, and an unchanged one costs no
// schema operation at all.
func ttlRecord(retention time.Duration) (string, error) {
	iv, err := ttlInterval(retention)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString(iv + ":")
	for _, e := range expiring {
		b.WriteString(" " + e.table + "." + e.column)
	}
	return b.String(), nil
}

// ttlStep is the number of the schema_steps row that records the TTLs
// (ttlRecord in its name): no step has it, steps count from 1.
const ttlStep = 0

// SchemaVersion is the number of schema steps this code knows.
func SchemaVersion() int { return len(steps) }

// ErrStepApplied: a step Migrate was about to record is recorded already;
// another migrate ran at the same time. Run it again.
var ErrStepApplied = errs.New(errs.Conflict, "schema_step_applied", "a schema step is already recorded as applied")

// DefaultMigrateTimeout bounds a Migrate whose context has no deadline,
// instead of the 30 s of one store call (DefaultCallTimeout): at
// schemaOpsPerMinute, the 40-odd operations of an old database's missing
// steps and TTLs take two minutes, a refused operation waits a minute, and
// an index built over a table with rows takes what it takes.
const DefaultMigrateTimeout = 10 * time.Minute

// MigrateOptions are what Migrate and Plan need besides the database.
type MigrateOptions struct {
	// Retention is JOB_RETENTION: the TTL of the expiring tables.
	Retention time.Duration
	// Out gets a line for people whenever Migrate waits (the schema
	// operations' pace, a refused operation, an index being built); nil
	// discards them.
	Out io.Writer
	// Sleep waits; clock.Sleep when nil. Tests pass one that moves a fake
	// clock.
	Sleep func(context.Context, time.Duration) error
}

func (o MigrateOptions) withDefaults() MigrateOptions {
	if o.Out == nil {
		o.Out = io.Discard
	}
	if o.Sleep == nil {
		o.Sleep = clock.Sleep
	}
	return o
}

// Migrate brings the schema up to date and sets the TTL of the expiring
// tables to o.Retention, within the serverless database's quota of schema
// operations (schemaOpsPerMinute, paced): on a new database (no
// schema_steps) it makes every table in its final form, TTL included,
// and records every step as applied, in a dozen operations; on a database
// that has some steps it applies each missing one, in order, and records
// it; and it sets the TTLs when the record of them (ttlRecord) differs.
// A run with nothing to do lists the tables and reads schema_steps: one
// schema operation. A database recording a step this program does not
// know is refused ("run a newer build"). It returns the steps applied now.
//
// DDL runs outside any transaction (YDB keeps schema and data changes
// apart: https://ydb.tech/docs/en/concepts/transactions); each record is
// its own transaction, which refuses a step recorded meanwhile
// (ErrStepApplied: a concurrent migrate).
func Migrate(ctx context.Context, db *DB, o MigrateOptions) ([]string, error) {
	ctx, cancel := migrateBound(ctx)
	defer cancel()
	o = o.withDefaults()
	return migrate(ctx, newPaced(ydbSchema{db: db}, db.clock, o), o)
}

// Plan returns, one a line, the schema operations Migrate would run on db
// (on a new database when db is nil), changing nothing: the listing and
// the descriptions it reads (which are schema operations themselves, and
// run), and the DDL it would run (which does not). An index being built is
// taken as built.
func Plan(ctx context.Context, db *DB, o MigrateOptions) ([]string, error) {
	ctx, cancel := migrateBound(ctx)
	defer cancel()
	o = o.withDefaults()
	var inner schemaDB = newDatabase{}
	if db != nil {
		inner = newPaced(ydbSchema{db: db}, db.clock, o)
	}
	return plan(ctx, inner, o)
}

func migrateBound(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, DefaultMigrateTimeout)
}

// stepsTable is the table that records the applied steps.
const stepsTable = "schema_steps"

// migrate is Migrate on s.
func migrate(ctx context.Context, s schemaDB, o MigrateOptions) ([]string, error) {
	ttl, err := ttlRecord(o.Retention)
	if err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	tables, err := s.listTables(ctx)
	if err != nil {
		return nil, fmt.Errorf("migrate: list the tables: %w", err)
	}
	if !tables[stepsTable] {
		return createAll(ctx, s, tables, o, ttl)
	}
	have, recorded, err := s.recorded(ctx)
	if err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	for n := range have {
		if n > len(steps) {
			return nil, fmt.Errorf("migrate: the database has schema step %d, newer than this program's %d: run a newer build", n, len(steps))
		}
	}
	m := stepper{s: s, o: o, tables: tables, shapes: map[string]*tableShape{}}
	var applied []string
	for i, st := range steps {
		n := i + 1
		if have[n] {
			continue
		}
		if err := m.apply(ctx, st); err != nil {
			return applied, fmt.Errorf("migrate: schema step %d (%s): %w", n, st.name, err)
		}
		if err := s.record(ctx, []int{n}, ""); err != nil {
			return applied, fmt.Errorf("migrate: record schema step %d (%s): %w", n, st.name, err)
		}
		applied = append(applied, st.name)
	}
	if recorded != ttl {
		if err := setTTL(ctx, s, o.Retention, ttl); err != nil {
			return applied, err
		}
	}
	return applied, nil
}

// createAll makes a new database: every table in its final form, then
// schema_steps, then the record of every step and of the TTLs, in one
// transaction. Every Migrate makes schema_steps before anything else on a
// database it finds without one, or (this one) after everything else, so a
// database without schema_steps is new, and a table it has was made here
// by a run that stopped before schema_steps: it is in its final form, and
// only the TTLs are set again, since that run may have had another
// retention.
func createAll(ctx context.Context, s schemaDB, tables map[string]bool, o MigrateOptions, ttl string) ([]string, error) {
	finals, err := finalTables(o.Retention)
	if err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	fresh := true
	for _, f := range finals {
		if tables[f.name] {
			fresh = false
			continue
		}
		if err := s.exec(ctx, ifNotExists(f.ddl)); err != nil {
			return nil, fmt.Errorf("migrate: create table %s: %w", f.name, err)
		}
	}
	if err := s.exec(ctx, ifNotExists(createSchemaSteps)); err != nil {
		return nil, fmt.Errorf("migrate: create table %s: %w", stepsTable, err)
	}
	all := make([]int, len(steps))
	names := make([]string, len(steps))
	for i, st := range steps {
		all[i], names[i] = i+1, st.name
	}
	record := ttl
	if !fresh {
		record = ""
	}
	if err := s.record(ctx, all, record); err != nil {
		return nil, fmt.Errorf("migrate: record the schema steps: %w", err)
	}
	if !fresh {
		if err := setTTL(ctx, s, o.Retention, ttl); err != nil {
			return names, err
		}
	}
	return names, nil
}

// setTTL sets the TTL of every expiring table to retention, then records
// it. Setting a TTL again with the same value changes nothing, so a run
// stopped in between is simply run again.
func setTTL(ctx context.Context, s schemaDB, retention time.Duration, ttl string) error {
	for _, e := range expiring {
		stmt, err := ttlStatement(e.table, e.column, retention)
		if err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		if err := s.exec(ctx, stmt); err != nil {
			return fmt.Errorf("migrate: set the TTL of %s: %w", e.table, err)
		}
	}
	if err := s.record(ctx, nil, ttl); err != nil {
		return fmt.Errorf("migrate: record the TTL: %w", err)
	}
	return nil
}

// indexPoll is how often Migrate looks at an index being built: each look
// is a schema operation.
const indexPoll = 30 * time.Second

// stepper applies the missing steps of a database that has schema_steps,
// describing each table at most once (and not at all when this run made
// it, or when no ADD step touches it).
type stepper struct {
	s      schemaDB
	o      MigrateOptions
	tables map[string]bool        // the tables there, listed at the start
	shapes map[string]*tableShape // what is known of a table's columns and indexes
}

// shape returns what tbl has, describing it the first time.
func (m *stepper) shape(ctx context.Context, tbl string) (*tableShape, error) {
	if sh, ok := m.shapes[tbl]; ok {
		return sh, nil
	}
	d, err := m.s.describe(ctx, tbl)
	if err != nil {
		return nil, fmt.Errorf("describe table %s: %w", tbl, err)
	}
	m.shapes[tbl] = &d
	return &d, nil
}

// apply makes st take effect unless it did already (a run stopped between
// a step's DDL and its record): a CREATE TABLE runs unless the table was
// listed, an ADD COLUMN or ADD INDEX unless the table has the column or
// the index. An index is taken to have taken effect only once built.
func (m *stepper) apply(ctx context.Context, st step) error {
	if tbl, ok := st.creates(); ok {
		if m.tables[tbl] {
			return nil
		}
		if err := m.s.exec(ctx, st.statement()); err != nil {
			return err
		}
		m.tables[tbl] = true
		sh := shapeOf(st.ddl)
		m.shapes[tbl] = &sh
		return nil
	}
	if tbl, col, ok := st.addsColumn(); ok {
		sh, err := m.shape(ctx, tbl)
		if err != nil || sh.columns[col] {
			return err
		}
		if err := m.s.exec(ctx, st.statement()); err != nil {
			return err
		}
		sh.columns[col] = true
		return nil
	}
	if tbl, ix, ok := st.addsIndex(); ok {
		sh, err := m.shape(ctx, tbl)
		if err != nil {
			return err
		}
		if _, there := sh.indexes[ix]; !there {
			// The statement returns once YDB has built the index over the
			// table's rows (docs/database.md, "Schema steps"); the table is
			// described again all the same, and the step is recorded only
			// when it says the index is ready.
			if err := m.s.exec(ctx, st.statement()); err != nil {
				return err
			}
			delete(m.shapes, tbl)
		}
		return m.waitIndex(ctx, tbl, ix)
	}
	return fmt.Errorf("no rule to apply it: %.40q", st.ddl)
}

// waitIndex returns once tbl's index ix is built, looking every indexPoll.
func (m *stepper) waitIndex(ctx context.Context, tbl, ix string) error {
	for {
		sh, err := m.shape(ctx, tbl)
		if err != nil {
			return err
		}
		ready, there := sh.indexes[ix]
		switch {
		case !there:
			return fmt.Errorf("table %s has no index %s after adding it", tbl, ix)
		case ready:
			return nil
		}
		fmt.Fprintf(m.o.Out, "index %s of table %s is being built; looking again in %s\n", ix, tbl, indexPoll)
		if err := m.o.Sleep(ctx, indexPoll); err != nil {
			return err
		}
		delete(m.shapes, tbl)
	}
}
