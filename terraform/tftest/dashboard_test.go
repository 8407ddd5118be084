package tftest

import (
	"fmt"
	"testing"

	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/stretchr/testify/require"
)

// dashboardLists are the locals that list what the dashboard charts, by
// the resource type each must cover.
var dashboardLists = map[string]string{
	"yandex_function":         "dashboard_functions",
	"yandex_function_trigger": "dashboard_triggers",
	"yandex_message_queue":    "dashboard_dlqs",
}

// checkDashboard: the one dashboard charts every function, trigger and
// dead-letter queue the configuration makes, and draws the database's
// throttling limit beside its request units, so a function or a queue
// added later is not left out of it unnoticed.
func checkDashboard(c *config) []string {
	dashboards := c.resources("yandex_monitoring_dashboard")
	if len(dashboards) != 1 {
		return []string{fmt.Sprintf("want one yandex_monitoring_dashboard, found %d", len(dashboards))}
	}
	var dash block
	for _, d := range dashboards {
		dash = d
	}
	var bad []string
	for _, typ := range sortedKeys(dashboardLists) {
		local := dashboardLists[typ]
		a := c.locals[local]
		if a == nil {
			bad = append(bad, fmt.Sprintf("local.%s is missing: it lists the %s resources the dashboard charts", local, typ))
			continue
		}
		for _, name := range sortedKeys(c.resources(typ)) {
			if !refersTo(a.Expr, typ+"."+name) {
				bad = append(bad, fmt.Sprintf("the dashboard does not chart %s.%s (local.%s)", typ, name, local))
			}
		}
		if !bodyRefersTo(dash.Body, "local."+local) {
			bad = append(bad, fmt.Sprintf("the dashboard does not use local.%s", local))
		}
	}
	if !bodyRefersTo(dash.Body, "local.ydb_ru_per_second") {
		bad = append(bad, "the dashboard does not draw the database's throttling limit (local.ydb_ru_per_second)")
	}
	return bad
}

// bodyRefersTo reports whether an expression anywhere in b, nested blocks
// and dynamic blocks' for_each included, refers to addr.
func bodyRefersTo(b *hclsyntax.Body, addr string) bool {
	for _, a := range b.Attributes {
		if refersTo(a.Expr, addr) {
			return true
		}
	}
	for _, x := range b.Blocks {
		if bodyRefersTo(x.Body, addr) {
			return true
		}
	}
	return false
}

func TestDashboardChartsEverything(t *testing.T) {
	_, c := load(t)
	require.Empty(t, checkDashboard(c))
}

func TestDashboardCheckCanFail(t *testing.T) {
	src, _ := load(t)
	t.Run("a function left out", func(t *testing.T) {
		c := mutate(t, src, "monitoring.tf", "    poll     = yandex_function.poll.id\n", "")
		requireReported(t, checkDashboard(c), "the dashboard does not chart yandex_function.poll (local.dashboard_functions)")
	})
	t.Run("a dead-letter queue left out", func(t *testing.T) {
		c := mutate(t, src, "monitoring.tf", "    ingest = yandex_message_queue.ingest_dlq.name\n", "")
		requireReported(t, checkDashboard(c), "the dashboard does not chart yandex_message_queue.ingest_dlq")
	})
	t.Run("a list no chart reads", func(t *testing.T) {
		c := mutate(t, src, "monitoring.tf", "for_each = local.dashboard_dlqs", "for_each = {}")
		requireReported(t, checkDashboard(c), "the dashboard does not use local.dashboard_dlqs")
	})
	t.Run("no throttling limit", func(t *testing.T) {
		c := mutate(t, src, "monitoring.tf", "constant_line(${local.ydb_ru_per_second})", "constant_line(10)")
		requireReported(t, checkDashboard(c), "throttling limit")
	})
}
