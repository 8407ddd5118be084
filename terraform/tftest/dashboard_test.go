package tftest

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
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

// The labels a query may select by, by the service label's value: those
// Monitoring requires of every metric (folderId, cloudId, service: "Data
// model"), the metric's name, and those each service's metric reference
// documents (en/_includes/monitoring/metrics-ref/<service>.md in
// yandex-cloud/docs). Message Queue documents only method (its HTTP API
// metrics) and YDB none that names a database, so a chart of theirs cannot
// pick one queue or one database (docs/deploy.md, "The dashboard").
var (
	commonLabels     = []string{"folderId", "cloudId", "service", "name"}
	documentedLabels = map[string][]string{
		"serverless-functions": {"function", "version", "bin", "trigger", "type", "resource_id", "version_id", "resource_type", "mdbproxy"},
		"message-queue":        {"method"},
		"ydb":                  {"api_service", "method", "status", "issue_type", "tx_kind", "pool"},
	}
)

var (
	interpolation = regexp.MustCompile(`\$\{[^{}]*\}`)
	localRef      = regexp.MustCompile(`\$\{local\.(\w+)\}`)
	selector      = regexp.MustCompile(`\{([^{}]*)\}`)
	labelMatch    = regexp.MustCompile(`([A-Za-z_][\w.]*)\s*(?:!=|=~|!~|=)\s*"([^"]*)"`)
	aggregation   = regexp.MustCompile(`\b(series_\w+|group_lines|group_by_labels)\(`)
)

// dashboardQueries is the text of every query attribute in the
// dashboard, dynamic blocks' content included, with ${local.x} replaced by
// that local's text and every other interpolation by X.
func (c *config) dashboardQueries(b *hclsyntax.Body, file string) []string {
	var out []string
	if a := attr(b, "query"); a != nil {
		q := c.text(file, a.Expr)
		for i := 0; i < 5 && localRef.MatchString(q); i++ {
			q = localRef.ReplaceAllStringFunc(q, func(m string) string {
				l := c.locals[localRef.FindStringSubmatch(m)[1]]
				if l == nil {
					return "X"
				}
				return strings.TrimSuffix(strings.TrimPrefix(c.text(c.where[l], l.Expr), `"`), `"`)
			})
		}
		for interpolation.MatchString(q) {
			q = interpolation.ReplaceAllString(q, "X")
		}
		out = append(out, strings.ReplaceAll(q, `\"`, `"`))
	}
	for _, x := range b.Blocks {
		out = append(out, c.dashboardQueries(x.Body, file)...)
	}
	return out
}

// checkDashboardLabels: every query names its service and selects only by
// labels that service's metric reference documents, and no query on YDB
// aggregates series: with no label to pick this database, a sum would add
// every database of the folder.
func checkDashboardLabels(c *config) []string {
	var bad []string
	ds := c.resources("yandex_monitoring_dashboard")
	for _, label := range sortedKeys(ds) {
		for _, q := range c.dashboardQueries(ds[label].Body, ds[label].file) {
			for _, sel := range selector.FindAllStringSubmatch(q, -1) {
				labels := map[string]string{}
				for _, m := range labelMatch.FindAllStringSubmatch(sel[1], -1) {
					labels[m[1]] = m[2]
				}
				service, ok := labels["service"]
				known, documented := documentedLabels[service]
				if !ok || !documented {
					bad = append(bad, fmt.Sprintf("yandex_monitoring_dashboard.%s: %s names no service whose labels are known", label, q))
					continue
				}
				var unknown []string
				for l := range labels {
					if !contains(commonLabels, l) && !contains(known, l) {
						unknown = append(unknown, l)
					}
				}
				sort.Strings(unknown)
				if len(unknown) > 0 {
					bad = append(bad, fmt.Sprintf("yandex_monitoring_dashboard.%s: %s selects by %v, which the %s metric reference does not document", label, q, unknown, service))
				}
				if service == "ydb" && aggregation.MatchString(q) {
					bad = append(bad, fmt.Sprintf("yandex_monitoring_dashboard.%s: %s aggregates YDB series, adding every database of the folder", label, q))
				}
			}
		}
	}
	return bad
}

func TestDashboardChartsEverything(t *testing.T) {
	_, c := load(t)
	require.Empty(t, checkDashboard(c))
	require.Empty(t, checkDashboardLabels(c))
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
		c := mutate(t, src, "monitoring.tf", "values(local.dashboard_dlqs)", "[]")
		requireReported(t, checkDashboard(c), "the dashboard does not use local.dashboard_dlqs")
	})
	t.Run("no throttling limit", func(t *testing.T) {
		c := mutate(t, src, "monitoring.tf", "constant_line(${local.ydb_ru_per_second})", "constant_line(10)")
		requireReported(t, checkDashboard(c), "throttling limit")
	})
	t.Run("a queue label the reference does not document", func(t *testing.T) {
		c := mutate(t, src, "monitoring.tf",
			`"\"queue.messages.stored_count\"{${local.queues_selector}}"`,
			`"\"queue.messages.stored_count\"{${local.queues_selector}, queue=\"${yandex_message_queue.poll_dlq.name}\"}"`)
		requireReported(t, checkDashboardLabels(c), "selects by [queue], which the message-queue metric reference does not document")
	})
	t.Run("YDB series summed over the folder", func(t *testing.T) {
		c := mutate(t, src, "monitoring.tf",
			`"\"api.units.consumed_per_second\"{${local.ydb_selector}}"`,
			`"series_sum(\"api.units.consumed_per_second\"{${local.ydb_selector}})"`)
		requireReported(t, checkDashboardLabels(c), "aggregates YDB series, adding every database of the folder")
	})
	t.Run("a query without a service", func(t *testing.T) {
		c := mutate(t, src, "monitoring.tf",
			`ydb_selector       = "folderId=\"${var.folder_id}\", service=\"ydb\""`,
			`ydb_selector       = "folderId=\"${var.folder_id}\""`)
		requireReported(t, checkDashboardLabels(c), "names no service whose labels are known")
	})
}
