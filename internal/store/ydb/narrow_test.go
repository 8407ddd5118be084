package ydb

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/ydb-platform/ydb-go-sdk/v3/query"
	"github.com/ydb-platform/ydb-go-sdk/v3/table/types"

	"transcriber/internal/clock/clocktest"
	"transcriber/internal/errs"
	"transcriber/internal/job"
	"transcriber/internal/quota"
)

// narrowParams are what w binds, for the statements' agreement check.
func narrowParams(w narrowWrite) params { return w.bind(fullJob()) }

var narrowWrites = map[string]narrowWrite{"updateClaim": claimWrite, "updateRelease": releaseWrite, "updateRenew": renewWrite}

var reNarrow = regexp.MustCompile(`(?s)^UPDATE jobs SET (.*?)\s+WHERE id = \$id$`)

// Each narrow write is one UPDATE of the jobs table by its key that sets
// exactly the columns narrow.go lists for it, each from the parameter
// named after it: no other table, no other row, no other column.
func TestNarrowWritesSetOnlyTheirColumns(t *testing.T) {
	consts := statementConstants(t)
	for name, w := range narrowWrites {
		t.Run(name, func(t *testing.T) {
			require.Equal(t, consts[name], w.stmt)
			body := w.stmt[strings.LastIndex(w.stmt, "DECLARE"):]
			body = strings.TrimSpace(body[strings.Index(body, ";")+1:])
			m := reNarrow.FindStringSubmatch(body)
			require.NotNil(t, m, "UPDATE jobs SET … WHERE id = $id: %q", body)
			var set []string
			for _, item := range splitList(m[1]) {
				a := reAssign.FindStringSubmatch(item)
				require.NotNil(t, a, item)
				require.Equal(t, a[1], a[2], "set from its own parameter")
				set = append(set, a[1])
			}
			require.Equal(t, w.columns, set)
			require.NotContains(t, w.stmt, "segments")
		})
	}
}

// The columns each rule changes, over the cases it has, are exactly the
// columns its write sets: none it changes is lost, and none is set for
// nothing.
func TestNarrowWritesCoverTheirRules(t *testing.T) {
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	free := fullJob()
	free.State, free.ClaimID, free.ClaimUntil, free.Attempts = job.Created, "", time.Time{}, 1
	free.DeletedAt, free.EndedAt = time.Time{}, time.Time{}
	held := free
	held.ClaimID, held.ClaimUntil, held.NextRunAt = "01jd0m3y8k9q2r5t7v4w6x8z0c", now.Add(time.Minute), now.Add(time.Minute)
	c := held.Claim()

	changed := map[string][]string{}
	note := func(name string, cur, next job.Job, err error) {
		t.Helper()
		require.NoError(t, err, name)
		for _, col := range changedColumns(cur, next) {
			if !slices.Contains(changed[name], col) {
				changed[name] = append(changed[name], col)
			}
		}
		_, write, err := narrowWrites[name].params(job.Stored(cur), next)
		require.NoError(t, err, "%s: its write takes the change", name)
		require.True(t, write, name)
	}
	next, err := job.ApplyClaim(free, job.Ingest, now)
	note("updateClaim", free, next, err)
	for _, f := range []job.Failure{{Code: "x", Message: "y"}, {Code: "x", Message: "y", Uncounted: true}} {
		next, err = job.ApplyRelease(held, c, time.Second, f, now)
		note("updateRelease", held, next, err)
	}
	next, err = job.ApplyRenew(held, c, job.Lease, now)
	note("updateRenew", held, next, err)

	for name, w := range narrowWrites {
		require.ElementsMatch(t, w.columns, changed[name], name)
	}
}

// A change the write would lose is refused (a bug, not a conflict), and
// a change of nothing (a run again after its own commit) writes nothing.
func TestNarrowWriteRefusesAWiderChange(t *testing.T) {
	cur := job.Stored(fullJob())
	next := cur
	next.ClaimUntil = next.ClaimUntil.Add(time.Minute)
	next.NextRunAt = next.ClaimUntil
	_, write, err := renewWrite.params(cur, next)
	require.NoError(t, err)
	require.True(t, write)

	for name, wider := range map[string]func(j *job.Job){
		"a column outside it": func(j *job.Job) { j.State = job.Done },
		"the segments":        func(j *job.Job) { j.Segments = fullSegments() },
		"the id":              func(j *job.Job) { j.ID = "01jd0m3y8k9q2r5t7v4w6x8z0d" },
	} {
		n := next
		wider(&n)
		_, _, err := renewWrite.params(cur, n)
		require.ErrorIs(t, err, errWideChange, name)
		require.Equal(t, errs.Internal, errs.KindOf(err), name)
	}

	_, write, err = renewWrite.params(cur, cur)
	require.NoError(t, err)
	require.False(t, write, "nothing changed: nothing written")
}

// stmtTx is a transaction that records the statements sent to it and
// answers each query with the rows answers gives for its text.
type stmtTx struct {
	query.TxActor
	sent      []string
	answers   map[string][]map[string]types.Value
	committed bool
}

func (tx *stmtTx) ID() string { return "tx" }

func (tx *stmtTx) Exec(_ context.Context, q string, _ ...query.ExecuteOption) error {
	tx.sent = append(tx.sent, q)
	return nil
}

func (tx *stmtTx) QueryResultSet(_ context.Context, q string, _ ...query.ExecuteOption) (query.ClosableResultSet, error) {
	tx.sent = append(tx.sent, q)
	return &answerRows{rows: tx.answers[q]}, nil
}

func (tx *stmtTx) CommitTx(context.Context) error {
	tx.committed = true
	return nil
}

// answerRows is a result set of rows given as columns' values.
type answerRows struct {
	query.ClosableResultSet
	rows []map[string]types.Value
}

func (r *answerRows) NextRow(context.Context) (query.Row, error) {
	if len(r.rows) == 0 {
		return nil, io.EOF
	}
	row := r.rows[0]
	r.rows = r.rows[1:]
	return answerRow{cols: row}, nil
}

func (r *answerRows) Close(context.Context) error { return nil }

// answerRow scans as the SDK's row does: types.CastTo, the function its
// named scanner calls.
type answerRow struct {
	query.Row
	cols map[string]types.Value
}

func (r answerRow) ScanNamed(dst ...query.NamedDestination) error {
	for _, d := range dst {
		v, ok := r.cols[d.Name()]
		if !ok {
			return fmt.Errorf("no column %s", d.Name())
		}
		if err := types.CastTo(v, d.Ref()); err != nil {
			return fmt.Errorf("column %s: %w", d.Name(), err)
		}
	}
	return nil
}

// stmtRunner runs each transaction once, on tx.
type stmtRunner struct {
	tx   *stmtTx
	opts [][]query.DoTxOption
}

func (r *stmtRunner) DoTx(ctx context.Context, op query.TxOperation, opts ...query.DoTxOption) error {
	r.opts = append(r.opts, opts)
	if err := op(ctx, r.tx); err != nil {
		return err
	}
	return r.tx.CommitTx(ctx)
}

// jobAnswer is j's row as selectJob returns it, and its segments' rows.
func jobAnswer(j job.Job) map[string][]map[string]types.Value {
	row := map[string]types.Value{}
	for _, c := range jobColumnList {
		row[c.name] = c.value(&j)
	}
	var segs []map[string]types.Value
	if len(j.Segments) > 0 {
		items, _ := types.ListItems(segmentsParams(j.ID, j.Segments, j.EndedAt)[0].value)
		for _, it := range items {
			fields, _ := types.StructFields(it)
			segs = append(segs, fields)
		}
	}
	return map[string][]map[string]types.Value{selectJob: {row}, selectSegments: segs}
}

func statementNames(t *testing.T, sent []string) []string {
	t.Helper()
	byText := map[string]string{}
	for name, text := range statementConstants(t) {
		byText[text] = name
	}
	out := make([]string, len(sent))
	for i, q := range sent {
		out[i] = byText[q]
		require.NotEmpty(t, out[i], "a statement of the statement files: %q", q)
	}
	return out
}

// Claim, Release and Renew read the job's row and write the claim's
// columns with their UPDATE: never the whole row (upsertJobs), never the
// segments; only a claim reads them, for its answer, once it is taken.
func TestClaimCallsWriteTheClaimOnly(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	j := job.Stored(fullJob())
	j.State, j.DeletedAt, j.EndedAt = job.Converted, time.Time{}, time.Time{}
	j.Segments = fullSegments()
	held := j
	held.ClaimUntil, held.NextRunAt = now.Add(time.Minute), now.Add(time.Minute)
	free := j
	free.ClaimID, free.ClaimUntil = "", time.Time{}

	run := func(cur job.Job, call func(st *JobStore) error) ([]string, error) {
		tx := &stmtTx{answers: jobAnswer(cur)}
		st := NewJobStore(&DB{txs: &stmtRunner{tx: tx}, clock: clocktest.NewFake(now)})
		err := call(st)
		if err == nil {
			require.True(t, tx.committed)
		}
		return statementNames(t, tx.sent), err
	}

	var renewed job.Claim
	sent, err := run(held, func(st *JobStore) (err error) {
		renewed, err = st.Renew(ctx, held.Claim(), job.Ingest)
		return err
	})
	require.NoError(t, err)
	require.Equal(t, []string{"selectJob", "updateRenew"}, sent)
	require.Equal(t, now.Add(job.Lease), renewed.Until)

	var released job.Job
	sent, err = run(held, func(st *JobStore) (err error) {
		released, err = st.Release(ctx, held.Claim(), time.Second, job.Failure{Code: "x"})
		return err
	})
	require.NoError(t, err)
	require.Equal(t, []string{"selectJob", "updateRelease"}, sent)
	require.Empty(t, released.ClaimID)
	require.Nil(t, released.Segments)

	var claimed job.Job
	sent, err = run(free, func(st *JobStore) (err error) {
		claimed, err = st.Claim(ctx, free.ID, job.Ingest)
		return err
	})
	require.NoError(t, err)
	require.Equal(t, []string{"selectJob", "selectSegments", "updateClaim"}, sent)
	require.NotEmpty(t, claimed.ClaimID)
	require.Equal(t, free.Segments, claimed.Segments, "the claim answers with the segments")

	sent, err = run(held, func(st *JobStore) error {
		_, err := st.Claim(ctx, held.ID, job.Ingest)
		return err
	})
	require.ErrorIs(t, err, job.ErrNotClaimable)
	require.Equal(t, []string{"selectJob"}, sent, "a refused claim reads no segments and writes nothing")

	sent, err = run(held, func(st *JobStore) error {
		_, err := st.Save(ctx, held, job.Next{})
		return err
	})
	require.NoError(t, err)
	require.Contains(t, sent, "upsertJobs", "the check can fail: a save writes the whole row")
}

// Every transaction begins lazily, with its first statement.
func TestEveryTransactionBeginsLazily(t *testing.T) {
	ctx := context.Background()
	r := &recordingRunner{}
	db := &DB{txs: r, clock: clocktest.NewFake(time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC))}
	writes, reads := storeCalls(db)
	for _, calls := range []map[string]func(context.Context) error{writes, reads} {
		for _, name := range sortedNames(calls) {
			r.calls = nil
			require.ErrorIs(t, calls[name](ctx), errNotRun, name)
			require.Len(t, r.calls, 1, name)
			require.True(t, hasOption(r.calls[0], query.WithLazyTx(true)), "%s begins lazily", name)
		}
	}
	r.calls = nil
	require.ErrorIs(t, db.txs.DoTx(ctx, nil), errNotRun)
	require.False(t, hasOption(r.calls[0], query.WithLazyTx(true)), "the check can fail")
}

// A spread counter's total is one statement here: selectCounters with
// every row's key, where a read a row would be nine.
func TestSpreadTotalIsOneStatement(t *testing.T) {
	ctx := context.Background()
	w := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	tx := &stmtTx{answers: map[string][]map[string]types.Value{selectCounters: {
		{"counter": utf8("hot#0"), "used": i64(2)},
		{"counter": utf8("hot#5"), "used": i64(3)},
	}}}
	c := quota.Spread(NewCounters(&DB{txs: &stmtRunner{tx: tx}, clock: clocktest.NewFake(w)}), quota.DefaultShards, []string{"hot"})
	n, err := c.Used(ctx, "hot", w)
	require.NoError(t, err)
	require.Equal(t, int64(5), n)
	require.Equal(t, []string{"selectCounters"}, statementNames(t, tx.sent))

	p := countersKeysParams([]string{"hot#0", "hot#1", "hot#0"}, w)
	items, err := types.ListItems(p[0].value)
	require.NoError(t, err)
	require.Len(t, items, 2, "each key once")
}
