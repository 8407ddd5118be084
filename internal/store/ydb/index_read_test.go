package ydb

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// YDB stops reading an index after LIMIT rows only when the statement
// sorts by the index's key, in one direction, and filters on nothing the
// index lacks; otherwise it reads every index row the filter matches
// (https://ydb.tech/docs/en/dev/secondary-indexes: "To effectively limit
// the result of a query using the LIMIT command, you must use one-way
// sorting in the ORDER BY command"). A global index's key is its columns
// followed by the table's key.

var (
	reWhere   = regexp.MustCompile(`(?s)\bWHERE\s+(.*?)\s*(?:\bORDER BY\b|\bLIMIT\b|$)`)
	reOrderBy = regexp.MustCompile(`(?s)\bORDER BY\s+(.*?)\s*(?:\bLIMIT\b|$)`)
)

// indexFilters are the columns outside its index a statement may filter
// on, and why: the rows the filter drops are read all the same.
var indexFilters = map[string]map[string]string{
	// A taken entry keeps its next_at (outbox.ApplyClaim), so the lease
	// test filters the range: held entries are read and dropped
	// (docs/database.md, "Cost in request units").
	"selectDueEntries": {"lease_until": "held entries stay in the due range"},
	// A reuse key's rows are one recording's jobs of one payer: a few, of
	// which the live and deleted are read and dropped.
	"selectReusable": {"state": "a key's jobs not yet done are few", "deleted_at": "a deleted job's key is blanked with it"},
}

// checkIndexRead returns why a statement that reads through an index with
// a LIMIT would read more than LIMIT index rows; allowed are the columns
// outside the index it may filter on.
func checkIndexRead(schema map[string]schemaTable, text string, allowed map[string]string) []error {
	body := text
	if i := strings.LastIndex(text, "DECLARE"); i >= 0 {
		body = text[i+strings.Index(text[i:], ";")+1:]
	}
	v := reView.FindStringSubmatch(body)
	if v == nil || !strings.Contains(body, "LIMIT") {
		return nil
	}
	var errs []error
	fail := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	m := reTable.FindStringSubmatch(body)
	if m == nil {
		return []error{fmt.Errorf("no table in %.60q", body)}
	}
	key, ok := schema[m[1]].indexKeys[v[1]]
	if !ok {
		return []error{fmt.Errorf("table %s has no index %s", m[1], v[1])}
	}
	if w := reWhere.FindStringSubmatch(body); w != nil {
		for _, id := range reIdent.FindAllString(reParam.ReplaceAllString(w[1], " "), -1) {
			if keywords[id] || slices.Contains(key, id) {
				continue
			}
			if _, ok := allowed[id]; !ok {
				fail("WHERE tests %s, which index %s lacks (its key is %v): every matching index row is read", id, v[1], key)
			}
		}
	}
	o := reOrderBy.FindStringSubmatch(body)
	if o == nil {
		return append(errs, fmt.Errorf("LIMIT through index %s without ORDER BY its key %v", v[1], key))
	}
	dir := ""
	for i, item := range splitList(o[1]) {
		f := strings.Fields(item)
		d := "ASC"
		if len(f) > 1 {
			d = f[1]
		}
		if i >= len(key) || f[0] != key[i] {
			fail("ORDER BY %s: want index %s's key %v, in order, from its first column", o[1], v[1], key)
			break
		}
		if i == 0 {
			dir = d
		} else if d != dir {
			fail("ORDER BY %s: mixes directions; the index is read one way", o[1])
			break
		}
	}
	return errs
}

func TestIndexReadsFollowTheIndex(t *testing.T) {
	consts := statementConstants(t)
	schema, errs := parseSchema(ddlOf(consts))
	require.Empty(t, errs)
	n := 0
	for name, text := range consts {
		if !isStatement(text) || !strings.Contains(text, " VIEW ") {
			continue
		}
		n++
		t.Run(name, func(t *testing.T) {
			require.Empty(t, checkIndexRead(schema, text, indexFilters[name]))
		})
	}
	require.GreaterOrEqual(t, n, 5, "selectDueJobs, selectNextDue, listJobs, listJobsAfter, selectDueEntries, …")
	for name := range indexFilters {
		require.Contains(t, consts, name, "indexFilters names a statement that is gone")
	}
}

// The check reports the reads that are not bounded by their LIMIT: the due
// selection and the listing as they were written before.
func TestIndexReadCheckCanFail(t *testing.T) {
	consts := statementConstants(t)
	schema, _ := parseSchema(ddlOf(consts))
	cases := []struct{ name, text, want string }{
		{"a filter on a column the index lacks", `DECLARE $states AS List<Utf8>;
DECLARE $now AS Timestamp;
DECLARE $limit AS Uint64;
SELECT id FROM jobs VIEW jobs_due
WHERE state IN $states AND next_run_at <= $now AND (claim_until IS NULL OR claim_until <= $now)
ORDER BY next_run_at, id
LIMIT $limit`, "WHERE tests claim_until"},
		{"a sort that skips the index's first column", `DECLARE $states AS List<Utf8>;
SELECT id FROM jobs VIEW jobs_due WHERE state IN $states ORDER BY next_run_at, id LIMIT 10`, "want index jobs_due's key [state next_run_at id]"},
		{"a listing sorted by part of the key", `DECLARE $owner_id AS Utf8;
DECLARE $limit AS Uint64;
SELECT id FROM jobs VIEW jobs_owner WHERE owner_id = $owner_id ORDER BY id DESC LIMIT $limit`, "want index jobs_owner's key [owner_id id]"},
		{"a sort in two directions", `DECLARE $owner_id AS Utf8;
SELECT id FROM jobs VIEW jobs_owner WHERE owner_id = $owner_id ORDER BY owner_id, id DESC LIMIT 10`, "mixes directions"},
		{"no sort", `DECLARE $state AS Utf8;
SELECT id FROM jobs VIEW jobs_due WHERE state = $state LIMIT 10`, "without ORDER BY"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			errs := checkIndexRead(schema, c.text, nil)
			require.NotEmpty(t, errs)
			require.Contains(t, fmt.Sprint(errs), c.want)
		})
	}
	t.Run("the allowed filter is the only one allowed", func(t *testing.T) {
		text := strings.Replace(consts["selectDueEntries"], "lease_until <= $now", "lease_until <= $now AND attempts > 0", 1)
		errs := checkIndexRead(schema, text, indexFilters["selectDueEntries"])
		require.Contains(t, fmt.Sprint(errs), "WHERE tests attempts")
	})
}
