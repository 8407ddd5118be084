package tftest

import (
	"fmt"
	"math/big"
	"sort"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/stretchr/testify/require"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
)

// The database's limits (ydb.tf). The provider sends the serverless_database
// block whole, an attribute left out as 0; a throttling limit of 0 refuses
// every query and a storage limit of 0 every write. The throttling limit is
// sized from the load variables, so it must carry the load they describe,
// and never fall below the 10 RU/s a new database gets.

// sizingVars are the variables the throttling limit is computed from.
var sizingVars = []string{"ydb_jobs_per_hour", "ydb_ru_per_job", "ydb_ru_per_idle_minute"}

// ydbDefaultRU is the throttling limit of a new serverless database, RU/s.
const ydbDefaultRU = 10

// tfFunctions are the Terraform functions the sizing may use, as go-cty's
// standard library implements them.
var tfFunctions = map[string]function.Function{"max": stdlib.MaxFunc, "min": stdlib.MinFunc, "ceil": stdlib.CeilFunc, "floor": stdlib.FloorFunc}

// variables returns the variable blocks by name.
func (c *config) variables() map[string]block {
	out := map[string]block{}
	for _, b := range c.blocks {
		if b.Type == "variable" && len(b.Labels) == 1 {
			out[b.Labels[0]] = b
		}
	}
	return out
}

// defaults is every variable's default that needs no context.
func (c *config) defaults() map[string]cty.Value {
	out := map[string]cty.Value{}
	for name, v := range c.variables() {
		if a := attr(v.Body, "default"); a != nil {
			if val, diags := a.Expr.Value(nil); !diags.HasErrors() {
				out[name] = val
			}
		}
	}
	return out
}

// evalNumber evaluates an expression that may use variables (vars) and
// locals that themselves use only variables.
func (c *config) evalNumber(e hclsyntax.Expression, vars map[string]cty.Value) (*big.Float, error) {
	ctx := &hcl.EvalContext{Variables: map[string]cty.Value{"var": cty.ObjectVal(vars)}, Functions: tfFunctions}
	locals := map[string]cty.Value{}
	for _, tr := range e.Variables() {
		if tr.RootName() != "local" {
			continue
		}
		name := traversalAddr(tr)[len("local."):]
		a := c.locals[name]
		if a == nil {
			return nil, fmt.Errorf("local.%s is not defined", name)
		}
		v, diags := a.Expr.Value(ctx)
		if diags.HasErrors() {
			return nil, fmt.Errorf("local.%s: %s", name, diags.Error())
		}
		locals[name] = v
	}
	ctx.Variables["local"] = cty.ObjectVal(locals)
	v, diags := e.Value(ctx)
	if diags.HasErrors() {
		return nil, fmt.Errorf("%s", diags.Error())
	}
	if v.Type() != cty.Number || !v.IsKnown() || v.IsNull() {
		return nil, fmt.Errorf("not a number")
	}
	return v.AsBigFloat(), nil
}

// checkYDBLimits checks the serverless database's limits.
func checkYDBLimits(c *config) []string {
	var bad []string
	dbs := c.resources("yandex_ydb_database_serverless")
	if len(dbs) != 1 {
		return []string{fmt.Sprintf("want one yandex_ydb_database_serverless, have %d", len(dbs))}
	}
	var label string
	var db block
	for name, b := range dbs {
		label, db = "yandex_ydb_database_serverless."+name, b
	}
	blocks := blocksOf(db.Body, "serverless_database")
	if len(blocks) != 1 {
		return []string{label + ": want one serverless_database block (the limits; without it the database gets the provider's defaults)"}
	}
	sd := blocks[0].Body
	for _, name := range []string{"enable_throttling_rcu_limit", "throttling_rcu_limit", "provisioned_rcu_limit", "storage_size_limit"} {
		if attr(sd, name) == nil {
			bad = append(bad, fmt.Sprintf("%s: serverless_database sets no %s, which the provider then sends as 0", label, name))
		}
	}
	if v, ok := literal(sd, "enable_throttling_rcu_limit"); attr(sd, "enable_throttling_rcu_limit") != nil && (!ok || v != "true") {
		bad = append(bad, label+": enable_throttling_rcu_limit should be true (the limit is what bounds the bill)")
	}
	if v, ok := literal(sd, "provisioned_rcu_limit"); attr(sd, "provisioned_rcu_limit") != nil && (!ok || v != "0") {
		bad = append(bad, label+": provisioned_rcu_limit should be 0 (provisioned capacity is billed by the hour, used or not)")
	}

	vars := c.variables()
	defaults := c.defaults()
	for _, name := range append(append([]string{}, sizingVars...), "ydb_storage_limit_gb") {
		v, ok := vars[name]
		switch {
		case !ok:
			bad = append(bad, fmt.Sprintf("variable %s is not declared", name))
			continue
		case attr(v.Body, "description") == nil:
			bad = append(bad, fmt.Sprintf("variable %s has no description", name))
		case defaults[name].IsNull() || defaults[name].Type() != cty.Number:
			bad = append(bad, fmt.Sprintf("variable %s has no numeric default", name))
		}
	}
	if st := attr(sd, "storage_size_limit"); st != nil && !refersTo(st.Expr, "var.ydb_storage_limit_gb") {
		bad = append(bad, label+": storage_size_limit should be var.ydb_storage_limit_gb")
	}
	limit := attr(sd, "throttling_rcu_limit")
	if limit == nil || len(bad) > 0 {
		return bad
	}

	// The limit at the defaults and at a hundred times the jobs.
	heavy := map[string]cty.Value{}
	for k, v := range defaults {
		heavy[k] = v
	}
	heavy["ydb_jobs_per_hour"] = cty.NumberVal(new(big.Float).Mul(defaults["ydb_jobs_per_hour"].AsBigFloat(), big.NewFloat(100)))
	for _, load := range []struct {
		name string
		vars map[string]cty.Value
	}{{"the defaults", defaults}, {"100 times the default jobs an hour", heavy}} {
		got, err := c.evalNumber(limit.Expr, load.vars)
		if err != nil {
			bad = append(bad, fmt.Sprintf("%s: throttling_rcu_limit at %s: %v", label, load.name, err))
			continue
		}
		f := func(name string) *big.Float { return load.vars[name].AsBigFloat() }
		// RU a second the load needs on average: jobs × RU per job an hour,
		// and the idle timer's RU a minute.
		need := new(big.Float).Quo(new(big.Float).Mul(f("ydb_jobs_per_hour"), f("ydb_ru_per_job")), big.NewFloat(3600))
		need.Add(need, new(big.Float).Quo(f("ydb_ru_per_idle_minute"), big.NewFloat(60)))
		if got.Cmp(need) < 0 {
			bad = append(bad, fmt.Sprintf("%s: throttling_rcu_limit at %s is %s RU/s, below the %s RU/s the load needs",
				label, load.name, got.Text('f', -1), need.Text('f', 2)))
		}
		if got.Cmp(big.NewFloat(ydbDefaultRU)) < 0 {
			bad = append(bad, fmt.Sprintf("%s: throttling_rcu_limit at %s is %s RU/s, below a new database's %d",
				label, load.name, got.Text('f', -1), ydbDefaultRU))
		}
		if !got.IsInt() {
			bad = append(bad, fmt.Sprintf("%s: throttling_rcu_limit at %s is %s, not a whole number of RU/s", label, load.name, got.Text('f', -1)))
		}
	}
	sort.Strings(bad)
	return bad
}

func TestYDBLimitsCarryTheLoad(t *testing.T) {
	_, c := load(t)
	require.Empty(t, checkYDBLimits(c))
}

func TestYDBLimitsCheckCanFail(t *testing.T) {
	src, _ := load(t)
	cases := []struct{ name, old, new, want string }{
		{"an attribute left out", "    provisioned_rcu_limit       = 0\n", "", "sets no provisioned_rcu_limit"},
		{"throttling off", "enable_throttling_rcu_limit = true", "enable_throttling_rcu_limit = false", "enable_throttling_rcu_limit should be true"},
		{"provisioned capacity", "provisioned_rcu_limit       = 0", "provisioned_rcu_limit       = 10", "provisioned_rcu_limit should be 0"},
		{"a fixed limit that does not follow the load", "throttling_rcu_limit        = local.ydb_ru_per_second", "throttling_rcu_limit        = 10",
			"throttling_rcu_limit at 100 times the default jobs an hour is 10 RU/s, below"},
		{"a limit that ignores the cost of a job", "var.ydb_jobs_per_hour * var.ydb_ru_per_job / 3600", "var.ydb_jobs_per_hour / 3600",
			"throttling_rcu_limit at 100 times the default jobs an hour"},
		// At the defaults the load needs less than 10 RU/s: the floor is what
		// keeps the limit at a new database's.
		{"a limit below a new database's", "max(10, ceil(", "max(1, ceil(", "below a new database's 10"},
		{"a variable with no default", "  default     = 200\n", "", "variable ydb_ru_per_job has no numeric default"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := mutate(t, src, "ydb.tf", tc.old, tc.new)
			requireReported(t, checkYDBLimits(c), tc.want)
		})
	}
}
