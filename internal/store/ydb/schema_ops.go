package ydb

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/ydb-platform/ydb-go-genproto/protos/Ydb"
	"github.com/ydb-platform/ydb-go-genproto/protos/Ydb_Table"
	ydbsdk "github.com/ydb-platform/ydb-go-sdk/v3"
	"github.com/ydb-platform/ydb-go-sdk/v3/query"
	"github.com/ydb-platform/ydb-go-sdk/v3/retry"
	"github.com/ydb-platform/ydb-go-sdk/v3/sugar"
	"github.com/ydb-platform/ydb-go-sdk/v3/table"
	tableopts "github.com/ydb-platform/ydb-go-sdk/v3/table/options"
	"github.com/ydb-platform/ydb-go-sdk/v3/table/types"
	"google.golang.org/grpc/codes"

	"transcriber/internal/clock"
)

// schemaDB is what Migrate does to a database, behind an interface so the
// tests count it without a YDB (schema_count_test.go). listTables,
// describe and exec are schema operations, which a serverless database
// allows 30 a minute and 1,000 a day ("getting a table description" and
// "getting a list of tables" count: Yandex Cloud's YDB quotas, "Serverless
// mode"); recorded and record read and write schema_steps, which are data
// queries and count against no such quota.
type schemaDB interface {
	// listTables names the tables of the store's directory.
	listTables(ctx context.Context) (map[string]bool, error)
	// describe reads a table's columns and indexes.
	describe(ctx context.Context, table string) (tableShape, error)
	// exec runs one DDL statement.
	exec(ctx context.Context, ddl string) error
	// recorded reads schema_steps: the steps recorded as applied, and the
	// record of the TTLs set ("" when none).
	recorded(ctx context.Context) (have map[int]bool, ttl string, err error)
	// record records steps as applied and, unless ttl is "", the TTLs, in
	// one transaction that refuses a step recorded meanwhile
	// (ErrStepApplied).
	record(ctx context.Context, steps []int, ttl string) error
}

// ydbSchema is schemaDB on a YDB. Each schema operation is one attempt:
// the SDK's own retries are off for it (the scheme client's by
// config.WithNoAutoRetry in Open; Do's by a closure that never fails), so
// that a refusal for the quota comes back to pacedSchema, which waits for
// it, instead of being retried at once by the SDK.
type ydbSchema struct{ db *DB }

var _ schemaDB = ydbSchema{}

// dirPath is the absolute path of the store's directory.
func (y ydbSchema) dirPath() string { return path.Join(y.db.driver.Name(), y.db.dir) }

func (y ydbSchema) listTables(ctx context.Context) (map[string]bool, error) {
	d, err := y.db.driver.Scheme().ListDirectory(ctx, y.dirPath())
	if err != nil && y.db.dir != "" && (ydbsdk.IsOperationErrorSchemeError(err) || ydbsdk.IsOperationErrorNotFoundError(err)) {
		// A store in a directory of its own (the tests) that is not there
		// yet: make it, and it is empty.
		return map[string]bool{}, sugar.MakeRecursive(ctx, y.db.driver, y.db.dir)
	}
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, e := range d.Children {
		if e.IsTable() {
			out[e.Name] = true
		}
	}
	return out, nil
}

func (y ydbSchema) describe(ctx context.Context, tbl string) (tableShape, error) {
	var desc tableopts.Description
	var callErr error
	err := y.db.driver.Table().Do(ctx, func(ctx context.Context, s table.Session) error {
		desc, callErr = s.DescribeTable(ctx, path.Join(y.dirPath(), tbl))
		return nil // one attempt (ydbSchema)
	}, table.WithIdempotent())
	if err == nil {
		err = callErr
	}
	if err != nil {
		return tableShape{}, err
	}
	sh := tableShape{columns: map[string]bool{}, indexes: map[string]bool{}}
	for _, c := range desc.Columns {
		sh.columns[c.Name] = true
	}
	for _, ix := range desc.Indexes {
		// A server too old to say is taken at its word that the index is
		// there: it answered the ADD INDEX only once it was built.
		sh.indexes[ix.Name] = ix.Status != Ydb_Table.TableIndexDescription_STATUS_BUILDING
	}
	return sh, nil
}

func (y ydbSchema) exec(ctx context.Context, ddl string) error {
	var callErr error
	err := y.db.driver.Query().Do(ctx, func(ctx context.Context, s query.Session) error {
		callErr = s.Exec(ctx, y.db.text(ddl), query.WithTxControl(query.ImplicitTxControl()))
		return nil // one attempt (ydbSchema)
	})
	if err == nil {
		err = callErr
	}
	return err
}

func (y ydbSchema) recorded(ctx context.Context) (map[int]bool, string, error) {
	have := map[int]bool{}
	ttl := ""
	err := y.db.read(ctx, func(ctx context.Context, tx query.TxActor) error {
		clear(have)
		ttl = ""
		return y.db.rows(ctx, tx, selectSchemaSteps, nil, func(row query.Row) error {
			var n int32
			var name *string
			if err := row.ScanNamed(query.Named("step", &n), query.Named("name", &name)); err != nil {
				return fmt.Errorf("read schema step: %w", err)
			}
			switch {
			case n == ttlStep && name != nil:
				ttl = *name
			case n > 0:
				have[int(n)] = true
			}
			return nil
		})
	})
	if err != nil {
		return nil, "", fmt.Errorf("read the schema steps: %w", err)
	}
	return have, ttl, nil
}

func (y ydbSchema) record(ctx context.Context, nums []int, ttl string) error {
	now := y.db.now()
	return y.db.update(ctx, func(ctx context.Context, tx query.TxActor) error {
		want := map[int]bool{}
		for _, n := range nums {
			want[n] = true
		}
		var taken []int
		err := y.db.rows(ctx, tx, selectSchemaSteps, nil, func(row query.Row) error {
			var n int32
			if err := row.ScanNamed(query.Named("step", &n)); err != nil {
				return err
			}
			if want[int(n)] {
				taken = append(taken, int(n))
			}
			return nil
		})
		if err != nil {
			return err
		}
		switch {
		case earlierCommit(ctx) && len(taken) == len(nums):
			// Recorded by this call: a run whose commit's answer was lost.
		case len(taken) > 0:
			return fmt.Errorf("%w: step %d", ErrStepApplied, taken[0])
		case len(nums) > 0:
			rows := make([]types.Value, len(nums))
			for i, n := range nums {
				rows[i] = stepRow(n, steps[n-1].name, now)
			}
			err = y.db.exec(ctx, tx, insertSchemaSteps, params{{"$steps", types.ListValue(rows...)}})
			if isKeyExists(err) {
				return errors.Join(ErrStepApplied, err)
			}
			if err != nil {
				return err
			}
		}
		if ttl == "" {
			return nil
		}
		return y.db.exec(ctx, tx, upsertSchemaTTL, stepParams(ttlStep, ttl, now))
	})
}

// stepRow is one row of insertSchemaSteps' $steps.
func stepRow(n int, name string, at time.Time) types.Value {
	return types.StructValue(
		types.StructFieldValue("step", types.Int32Value(int32(n))), //nolint:gosec // a handful of steps
		types.StructFieldValue("name", utf8(name)),
		types.StructFieldValue("applied_at", ts(at)),
	)
}

// schemaOpsPerMinute is the pace of schema operations: under the 30 a
// minute a serverless database allows, leaving room for someone at the
// console while the deploy migrates.
const schemaOpsPerMinute = 25

// quotaWait is how long a refused schema operation waits before it is
// tried again: the quota counts operations a minute.
const quotaWait = time.Minute

// transientTries is how many times an operation that failed in a way the
// SDK would retry is tried again, a second apart and then more, before
// Migrate gives up (the SDK's own retries are off: ydbSchema).
const transientTries = 3

// pacedSchema runs the schema operations of the schemaDB it wraps at most
// schemaOpsPerMinute in any minute, waiting (and saying so on Out) when
// the next one would pass it; a refusal for the quota waits quotaWait and
// tries again, as long as the context lives.
type pacedSchema struct {
	schemaDB
	clock  clock.Clock
	o      MigrateOptions
	recent []time.Time // when the latest operations started, oldest first
}

func newPaced(s schemaDB, clk clock.Clock, o MigrateOptions) *pacedSchema {
	return &pacedSchema{schemaDB: s, clock: clk, o: o.withDefaults()}
}

func (p *pacedSchema) listTables(ctx context.Context) (out map[string]bool, err error) {
	err = p.do(ctx, "list the tables", true, func(ctx context.Context) error {
		out, err = p.schemaDB.listTables(ctx)
		return err
	})
	return out, err
}

func (p *pacedSchema) describe(ctx context.Context, tbl string) (out tableShape, err error) {
	err = p.do(ctx, "describe table "+tbl, true, func(ctx context.Context) error {
		out, err = p.schemaDB.describe(ctx, tbl)
		return err
	})
	return out, err
}

func (p *pacedSchema) exec(ctx context.Context, ddl string) error {
	// CREATE TABLE IF NOT EXISTS and SET TTL do the same when run twice;
	// ADD COLUMN and ADD INDEX fail the second time.
	idempotent := !strings.Contains(ddl, " ADD ")
	return p.do(ctx, oneLine(ddl), idempotent, func(ctx context.Context) error { return p.schemaDB.exec(ctx, ddl) })
}

// do runs op, one schema operation, at the pace, and again after a
// refusal for the quota or (up to transientTries times) a failure the SDK
// deems worth another try.
func (p *pacedSchema) do(ctx context.Context, what string, idempotent bool, op func(context.Context) error) error {
	tries := 0
	for {
		if err := p.wait(ctx); err != nil {
			return err
		}
		err := op(ctx)
		switch {
		case err == nil:
			return nil
		case ctx.Err() != nil:
			return translate(err)
		case isSchemaQuota(err):
			fmt.Fprintf(p.o.Out, "YDB refused a schema operation for its quota (%.60s); trying again in %s\n", what, quotaWait)
			if err := p.o.Sleep(ctx, quotaWait); err != nil {
				return err
			}
		case tries < transientTries && retry.Check(err).MustRetry(idempotent):
			tries++
			if err := p.o.Sleep(ctx, time.Duration(tries)*time.Second); err != nil {
				return err
			}
		default:
			return translate(err)
		}
	}
}

// wait holds the next operation back until it is no more than the
// schemaOpsPerMinute-th in the last minute, then counts it.
func (p *pacedSchema) wait(ctx context.Context) error {
	if n := len(p.recent); n >= schemaOpsPerMinute {
		if d := p.recent[n-schemaOpsPerMinute].Add(time.Minute).Sub(p.clock.Now()); d > 0 {
			fmt.Fprintf(p.o.Out, "%d schema operations in the last minute (a serverless database allows 30): waiting %s\n",
				schemaOpsPerMinute, d.Round(time.Second))
			if err := p.o.Sleep(ctx, d); err != nil {
				return err
			}
		}
	}
	p.recent = append(p.recent, p.clock.Now())
	if len(p.recent) > schemaOpsPerMinute {
		p.recent = p.recent[len(p.recent)-schemaOpsPerMinute:]
	}
	return nil
}

// schemaQuotaText is the issue YDB's scheme shard answers a schema
// operation past the database's quota with (ydb-platform/ydb,
// ydb/core/tx/schemeshard; ydb-go-sdk v3.127.0 reads the same text,
// internal/xerrors/operation.go).
const schemaQuotaText = "Request exceeded a limit on the number of schema operations"

// isSchemaQuota reports a schema operation refused for the quota: status
// OVERLOADED (how the scheme shard answers some requests past it, and how
// Yandex Cloud's docs name the error of a quota on schema operations), or
// any status carrying schemaQuotaText (a DDL statement through the query
// service comes back GENERIC_ERROR with it), or gRPC's ResourceExhausted.
func isSchemaQuota(err error) bool {
	if ydbsdk.IsOperationErrorOverloaded(err) || ydbsdk.IsTransportError(err, codes.ResourceExhausted) {
		return true
	}
	found := false
	ydbsdk.IterateByIssues(err, func(message string, _ Ydb.StatusIds_StatusCode, _ uint32) {
		found = found || strings.Contains(message, schemaQuotaText)
	})
	return found
}

// oneLine is a statement on one line: its runs of white space made one
// space.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// newDatabase is a database with nothing in it, for Plan without one.
type newDatabase struct{}

var errNoDatabase = errors.New("no database: a new one has nothing to read")

func (newDatabase) listTables(context.Context) (map[string]bool, error) {
	return map[string]bool{}, nil
}
func (newDatabase) describe(context.Context, string) (tableShape, error) {
	return tableShape{}, errNoDatabase
}
func (newDatabase) exec(context.Context, string) error { return errNoDatabase }
func (newDatabase) recorded(context.Context) (map[int]bool, string, error) {
	return nil, "", errNoDatabase
}
func (newDatabase) record(context.Context, []int, string) error { return errNoDatabase }

// planner is a schemaDB that writes down the schema operations instead of
// running the DDL: the reads go to the database it wraps, with what the
// plan's DDL would have made added to what they read; the DDL and the
// records go nowhere.
type planner struct {
	schemaDB
	ops  []string
	made map[string]tableShape // the tables the plan makes
	adds map[string]tableShape // the columns and indexes it adds to tables there
}

func (p *planner) listTables(ctx context.Context) (map[string]bool, error) {
	p.ops = append(p.ops, "list the tables")
	return p.schemaDB.listTables(ctx)
}

func (p *planner) describe(ctx context.Context, tbl string) (tableShape, error) {
	p.ops = append(p.ops, "describe table "+tbl)
	sh, ok := p.made[tbl]
	if !ok {
		var err error
		if sh, err = p.schemaDB.describe(ctx, tbl); err != nil {
			return sh, err
		}
	}
	out := tableShape{columns: map[string]bool{}, indexes: map[string]bool{}}
	for _, from := range []tableShape{sh, p.adds[tbl]} {
		for c := range from.columns {
			out.columns[c] = true
		}
		for ix := range from.indexes {
			out.indexes[ix] = true // built: a plan waits for nothing
		}
	}
	return out, nil
}

func (p *planner) exec(_ context.Context, ddl string) error {
	p.ops = append(p.ops, oneLine(ddl))
	if m := reCreateTable.FindStringSubmatch(ddl); m != nil {
		p.made[m[1]] = shapeOf(ddl)
		return nil
	}
	target := func(tbl string) tableShape {
		if sh, ok := p.made[tbl]; ok {
			return sh
		}
		if _, ok := p.adds[tbl]; !ok {
			p.adds[tbl] = tableShape{columns: map[string]bool{}, indexes: map[string]bool{}}
		}
		return p.adds[tbl]
	}
	if m := reAddColumn.FindStringSubmatch(ddl); m != nil {
		target(m[1]).columns[m[2]] = true
	}
	if m := reAddIndex.FindStringSubmatch(ddl); m != nil {
		target(m[1]).indexes[m[2]] = true
	}
	return nil
}

func (p *planner) record(context.Context, []int, string) error { return nil }

// plan runs migrate on a planner over s and returns its operations.
func plan(ctx context.Context, s schemaDB, o MigrateOptions) ([]string, error) {
	p := &planner{schemaDB: s, made: map[string]tableShape{}, adds: map[string]tableShape{}}
	_, err := migrate(ctx, p, o)
	return p.ops, err
}
