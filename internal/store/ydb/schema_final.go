package ydb

import (
	"fmt"
	"regexp"
	"strings"
	"time"
)

// finalTable is a table as the steps leave it: one CREATE TABLE.
type finalTable struct {
	name string
	ddl  string
}

// finalTables are the tables a new database gets: each CREATE TABLE step
// with the columns and indexes of the later steps that add to it written
// into it, and, for an expiring table, its TTL (WITH, as counters has
// its own: https://ydb.tech/docs/en/yql/reference/syntax/create_table/with),
// in the order the steps make them. One schema operation a table, where
// applying the steps one by one takes one for each step and one for each
// table an ADD step describes first. TestFinalTablesAreTheSteps holds
// them equal to the steps applied one by one.
func finalTables(retention time.Duration) ([]finalTable, error) {
	var out []finalTable
	at := map[string]int{}
	for _, st := range steps {
		if tbl, ok := st.creates(); ok {
			at[tbl] = len(out)
			out = append(out, finalTable{name: tbl, ddl: st.ddl})
			continue
		}
		tbl, _, isColumn := st.addsColumn()
		itbl, _, isIndex := st.addsIndex()
		if isIndex {
			tbl = itbl
		}
		i, ok := at[tbl]
		switch {
		case !isColumn && !isIndex:
			return nil, fmt.Errorf("schema step %s: no rule to write it into its table", st.name)
		case !ok:
			return nil, fmt.Errorf("schema step %s: table %s is not made by an earlier step", st.name, tbl)
		case isColumn:
			def := strings.TrimPrefix(st.ddl, "ALTER TABLE "+tbl+" ADD COLUMN ")
			out[i].ddl = insertLine(out[i].ddl, def, "\tINDEX ", "\tPRIMARY KEY")
		default:
			def := strings.TrimPrefix(st.ddl, "ALTER TABLE "+tbl+" ADD ")
			out[i].ddl = insertLine(out[i].ddl, def, "\tPRIMARY KEY")
		}
	}
	for _, e := range expiring {
		i, ok := at[e.table]
		if !ok {
			return nil, fmt.Errorf("expiring table %s is not made by a step", e.table)
		}
		if strings.Contains(out[i].ddl, "\nWITH (") {
			return nil, fmt.Errorf("table %s has settings of its own and a TTL to add", e.table)
		}
		c, err := ttlClause(e.column, retention)
		if err != nil {
			return nil, err
		}
		out[i].ddl += "\nWITH (" + c + ")"
	}
	return out, nil
}

// insertLine writes def as a line of the CREATE TABLE ddl, before the
// first line that starts with one of before.
func insertLine(ddl, def string, before ...string) string {
	lines := strings.Split(ddl, "\n")
	for i, l := range lines {
		for _, b := range before {
			if strings.HasPrefix(l, b) {
				return strings.Join(append(lines[:i:i], append([]string{"\t" + def + ","}, lines[i:]...)...), "\n")
			}
		}
	}
	return ddl
}

// tableShape is what Migrate needs to know of a table: its columns, and
// its indexes with whether each is built (ready).
type tableShape struct {
	columns map[string]bool
	indexes map[string]bool
}

var (
	reShapeColumn = regexp.MustCompile(`^\s*(\w+)\s+\w+(?:\s+NOT NULL)?,?$`)
	reShapeIndex  = regexp.MustCompile(`^\s*INDEX (\w+) GLOBAL`)
)

// shapeOf reads the columns and indexes of a CREATE TABLE statement; its
// indexes are built, since a table is made with its indexes.
func shapeOf(ddl string) tableShape {
	sh := tableShape{columns: map[string]bool{}, indexes: map[string]bool{}}
	for _, l := range strings.Split(ddl, "\n")[1:] {
		if m := reShapeIndex.FindStringSubmatch(l); m != nil {
			sh.indexes[m[1]] = true
			continue
		}
		if m := reShapeColumn.FindStringSubmatch(l); m != nil && m[1] != "PRIMARY" {
			sh.columns[m[1]] = true
		}
	}
	return sh
}
