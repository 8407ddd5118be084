package ydb

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
	"time"

	"github.com/ydb-platform/ydb-go-genproto/protos/Ydb"
	ydbsdk "github.com/ydb-platform/ydb-go-sdk/v3"
	"github.com/ydb-platform/ydb-go-sdk/v3/query"
	"github.com/ydb-platform/ydb-go-sdk/v3/retry"
	"github.com/ydb-platform/ydb-go-sdk/v3/sugar"
	"google.golang.org/grpc/codes"

	"transcriber/internal/clock"
)

// schemaDB is what Migrate does to a database, an interface so the tests
// count it without a YDB (schema_count_test.go). listTables and exec are
// schema operations, which a serverless database allows 30 a minute and
// 1,000 a day (Yandex Cloud's YDB quotas, "Serverless mode"; a listing
// counts); recorded and record are data queries, outside that quota.
type schemaDB interface {
	listTables(ctx context.Context) (map[string]bool, error)
	exec(ctx context.Context, ddl string) error
	// recorded reads the steps recorded and the TTL record ("" when none).
	recorded(ctx context.Context) (have map[int]bool, ttl string, err error)
	// record records step n (unless 0) and the TTLs (unless ""), refusing
	// a step recorded meanwhile (ErrStepApplied).
	record(ctx context.Context, n int, ttl string) error
}

// ydbSchema is schemaDB on a YDB. Each schema operation is one attempt (the
// scheme client by config.WithNoAutoRetry in Open, Do by a closure that
// never fails), so a refusal for the quota reaches pacedSchema, which waits
// it out, instead of the SDK retrying at once.
type ydbSchema struct{ db *DB }

func (y ydbSchema) listTables(ctx context.Context) (map[string]bool, error) {
	d, err := y.db.driver.Scheme().ListDirectory(ctx, path.Join(y.db.driver.Name(), y.db.dir))
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

func (y ydbSchema) recorded(ctx context.Context) (have map[int]bool, ttl string, err error) {
	err = y.db.read(ctx, func(ctx context.Context, tx query.TxActor) error {
		have, ttl, err = y.readSteps(ctx, tx)
		return err
	})
	if err != nil {
		return nil, "", fmt.Errorf("read the schema steps: %w", err)
	}
	return have, ttl, nil
}

func (y ydbSchema) readSteps(ctx context.Context, tx query.TxActor) (map[int]bool, string, error) {
	have, ttl := map[int]bool{}, ""
	err := y.db.rows(ctx, tx, selectSchemaSteps, nil, func(row query.Row) error {
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
	return have, ttl, err
}

func (y ydbSchema) record(ctx context.Context, n int, ttl string) error {
	now := y.db.now()
	return y.db.update(ctx, func(ctx context.Context, tx query.TxActor) error {
		if n > 0 {
			have, _, err := y.readSteps(ctx, tx)
			switch {
			case err != nil:
				return err
			case have[n] && earlierCommit(ctx): // this call's, its answer lost
			case have[n]:
				return fmt.Errorf("%w: step %d", ErrStepApplied, n)
			default:
				err := y.db.exec(ctx, tx, insertSchemaStep, stepParams(n, steps[n-1].name, now))
				if isKeyExists(err) {
					return errors.Join(ErrStepApplied, err)
				}
				if err != nil {
					return err
				}
			}
		}
		if ttl == "" {
			return nil
		}
		return y.db.exec(ctx, tx, upsertSchemaTTL, stepParams(ttlStep, ttl, now))
	})
}

// schemaOpsPerMinute is the pace of schema operations: under the 30 a
// minute a serverless database allows, leaving room for the console.
const schemaOpsPerMinute = 25

// quotaWait is how long a schema operation refused for the quota waits; the
// quota counts operations a minute.
const quotaWait = time.Minute

// transientTries is how many times an operation that failed in a way the
// SDK would retry is tried again (the SDK's own retries are off: ydbSchema).
const transientTries = 3

// pacedSchema runs at most schemaOpsPerMinute schema operations in any
// minute, saying on out when it waits; a refusal for the quota waits
// quotaWait and tries again while the context lives.
type pacedSchema struct {
	schemaDB
	clock  clock.Clock
	out    io.Writer
	sleep  func(context.Context, time.Duration) error
	recent []time.Time // when the latest operations started, oldest first
}

// newPaced paces s; out nil discards, sleep nil is clock.Sleep.
func newPaced(s schemaDB, clk clock.Clock, out io.Writer, sleep func(context.Context, time.Duration) error) *pacedSchema {
	if out == nil {
		out = io.Discard
	}
	if sleep == nil {
		sleep = clock.Sleep
	}
	return &pacedSchema{schemaDB: s, clock: clk, out: out, sleep: sleep}
}

func (p *pacedSchema) listTables(ctx context.Context) (out map[string]bool, err error) {
	err = p.do(ctx, "list the tables", func(ctx context.Context) error {
		out, err = p.schemaDB.listTables(ctx)
		return err
	})
	return out, err
}

// exec runs CREATE TABLE IF NOT EXISTS or SET TTL, both idempotent.
func (p *pacedSchema) exec(ctx context.Context, ddl string) error {
	return p.do(ctx, oneLine(ddl), func(ctx context.Context) error { return p.schemaDB.exec(ctx, ddl) })
}

func (p *pacedSchema) do(ctx context.Context, what string, op func(context.Context) error) error {
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
			fmt.Fprintf(p.out, "YDB refused a schema operation for its quota (%.60s); trying again in %s\n", what, quotaWait)
			if err := p.sleep(ctx, quotaWait); err != nil {
				return err
			}
		case tries < transientTries && retry.Check(err).MustRetry(true):
			tries++
			if err := p.sleep(ctx, time.Duration(tries)*time.Second); err != nil {
				return err
			}
		default:
			return translate(err)
		}
	}
}

// wait holds the next operation back until it is at most the
// schemaOpsPerMinute-th in the last minute, then counts it.
func (p *pacedSchema) wait(ctx context.Context) error {
	if n := len(p.recent); n >= schemaOpsPerMinute {
		if d := p.recent[n-schemaOpsPerMinute].Add(time.Minute).Sub(p.clock.Now()); d > 0 {
			fmt.Fprintf(p.out, "%d schema operations in the last minute (a serverless database allows 30): waiting %s\n",
				schemaOpsPerMinute, d.Round(time.Second))
			if err := p.sleep(ctx, d); err != nil {
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

// schemaQuotaText is the issue YDB's scheme shard answers an operation past
// the quota with (ydb-platform/ydb, ydb/core/tx/schemeshard; ydb-go-sdk
// v3.127.0 reads the same text, internal/xerrors/operation.go).
const schemaQuotaText = "Request exceeded a limit on the number of schema operations"

// isSchemaQuota reports a refusal for the quota: OVERLOADED, any status
// carrying schemaQuotaText (DDL through the query service comes back
// GENERIC_ERROR with it), or gRPC's ResourceExhausted.
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

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// planner writes down the schema operations instead of running the DDL;
// the reads go to the database it wraps (nil: a new one, no tables), the
// records nowhere.
type planner struct {
	schemaDB
	ops []string
}

func (p *planner) listTables(ctx context.Context) (map[string]bool, error) {
	p.ops = append(p.ops, "list the tables")
	if p.schemaDB == nil {
		return map[string]bool{}, nil
	}
	return p.schemaDB.listTables(ctx)
}

func (p *planner) exec(_ context.Context, ddl string) error {
	p.ops = append(p.ops, oneLine(ddl))
	return nil
}

func (p *planner) record(context.Context, int, string) error { return nil }

func plan(ctx context.Context, s schemaDB, o MigrateOptions) ([]string, error) {
	p := &planner{schemaDB: s}
	_, err := migrate(ctx, p, o)
	return p.ops, err
}
