package ydb

import (
	"context"
	"errors"
	"fmt"
	"path"
	"regexp"
	"strings"
	"time"

	"github.com/ydb-platform/ydb-go-sdk/v3/query"
	"github.com/ydb-platform/ydb-go-sdk/v3/sugar"
	"github.com/ydb-platform/ydb-go-sdk/v3/table"
	tableopts "github.com/ydb-platform/ydb-go-sdk/v3/table/options"

	"transcriber/internal/errs"
)

// step is one schema step: a name for people and one DDL statement.
type step struct {
	name string
	ddl  string
}

// steps are the schema's steps, applied in order by Migrate and recorded
// in schema_steps by number (1-based). An applied step is never edited: a
// change is a new step, and docs/database.md changes with it.
//
// YDB runs DDL outside transactions, so Migrate can crash (or lose its
// connection) after a step's DDL and before its record; the next run then
// meets the step again, and every step must be safe to run again (see
// statement and inEffect). A new step that is neither CREATE TABLE nor
// ALTER TABLE … ADD COLUMN or ADD INDEX needs a rule there first
// (TestStepsRunAgain says so).
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
}

// statement is what Migrate runs for s: its DDL, with CREATE TABLE made
// CREATE TABLE IF NOT EXISTS, which does nothing when the table is there
// (https://ydb.tech/docs/en/yql/reference/syntax/create_table/). The
// applied steps 1 to 7 and 12 ran as plain CREATE TABLE; running them
// with IF NOT EXISTS instead is the one change of an applied step that is
// safe, since on a database that has the step it does nothing either way.
// The step constants keep the plain form, which the schema check reads.
func (s step) statement() string {
	if rest, ok := strings.CutPrefix(s.ddl, "CREATE TABLE "); ok {
		return "CREATE TABLE IF NOT EXISTS " + rest
	}
	return s.ddl
}

var (
	reAddColumn = regexp.MustCompile(`^ALTER TABLE (\w+) ADD COLUMN (\w+) \w+$`)
	reAddIndex  = regexp.MustCompile(`^ALTER TABLE (\w+) ADD INDEX (\w+) GLOBAL SYNC ON \([^)]*\)$`)
)

// addsColumn returns the table and the column of an ALTER TABLE … ADD
// COLUMN step. YQL has no ADD COLUMN IF NOT EXISTS, and ADD COLUMN of a
// column that exists fails
// (https://ydb.tech/docs/en/yql/reference/syntax/alter_table/columns), so
// Migrate looks first (inEffect).
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
// Migrate looks first (inEffect).
func (s step) addsIndex() (tbl, index string, ok bool) {
	m := reAddIndex.FindStringSubmatch(s.ddl)
	if m == nil {
		return "", "", false
	}
	return m[1], m[2], true
}

// inEffect reports whether a step's DDL already took effect: for an ADD
// COLUMN step, whether the table has the column; for an ADD INDEX step,
// whether it has the index. Other steps run again harmlessly (statement),
// so for them it is false.
func (db *DB) inEffect(ctx context.Context, s step) (bool, error) {
	tbl, column, ok := s.addsColumn()
	tbl2, index, isIndex := s.addsIndex()
	if !ok && !isIndex {
		return false, nil
	}
	if isIndex {
		tbl = tbl2
	}
	var desc tableopts.Description
	err := db.driver.Table().Do(ctx, func(ctx context.Context, ss table.Session) error {
		var err error
		desc, err = ss.DescribeTable(ctx, path.Join(db.driver.Name(), db.dir, tbl))
		return err
	}, table.WithIdempotent())
	if err != nil {
		return false, translate(err)
	}
	if isIndex {
		for _, ix := range desc.Indexes {
			if ix.Name == index {
				return true, nil
			}
		}
		return false, nil
	}
	for _, c := range desc.Columns {
		if c.Name == column {
			return true, nil
		}
	}
	return false, nil
}

// expiring are the tables whose rows expire by YDB's TTL, and the column
// each row's lifetime is counted from (steps 8 to 11, and 22). A NULL there
// never expires (https://ydb.tech/docs/en/concepts/ttl): a live job, its
// segments, and key rows older than step 10 and 11. A callback's row
// (step 22) expires retention after it was registered, when its job was
// made.
var expiring = []struct{ table, column string }{
	{"jobs", "ended_at"},
	{"segments", "ended_at"},
	{"telegram_messages", "created_at"},
	{"idempotency_keys", "created_at"},
	{"callbacks", "created_at"},
}

// ttlStatement sets table's TTL: a row expires retention after its column.
// An Interval is written in ISO 8601: whole days as P<n>D, else seconds.
// https://ydb.tech/docs/en/yql/reference/recipes/ttl
func ttlStatement(table, column string, retention time.Duration) (string, error) {
	if retention < time.Second {
		return "", fmt.Errorf("retention %s: want at least a second", retention)
	}
	iv := fmt.Sprintf("PT%dS", int64(retention/time.Second))
	if retention%(24*time.Hour) == 0 {
		iv = fmt.Sprintf("P%dD", int64(retention/(24*time.Hour)))
	}
	return fmt.Sprintf("ALTER TABLE %s SET (TTL = Interval(%q) ON %s)", table, iv, column), nil
}

// SetRetention sets the TTL of the job tables: a job's row and its
// segments expire retention after the job ended, its Telegram message and
// idempotency key rows retention after they were made (a job ends after
// it is made, so they never outlive it by much; a key row whose job is gone
// is pointed at the next job made for the key). It is not a schema step:
// `transcriber migrate` runs it after Migrate on every run, with
// JOB_RETENTION, so a changed retention takes effect at the next migrate.
// Setting the TTL again with the same value changes nothing.
func SetRetention(ctx context.Context, db *DB, retention time.Duration) error {
	ctx, cancel := db.bound(ctx)
	defer cancel()
	for _, e := range expiring {
		stmt, err := ttlStatement(e.table, e.column, retention)
		if err != nil {
			return fmt.Errorf("set retention: %w", err)
		}
		if err := db.driver.Query().Exec(ctx, db.text(stmt), query.WithTxControl(query.ImplicitTxControl())); err != nil {
			return fmt.Errorf("set retention of %s: %w", e.table, translate(err))
		}
	}
	return nil
}

// SchemaVersion is the number of schema steps this code knows.
func SchemaVersion() int { return len(steps) }

// ErrStepApplied: a step Migrate was about to record is recorded already;
// another migrate ran at the same time. Run it again.
var ErrStepApplied = errs.New(errs.Conflict, "schema_step_applied", "a schema step is already recorded as applied")

// Migrate brings the schema up to date: it makes schema_steps if missing,
// then applies each step not recorded there, in order, and records it. A
// step whose DDL took effect but whose record was lost (a crash between
// the two) is applied again harmlessly and recorded (see steps).
// DDL runs outside any transaction (YDB keeps schema and data changes
// apart: https://ydb.tech/docs/en/concepts/transactions); each record is
// its own transaction, which refuses a step recorded meanwhile. Running
// Migrate again changes nothing. A database recording a step this program
// does not know is refused ("run a newer build"). It returns the steps
// applied now.
func Migrate(ctx context.Context, db *DB) ([]string, error) {
	ctx, cancel := db.bound(ctx)
	defer cancel()
	if err := db.ensureStepsTable(ctx); err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	have, err := db.appliedSteps(ctx)
	if err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	var applied []string
	for i, st := range steps {
		n := i + 1
		if have[n] {
			continue
		}
		done, err := db.inEffect(ctx, st)
		if err != nil {
			return applied, fmt.Errorf("migrate: schema step %d (%s): look at the table: %w", n, st.name, err)
		}
		if !done {
			if err := db.driver.Query().Exec(ctx, db.text(st.statement()), query.WithTxControl(query.ImplicitTxControl())); err != nil {
				return applied, fmt.Errorf("migrate: schema step %d (%s): %w", n, st.name, translate(err))
			}
		}
		if err := db.recordStep(ctx, n, st.name); err != nil {
			return applied, fmt.Errorf("migrate: record schema step %d (%s): %w", n, st.name, err)
		}
		applied = append(applied, st.name)
	}
	return applied, nil
}

// ensureStepsTable makes schema_steps unless it exists (and the directory
// of the tables, when the store has one).
func (db *DB) ensureStepsTable(ctx context.Context) error {
	if db.dir != "" {
		if err := sugar.MakeRecursive(ctx, db.driver, db.dir); err != nil {
			return translate(err)
		}
	}
	exists, err := sugar.IsTableExists(ctx, db.driver.Scheme(), path.Join(db.driver.Name(), db.dir, "schema_steps"))
	if err != nil {
		return translate(err)
	}
	if exists {
		return nil
	}
	return translate(db.driver.Query().Exec(ctx, db.text(createSchemaSteps), query.WithTxControl(query.ImplicitTxControl())))
}

// appliedSteps reads the numbers of the applied steps and refuses a
// database that has one this program does not know.
func (db *DB) appliedSteps(ctx context.Context) (map[int]bool, error) {
	have := map[int]bool{}
	err := db.read(ctx, func(ctx context.Context, tx query.TxActor) error {
		clear(have)
		return db.rows(ctx, tx, selectSchemaSteps, nil, func(row query.Row) error {
			var n int32
			if err := row.ScanNamed(query.Named("step", &n)); err != nil {
				return fmt.Errorf("read schema step: %w", err)
			}
			have[int(n)] = true
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	for n := range have {
		if n > len(steps) {
			return nil, fmt.Errorf("the database has schema step %d, newer than this program's %d: run a newer build", n, len(steps))
		}
	}
	return have, nil
}

// recordStep records step n as applied, unless it is recorded already.
func (db *DB) recordStep(ctx context.Context, n int, name string) error {
	return db.update(ctx, func(ctx context.Context, tx query.TxActor) error {
		recorded := false
		err := db.rows(ctx, tx, selectSchemaSteps, nil, func(row query.Row) error {
			var have int32
			if err := row.ScanNamed(query.Named("step", &have)); err != nil {
				return err
			}
			recorded = recorded || int(have) == n
			return nil
		})
		if err != nil {
			return err
		}
		if recorded {
			return fmt.Errorf("%w: step %d", ErrStepApplied, n)
		}
		err = db.exec(ctx, tx, insertSchemaStep, stepParams(n, name, db.now()))
		if isKeyExists(err) {
			return errors.Join(ErrStepApplied, err)
		}
		return err
	})
}
