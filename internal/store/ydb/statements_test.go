package ydb

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	ydbtypes "github.com/ydb-platform/ydb-go-sdk/v3/table/types"

	"transcriber/internal/outbox"
	"transcriber/internal/quota"
)

// The statements and the schema agree: every column a statement names
// exists in the table the schema steps create, and every parameter is
// declared with the column's type and bound by the Go code with the
// declared type. The statements are read from the statement files
// themselves (statements.go, botstate_statements.go: every *statements.go
// of the package), so a new statement is checked without being listed
// anywhere but in bound.

// boundParams are the parameters the store binds to each DML statement,
// made by the same functions the store calls.
func boundParams() map[string]params {
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	j := fullJob()
	c, e := fullChat(), fullEntry()
	return map[string]params{
		"selectSchemaSteps": nil,
		"insertSchemaStep":  stepParams(1, "tables", now),
		"upsertSchemaTTL":   stepParams(ttlStep, "P90D: jobs.ended_at", now),
		"insertJobs":        jobsParams(j),
		"upsertJobs":        jobsParams(j),
		"selectJob":         jobIDParams(j.ID),
		"updateClaim":       narrowParams(claimWrite),
		"updateRelease":     narrowParams(releaseWrite),
		"updateRenew":       narrowParams(renewWrite),
		"selectDueJobs":     dueParams(utf8("created"), now, 10),
		"selectNextDue":     nextDueParams(utf8("created")),
		"listJobs":          listParams("o", "", 11),
		"listJobsAfter":     listParams("o", j.ID, 11),
		"selectUnfinished":  unfinishedParams("tok:o", 3),
		"selectReusable":    reusableParams("ab", time.Unix(0, 0)),
		"selectSegments":    jobIDsParams([]ydbtypes.Value{utf8(j.ID)}),
		"deleteSegments":    segmentsOfParams(j.ID),
		"upsertSegments":    segmentsParams(j.ID, fullSegments(), now),
		"selectMessageJob":  messageParams(1, 2),
		"insertMessageJob":  keyRowParams(messageParams(1, 2), j.ID, now),
		"upsertMessageJob":  keyRowParams(messageParams(1, 2), j.ID, now),
		"deleteMessageJob":  withJobID(messageParams(1, 2), j.ID),
		"selectKeyJob":      keyParams("o", "k"),
		"insertKeyJob":      keyRowParams(keyParams("o", "k"), j.ID, now),
		"upsertKeyJob":      keyRowParams(keyParams("o", "k"), j.ID, now),
		"deleteKeyJob":      withJobID(keyParams("o", "k"), j.ID),
		"insertToken":       tokenParams(fullToken(t0())),
		"selectTokenByHash": tokenHashParams("h"),
		"selectTokenByID":   tokenIDParams("i"),
		"selectTokens":      nil,
		"revokeToken":       revokeParams("h", now),

		"selectChat": chatIDParams(c.ID),
		"upsertChat": chatParams(c),
		"deleteChat": chatIDParams(c.ID),

		"insertEntries":        entriesParams(e),
		"upsertEntries":        entriesParams(e, e),
		"selectEntry":          entryParams(e.Kind, e.Key),
		"selectDueEntries":     dueEntriesParams(e.Kind, now, 10),
		"selectEntriesInState": inStateParams(e.Kind, outbox.Failed, now, 11),
		"selectNextEntry":      nextEntryParams(e.Kind),
		"deleteKeyRange":       keyRangeParams(e.Kind, "1/", "10"),

		"selectCounter":  counterKeyParams("api:owner", now),
		"selectCounters": countersKeysParams([]string{"api:owner#0", "api:owner#1"}, now),
		"upsertCounter":  counterParams("api:owner", now, quota.Row{Used: 1}),

		"selectStateEntries":  rangeParams("created", time.Time{}, 11),
		"selectLatestInState": rangeParams("dead", now, 11),
	}
}

// statementFiles are the files that hold the store's statements.
func statementFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*statements.go")
	require.NoError(t, err)
	require.Contains(t, files, "statements.go")
	require.Contains(t, files, "botstate_statements.go")
	return files
}

// statementConstants evaluates every string constant of the statement
// files.
func statementConstants(t *testing.T) map[string]string {
	t.Helper()
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range statementFiles(t) {
		f, err := parser.ParseFile(fset, name, nil, 0)
		require.NoError(t, err)
		files = append(files, f)
	}
	info := &types.Info{Defs: map[*ast.Ident]types.Object{}}
	_, err := (&types.Config{Importer: importer.Default()}).Check("ydb", fset, files, info)
	require.NoError(t, err)
	out := map[string]string{}
	for id, obj := range info.Defs {
		if c, ok := obj.(*types.Const); ok && c.Val().Kind() == constant.String {
			out[id.Name] = constant.StringVal(c.Val())
		}
	}
	return out
}

func TestStatementsAgreeWithSchema(t *testing.T) {
	consts := statementConstants(t)
	schema, errs := parseSchema(ddlOf(consts))
	require.Empty(t, errs)
	bound := boundParams()
	for name, text := range consts {
		if strings.HasPrefix(name, "create") || !isStatement(text) {
			continue
		}
		t.Run(name, func(t *testing.T) {
			p, ok := bound[name]
			require.True(t, ok, "statement %s has no entry in boundParams", name)
			require.Empty(t, checkStatement(schema, text, p))
		})
	}
	for name := range bound {
		require.Contains(t, consts, name, "boundParams names a statement that is gone")
	}
}

// The check fails when a column is renamed on one side only, or a
// parameter is bound with another type than declared.
func TestStatementsAgreementCatchesDrift(t *testing.T) {
	consts := statementConstants(t)
	ddl := ddlOf(consts)
	schema, _ := parseSchema(ddl)

	t.Run("a statement names a column the schema lacks", func(t *testing.T) {
		altered := strings.Replace(consts["selectDueJobs"], "next_run_at <= $now", "next_rn_at <= $now", 1)
		require.NotEqual(t, consts["selectDueJobs"], altered)
		errs := checkStatement(schema, altered, boundParams()["selectDueJobs"])
		require.NotEmpty(t, errs)
		require.Contains(t, fmt.Sprint(errs), "next_rn_at")
	})
	t.Run("the schema renames a column the statements use", func(t *testing.T) {
		renamed := slices.Clone(ddl)
		for i, d := range renamed {
			renamed[i] = strings.Replace(d, "next_run_at      Timestamp", "run_at           Timestamp", 1)
		}
		altered, errs := parseSchema(renamed)
		require.NotEmpty(t, errs, "the jobs_due index names the old column")
		for _, stmt := range []string{"selectDueJobs", "upsertJobs", "selectNextDue"} {
			require.NotEmpty(t, checkStatement(altered, consts[stmt], boundParams()[stmt]), stmt)
		}
	})
	t.Run("a column's type changes in the schema", func(t *testing.T) {
		retyped := slices.Clone(ddl)
		for i, d := range retyped {
			retyped[i] = strings.Replace(d, "attempts         Int32", "attempts         Uint32", 1)
		}
		altered, _ := parseSchema(retyped)
		require.NotEmpty(t, checkStatement(altered, consts["upsertJobs"], boundParams()["upsertJobs"]))
	})
	t.Run("the Go code binds another type than declared", func(t *testing.T) {
		p := slices.Clone(boundParams()["selectDueJobs"])
		p[2] = param{"$limit", ydbtypes.Int64Value(10)}
		require.NotEmpty(t, checkStatement(schema, consts["selectDueJobs"], p))
	})
	t.Run("an UPDATE sets a column from another's parameter, or of another type", func(t *testing.T) {
		swapped := strings.Replace(consts["updateRenew"], "claim_until = $claim_until", "claim_until = $next_run_at", 1)
		require.NotEqual(t, consts["updateRenew"], swapped)
		require.Contains(t, fmt.Sprint(checkStatement(schema, swapped, boundParams()["updateRenew"])), "named after its column")
		p := slices.Clone(boundParams()["updateRenew"])
		p[2] = param{"$next_run_at", ydbtypes.Int64Value(1)}
		retyped := strings.Replace(consts["updateRenew"], "$next_run_at AS Timestamp", "$next_run_at AS Int64", 1)
		require.Contains(t, fmt.Sprint(checkStatement(schema, retyped, p)), "is set from $next_run_at (Int64)")
	})
	t.Run("a parameter is declared but never bound", func(t *testing.T) {
		require.NotEmpty(t, checkStatement(schema, consts["selectJob"], nil))
	})
}

// ddlOf is the schema's DDL: the CREATE TABLE statements.
func ddlOf(consts map[string]string) []string {
	var creates []string
	for name, text := range consts {
		if strings.HasPrefix(name, "create") {
			creates = append(creates, text)
		}
	}
	slices.Sort(creates)
	return creates
}

func isStatement(text string) bool {
	return regexp.MustCompile(`\b(SELECT|INSERT|UPSERT|UPDATE|DELETE)\b`).MatchString(text)
}

// column is a column of the schema.
type column struct {
	typ     string // e.g. Utf8
	notNull bool
}

type schemaTable struct {
	columns map[string]column
	indexes map[string]bool
	// indexKeys is each index's key: its columns, then the table's key
	// columns it lacks (a global index's key ends with the table's key).
	indexKeys map[string][]string
	key       []string // the primary key
}

var (
	reCreate = regexp.MustCompile(`CREATE TABLE (\w+) \(`)
	reColumn = regexp.MustCompile(`^\s*(\w+)\s+(\w+)(\s+NOT NULL)?,?$`)
	reIndex  = regexp.MustCompile(`INDEX (\w+) GLOBAL SYNC ON \(([^)]*)\)`)
	reKey    = regexp.MustCompile(`PRIMARY KEY \(([^)]*)\)`)
)

// parseSchema reads CREATE TABLE statements; it reports an index or key
// naming a column the table lacks.
func parseSchema(ddl []string) (map[string]schemaTable, []error) {
	out := map[string]schemaTable{}
	var errs []error
	for _, d := range ddl {
		m := reCreate.FindStringSubmatch(d)
		if m == nil {
			errs = append(errs, fmt.Errorf("not a CREATE TABLE: %.40q", d))
			continue
		}
		tb := schemaTable{columns: map[string]column{}, indexes: map[string]bool{}, indexKeys: map[string][]string{}}
		for _, line := range strings.Split(d, "\n")[1:] {
			if c := reColumn.FindStringSubmatch(line); c != nil && c[1] != "INDEX" && c[1] != "PRIMARY" {
				tb.columns[c[1]] = column{typ: c[2], notNull: c[3] != ""}
			}
		}
		for _, k := range reKey.FindAllStringSubmatch(d, -1) {
			errs = append(errs, tb.check(m[1], "primary key", k[1])...)
			tb.key = splitList(k[1])
		}
		for _, ix := range reIndex.FindAllStringSubmatch(d, -1) {
			errs = append(errs, tb.addIndex(m[1], ix[1], ix[2])...)
		}
		out[m[1]] = tb
	}
	return out, errs
}

// addIndex records index name on columns list: its key is the columns,
// then the table's key columns it lacks.
func (tb schemaTable) addIndex(table, name, list string) []error {
	tb.indexes[name] = true
	errs := tb.check(table, "index "+name, list)
	key := splitList(list)
	for _, c := range tb.key {
		if !slices.Contains(key, c) {
			key = append(key, c)
		}
	}
	tb.indexKeys[name] = key
	return errs
}

func (tb schemaTable) check(name, what, list string) []error {
	var errs []error
	for _, c := range splitList(list) {
		if _, ok := tb.columns[c]; !ok {
			errs = append(errs, fmt.Errorf("table %s: %s names column %s, which it lacks", name, what, c))
		}
	}
	return errs
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// A global index's key ends with the table's key: selectUnfinished goes
// through jobs_unfinished by (charged_to, ended_at, id). An index naming a
// column the table lacks is an error.
func TestIndexKeysEndWithTheTableKey(t *testing.T) {
	schema, errs := parseSchema(ddlOf(statementConstants(t)))
	require.Empty(t, errs)
	jobs := schema["jobs"]
	require.Equal(t, []string{"charged_to", "ended_at", "id"}, jobs.indexKeys["jobs_unfinished"])
	require.Equal(t, column{typ: "Utf8"}, jobs.columns["charged_to"])

	_, errs = parseSchema([]string{strings.Replace(createJobs, "(reuse_key, ended_at)", "(no_such_column)", 1)})
	require.NotEmpty(t, errs, "an index naming a column the table lacks")
}
