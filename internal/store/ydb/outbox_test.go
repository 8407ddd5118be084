package ydb

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/ydb-platform/ydb-go-sdk/v3/table/types"

	"transcriber/internal/outbox"
)

// fullEntry has every field set, as a callback that failed once has it;
// its times are whole milliseconds but not in UTC.
func fullEntry() outbox.Entry {
	msk := time.FixedZone("MSK", 3*3600)
	a := at.Truncate(time.Millisecond).In(msk)
	return outbox.Entry{Kind: outbox.Callback, Key: "01jd0m3y8k9q2r5t7v4w6x8z0a", JobID: "01jd0m3y8k9q2r5t7v4w6x8z0a",
		Payload: `{"url":"https://hooks.example.com/cb"}`, State: outbox.Pending, SentID: 9001, Attempts: 1,
		NextAt: a.Add(time.Minute), LeaseUntil: a.Add(time.Second), FirstAt: a, LastAt: a, LastStatus: 503,
		LastError: "status_not_2xx", CreatedAt: a.Add(-time.Hour), UpdatedAt: a.Add(time.Second)}
}

func entryInUTC(e outbox.Entry) outbox.Entry {
	for _, t := range []*time.Time{&e.NextAt, &e.LeaseUntil, &e.FirstAt, &e.LastAt, &e.CreatedAt, &e.UpdatedAt} {
		if !t.IsZero() {
			*t = t.UTC()
		}
	}
	return e
}

// entryFields is what a statement writes for e: the fields of the one
// element of its $entries parameter.
func entryFields(t *testing.T, e outbox.Entry) map[string]types.Value {
	t.Helper()
	p := entriesParams(e)
	require.Len(t, p, 1)
	require.Equal(t, "$entries", p[0].name)
	items, err := types.ListItems(p[0].value)
	require.NoError(t, err)
	require.Len(t, items, 1)
	fields, err := types.StructFields(items[0])
	require.NoError(t, err)
	return fields
}

func TestEntryParams(t *testing.T) {
	fields := entryFields(t, fullEntry())
	require.Len(t, fields, len(outboxColumnList))
	for name, typ := range map[string]string{"kind": "Utf8", "key": "Utf8", "sent_id": "Int64", "attempts": "Int32",
		"next_at": "Timestamp", "first_at": "Optional<Timestamp>", "last_status": "Int32"} {
		require.Equal(t, typ, fields[name].Type().Yql(), name)
	}
	var got time.Time
	require.NoError(t, types.CastTo(fields["next_at"], &got))
	require.Equal(t, fullEntry().NextAt.UTC(), got.UTC())

	items, err := types.ListItems(entriesParams(fullEntry(), fullEntry())[0].value)
	require.NoError(t, err)
	require.Len(t, items, 2, "one element per entry (ClaimDue writes several)")

	due := dueEntriesParams(outbox.Telegram, at, 7)
	require.Equal(t, `"telegram"u`, due[0].value.Yql())
	require.Equal(t, `"pending"u`, due[1].value.Yql(), "ClaimDue selects pending entries")
	require.Equal(t, "7ul", due[3].value.Yql())
}

func TestEntryRowRoundTrip(t *testing.T) {
	untaken := outbox.Entry{Kind: outbox.Telegram, Key: "7/1/refusal", State: outbox.Pending,
		NextAt: at.Truncate(time.Millisecond), LeaseUntil: at.Truncate(time.Millisecond),
		CreatedAt: at.Truncate(time.Millisecond), UpdatedAt: at.Truncate(time.Millisecond)}
	for name, e := range map[string]outbox.Entry{"every field set": fullEntry(), "never sent, without a job": untaken} {
		t.Run(name, func(t *testing.T) {
			fields := entryFields(t, e)
			var r entryRow
			for _, c := range outboxColumnList {
				v, ok := fields[c.name]
				require.True(t, ok, "column %s is written", c.name)
				require.NoError(t, types.CastTo(v, c.ref(&r)), c.name)
			}
			got := r.finish()
			require.Equal(t, entryInUTC(e), got)
			require.Equal(t, time.UTC, got.NextAt.Location())
		})
	}
}

// The outbox table is in step 1 with the token column callbacks need, and
// has the shape the statements read.
func TestOutboxSchema(t *testing.T) {
	require.Contains(t, steps[0].ddl, createOutbox)
	require.Contains(t, steps[0].ddl, createAPITokens)

	schema, errs := parseSchema(ddlOf(statementConstants(t)))
	require.Empty(t, errs)
	box := schema["outbox"]
	require.Len(t, box.columns, len(outboxColumnList))
	for _, c := range outboxColumnList {
		_, ok := box.columns[c.name]
		require.True(t, ok, "column %s", c.name)
	}
	require.True(t, box.columns["kind"].notNull)
	require.True(t, box.columns["key"].notNull)
	require.True(t, box.indexes["outbox_due"])
	require.Equal(t, column{typ: "Utf8"}, schema["api_tokens"].columns["callback_secret"])
}

// The agreement check catches drift in the outbox's statements as it does
// in the jobs': a column renamed on one side only, a type changed, a
// parameter bound with another type than declared or not bound, a row's
// values written to the wrong columns, a view of an index the table lacks.
func TestOutboxStatementsAgreementCatchesDrift(t *testing.T) {
	consts := statementConstants(t)
	ddl := ddlOf(consts)
	schema, _ := parseSchema(ddl)
	bound := boundParams()
	names := []string{"insertEntries", "upsertEntries", "selectEntry", "selectDueEntries", "selectEntriesInState",
		"selectNextEntry", "deleteKeyRange", "insertToken", "selectTokenByHash"}
	for _, name := range names {
		require.Empty(t, checkStatement(schema, consts[name], bound[name]), "%s as written agrees", name)
	}

	for name, edit := range map[string][2]string{
		"selectDueEntries": {"lease_until <= $now", "lease_untl <= $now"},
		"selectEntry":      {"AND key = $key", "AND ky = $key"},
		"upsertEntries":    {"SELECT kind, key, job_id", "SELECT kind, key, job"},
		"deleteKeyRange":   {"key >= $from", "kee >= $from"},
		"insertToken":      {"revoked_at, callback_secret)", "revoked_at, callback_secrt)"},
	} {
		altered := strings.Replace(consts[name], edit[0], edit[1], 1)
		require.NotEqual(t, consts[name], altered, name)
		require.NotEmpty(t, checkStatement(schema, altered, bound[name]), name)
	}

	renamed := slices.Clone(ddl)
	for i, d := range renamed {
		renamed[i] = strings.Replace(d, "next_at     Timestamp", "due_at      Timestamp", 1)
	}
	altered, errs := parseSchema(renamed)
	require.NotEmpty(t, errs, "the outbox_due index names the old column")
	require.Contains(t, fmt.Sprint(errs), "next_at")
	for _, stmt := range []string{"selectDueEntries", "insertEntries", "upsertEntries", "selectEntry"} {
		require.NotEmpty(t, checkStatement(altered, consts[stmt], bound[stmt]), stmt)
	}

	for old, typ := range map[string]string{
		"attempts    Int32":     "attempts    Uint32",
		"sent_id     Int64":     "sent_id     Uint64",
		"lease_until Timestamp": "lease_until Datetime",
	} {
		retyped := slices.Clone(ddl)
		for i, d := range retyped {
			retyped[i] = strings.Replace(d, old, typ, 1)
		}
		altered, _ := parseSchema(retyped)
		require.NotEmpty(t, checkStatement(altered, consts["upsertEntries"], bound["upsertEntries"]), old)
	}

	p := slices.Clone(bound["selectDueEntries"])
	p[3] = param{"$limit", types.Int64Value(10)}
	require.NotEmpty(t, checkStatement(schema, consts["selectDueEntries"], p), "bound with another type than declared")
	wrong := strings.Replace(consts["upsertEntries"], "last_status: Int32", "last_status: Int64", 1)
	require.NotEmpty(t, checkStatement(schema, wrong, bound["upsertEntries"]), "a struct field of another type")
	require.NotEmpty(t, checkStatement(schema, consts["selectEntry"], bound["selectEntry"][:1]), "declared, never bound")

	swapped := strings.Replace(consts["upsertEntries"], "SELECT kind, key,", "SELECT key, kind,", 1)
	require.NotEqual(t, consts["upsertEntries"], swapped)
	require.NotEmpty(t, checkStatement(schema, swapped, bound["upsertEntries"]), "two Utf8 columns swapped")

	view := strings.Replace(consts["selectDueEntries"], "VIEW outbox_due", "VIEW entries_due", 1)
	require.NotEmpty(t, checkStatement(schema, view, bound["selectDueEntries"]))
}
