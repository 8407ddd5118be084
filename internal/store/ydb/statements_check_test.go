package ydb

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"transcriber/internal/apitoken"
	"transcriber/internal/job"
)

var (
	reDeclare = regexp.MustCompile(`(?s)DECLARE \$(\w+) AS (.*?);`)
	reTable   = regexp.MustCompile(`\b(?:FROM|INTO|UPDATE)\s+(\w+)`)
	reView    = regexp.MustCompile(`\bVIEW\s+(\w+)`)
	reParam   = regexp.MustCompile(`\$(\w+)`)
	reIdent   = regexp.MustCompile(`[A-Za-z_]\w*`)
	reCompare = regexp.MustCompile(`(\w+)\s*(?:<=|>=|=|<|>)\s*\$(\w+)`)
	reIn      = regexp.MustCompile(`(\w+)\s+IN\s+\$(\w+)`)
	reValues  = regexp.MustCompile(`INTO\s+\w+\s*\(([^)]*)\)\s*VALUES\s*\(([^)]*)\)`)
	reAsTable = regexp.MustCompile(`(?s)INTO\s+\w+\s*\(([^)]*)\)\s*SELECT\s+(.*?)\s+FROM AS_TABLE\(\$(\w+)\)`)
	reLimit   = regexp.MustCompile(`LIMIT\s+\$(\w+)`)
	reSet     = regexp.MustCompile(`(?s)\bSET\s+(.*?)\s+WHERE\b`)
	reAssign  = regexp.MustCompile(`^(\w+)\s*=\s*\$(\w+)$`)
)

// keywords are the YQL words the statements use that are not names.
var keywords = map[string]bool{
	"SELECT": true, "FROM": true, "WHERE": true, "AND": true, "OR": true, "IN": true, "ORDER": true,
	"BY": true, "LIMIT": true, "VIEW": true, "UPSERT": true, "INSERT": true, "INTO": true, "VALUES": true,
	"UPDATE": true, "SET": true, "DELETE": true, "DESC": true, "ASC": true, "IS": true, "NULL": true,
	"NOT": true, "AS_TABLE": true,
}

// normType is a YQL type written without spaces or quotes, so a DECLARE
// and the SDK's Type().Yql() compare.
func normType(s string) string {
	return strings.NewReplacer(" ", "", "\n", "", "\t", "", "'", "").Replace(s)
}

// checkStatement returns every disagreement between a DML statement, the
// schema, and the parameters the Go code binds for it.
func checkStatement(schema map[string]schemaTable, text string, bound params) []error {
	var errs []error
	fail := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }

	declared := map[string]string{}
	body := text
	for _, m := range reDeclare.FindAllStringSubmatch(text, -1) {
		declared[m[1]] = normType(m[2])
	}
	if i := strings.LastIndex(text, "DECLARE"); i >= 0 {
		body = text[i+strings.Index(text[i:], ";")+1:]
	}

	// Declared and bound agree.
	got := map[string]string{}
	for _, p := range bound {
		got[strings.TrimPrefix(p.name, "$")] = normType(p.value.Type().Yql())
	}
	for name, typ := range declared {
		if g, ok := got[name]; !ok {
			fail("$%s is declared but the Go code binds no such parameter", name)
		} else if !sameType(g, typ) {
			fail("$%s is declared %s but bound as %s", name, typ, g)
		}
	}
	for name := range got {
		if _, ok := declared[name]; !ok {
			fail("the Go code binds $%s, which is not declared", name)
		}
	}

	// The table, its index, and every name the statement uses.
	m := reTable.FindStringSubmatch(body)
	if m == nil {
		return append(errs, fmt.Errorf("no table in %.60q", body))
	}
	tb, ok := schema[m[1]]
	if !ok {
		return append(errs, fmt.Errorf("table %s is not in the schema", m[1]))
	}
	skip := map[string]bool{m[1]: true}
	for _, v := range reView.FindAllStringSubmatch(body, -1) {
		if !tb.indexes[v[1]] {
			fail("table %s has no index %s", m[1], v[1])
		}
		skip[v[1]] = true
	}
	names := reParam.ReplaceAllString(body, " ")
	for _, id := range reIdent.FindAllString(names, -1) {
		if keywords[id] || skip[id] {
			continue
		}
		if _, ok := tb.columns[id]; !ok {
			fail("table %s has no column %s", m[1], id)
		}
	}

	// How each parameter meets a column.
	used := map[string]bool{}
	for _, p := range reParam.FindAllStringSubmatch(body, -1) {
		if _, ok := declared[p[1]]; !ok {
			fail("$%s is used but not declared", p[1])
		}
	}
	col := func(name string) (column, bool) {
		c, ok := tb.columns[name]
		if !ok {
			fail("table %s has no column %s", m[1], name)
		}
		return c, ok
	}
	writes := func(c column, typ string) bool {
		return typ == c.typ || (!c.notNull && typ == "Optional<"+c.typ+">")
	}
	compared := body
	if set := reSet.FindStringSubmatch(body); set != nil {
		// UPDATE … SET column = $column, …: each a write, as VALUES.
		compared = strings.Replace(body, set[0], " WHERE", 1)
		for _, item := range splitList(set[1]) {
			a := reAssign.FindStringSubmatch(item)
			if a == nil {
				fail("SET %q: not column = $parameter", item)
				continue
			}
			used[a[2]] = true
			if a[2] != a[1] {
				fail("column %s is set from $%s: a SET parameter is named after its column", a[1], a[2])
			}
			if cc, ok := col(a[1]); ok && !writes(cc, declared[a[2]]) {
				fail("column %s (%s) is set from $%s (%s)", a[1], cc.typ, a[2], declared[a[2]])
			}
		}
	}
	for _, c := range reCompare.FindAllStringSubmatch(compared, -1) {
		used[c[2]] = true
		if cc, ok := col(c[1]); ok && declared[c[2]] != cc.typ {
			fail("%s is %s but $%s is %s", c[1], cc.typ, c[2], declared[c[2]])
		}
	}
	for _, c := range reIn.FindAllStringSubmatch(body, -1) {
		used[c[2]] = true
		if cc, ok := col(c[1]); ok && declared[c[2]] != "List<"+cc.typ+">" {
			fail("%s IN $%s: want List<%s>, declared %s", c[1], c[2], cc.typ, declared[c[2]])
		}
	}
	for _, v := range reValues.FindAllStringSubmatch(body, -1) {
		cols, vals := splitList(v[1]), splitList(v[2])
		if len(cols) != len(vals) {
			fail("%d columns, %d values", len(cols), len(vals))
			continue
		}
		for i, name := range cols {
			p := strings.TrimPrefix(vals[i], "$")
			used[p] = true
			if p != name {
				// Columns of one type written in the wrong order would pass
				// the type check; the names catch them.
				fail("column %s is written from $%s: a VALUES parameter is named after its column", name, p)
			}
			if cc, ok := col(name); ok && !writes(cc, declared[p]) {
				fail("column %s (%s) is written from $%s (%s)", name, cc.typ, p, declared[p])
			}
		}
	}
	for _, a := range reAsTable.FindAllStringSubmatch(body, -1) {
		used[a[3]] = true
		cols, sel := splitList(a[1]), splitList(a[2])
		if !slices.Equal(cols, sel) {
			fail("INTO (%s) SELECT %s: the lists differ", a[1], a[2])
		}
		fields := structFields(declared[a[3]])
		if fields == nil {
			fail("$%s is %s, not a List<Struct<…>>", a[3], declared[a[3]])
		}
		for name, typ := range fields {
			if cc, ok := col(name); ok && !writes(cc, typ) {
				fail("column %s (%s) is written from field %s (%s)", name, cc.typ, name, typ)
			}
			if !slices.Contains(cols, name) {
				fail("field %s of $%s is not written", name, a[3])
			}
		}
		for _, name := range cols {
			if _, ok := fields[name]; !ok {
				fail("column %s is written but $%s has no field %s", name, a[3], name)
			}
		}
	}
	for _, l := range reLimit.FindAllStringSubmatch(body, -1) {
		used[l[1]] = true
		if declared[l[1]] != "Uint64" {
			fail("LIMIT $%s is %s, want Uint64", l[1], declared[l[1]])
		}
	}
	for name := range declared {
		if !used[name] {
			fail("$%s is declared but meets no column in a way the check knows", name)
		}
	}
	return errs
}

// sameType compares two normalized types; a struct's fields are a set
// (the SDK sorts them by name, and YQL struct types do not depend on the
// order they are written in).
func sameType(a, b string) bool {
	fa, fb := structFields(a), structFields(b)
	if fa != nil || fb != nil {
		return fa != nil && fb != nil && maps.Equal(fa, fb)
	}
	return a == b
}

// structFields reads List<Struct<a:T,b:Optional<U>>> into its fields.
func structFields(typ string) map[string]string {
	inner, ok := strings.CutPrefix(typ, "List<Struct<")
	if !ok || !strings.HasSuffix(inner, ">>") {
		return nil
	}
	inner = strings.TrimSuffix(inner, ">>")
	out := map[string]string{}
	depth, start := 0, 0
	for i := 0; i <= len(inner); i++ {
		if i < len(inner) {
			switch inner[i] {
			case '<':
				depth++
				continue
			case '>':
				depth--
				continue
			case ',':
				if depth > 0 {
					continue
				}
			default:
				continue
			}
		}
		name, typ, _ := strings.Cut(inner[start:i], ":")
		out[name] = typ
		start = i + 1
	}
	return out
}

func fullSegments() []job.Segment {
	return []job.Segment{{Seq: 0, DurationMs: 1000, AudioKey: "a", Container: "OGG_OPUS", OperationID: "op", Done: true}}
}

func t0() time.Time { return time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC) }

func fullToken(at time.Time) apitoken.Token {
	return apitoken.Token{ID: "01jd0m3y8k9q2r5t7v4w6x8z0a", Name: "ci", Hash: strings.Repeat("a", 64), CreatedAt: at,
		CallbackSecret: "whsec_" + strings.Repeat("A", 43) + "="}
}
