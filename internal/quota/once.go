package quota

import (
	"slices"
	"strings"
)

// A store's change of a counter may run twice for one call: YDB's SDK
// runs an idempotent transaction again after an error that leaves its
// commit's fate unknown (the connection lost once the commit was sent),
// and a reservation run again would count twice. So a store keeps, with
// each counter, the ids of the last changes that wrote it (Row.Ops), and
// a change names itself by an id the store makes once per call (ident.New,
// before the transaction its SDK may run again): a run that
// finds its id among them knows an earlier run committed, and writes
// nothing more.

// MaxOps is how many of a counter's last changes its row remembers. A run
// again comes within the SDK's backoff, seconds at most; a spread counter
// (Spread) takes a few changes a second per row at the busiest (the
// synchronous quota's 20 a second over its rows), so 16 remembers
// several seconds of them. Ids are 26 bytes: the row stays under 1 KB,
// one write unit.
const MaxOps = 16

// Row is a counter as a store keeps it: its total and the ids of the last
// changes that wrote it, oldest first.
type Row struct {
	Used int64
	Ops  []string
}

// applied reports whether the change op wrote the row already.
func (r Row) applied(op string) bool { return op != "" && slices.Contains(r.Ops, op) }

// after is r with used as its total and op as its last change, the
// oldest forgotten beyond MaxOps.
func (r Row) after(used int64, op string) Row {
	ops := append(append([]string(nil), r.Ops...), op)
	if len(ops) > MaxOps {
		ops = ops[len(ops)-MaxOps:]
	}
	return Row{Used: used, Ops: ops}
}

// ReserveOnce is Reserve's rule for the change op on the row cur: when op
// wrote it already, the reservation stands and nothing is written;
// otherwise amount is added if the total stays within limit (Fits). It
// returns the row to write (write false: none), the total and whether the
// reservation holds.
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

// ReleaseOnce is Release's rule for the change op on the row cur (found
// false when there is none): amount less, never below 0, unless op wrote
// it already. A counter that does not exist stays absent.
func ReleaseOnce(cur Row, found bool, op string, amount int64) (next Row, write bool) {
	if !found || cur.applied(op) || cur.Used == 0 {
		return cur, false
	}
	return cur.after(Less(cur.Used, amount), op), true
}

// EncodeOps is the column a store keeps Row.Ops in: the ids, oldest
// first, separated by spaces; DecodeOps reads it.
func EncodeOps(ops []string) string { return strings.Join(ops, " ") }

// DecodeOps reads EncodeOps's column; "" is none.
func DecodeOps(s string) []string { return strings.Fields(s) }
