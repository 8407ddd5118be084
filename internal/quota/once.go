package quota

import (
	"slices"
	"strings"
)

// Changes are idempotent: YDB's SDK runs a transaction again when its
// commit's fate is unknown, which would count a reservation twice. So a
// row keeps the ids of its last changes (Row.Ops), each made once per call
// before the transaction, and a run that finds its id writes nothing.

// MaxOps: a rerun comes within seconds, and a row takes a few changes a
// second at the busiest, so 16 ids (26 bytes each, under 1 KB) suffice.
const MaxOps = 16

// Row is a counter as a store keeps it: its total and its last changes'
// ids, oldest first.
type Row struct {
	Used int64
	Ops  []string
}

// applied reports whether the change op wrote the row already.
func (r Row) applied(op string) bool { return op != "" && slices.Contains(r.Ops, op) }

// after is r with total used and op its last change, within MaxOps.
func (r Row) after(used int64, op string) Row {
	ops := append(append([]string(nil), r.Ops...), op)
	if len(ops) > MaxOps {
		ops = ops[len(ops)-MaxOps:]
	}
	return Row{Used: used, Ops: ops}
}

// ReserveOnce is Reserve's rule for change op on row cur: the row to write
// (if write), the total and whether the reservation holds (it stands if op
// wrote it already).
func ReserveOnce(cur Row, op string, amount, limit int64) (next Row, used int64, ok, write bool) {
	switch {
	case cur.applied(op):
		return cur, cur.Used, true, false
	case !Fits(cur.Used, amount, limit):
		return cur, cur.Used, false, false
	}
	next = cur.after(cur.Used+amount, op)
	return next, next.Used, true, true
}

// ReleaseOnce is Release's rule for change op on row cur (found: it exists).
func ReleaseOnce(cur Row, found bool, op string, amount int64) (next Row, write bool) {
	if !found || cur.applied(op) || cur.Used == 0 {
		return cur, false
	}
	return cur.after(Less(cur.Used, amount), op), true
}

// EncodeOps and DecodeOps are the column a store keeps Row.Ops in.
func EncodeOps(ops []string) string { return strings.Join(ops, " ") }

func DecodeOps(s string) []string { return strings.Fields(s) }
