package tftest

import (
	"fmt"
	"sort"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/tryfunc"
	"github.com/stretchr/testify/require"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"

	"transcriber/internal/app"
	"transcriber/internal/speechkit"
)

// settingVars are the variables given to the functions as one setting
// each, the setting's name, and values to try them with: what a
// variable's validation lets through, the loader must take, and its
// default must be the code's.
var settingVars = []struct {
	variable, env string
	code          string // the code's default, as the variable writes it
	tries         []string
}{
	{"speechkit_sync_url", "SPEECHKIT_SYNC_URL", speechkit.DefaultSyncURL, []string{
		"https://stt.api.cloud.yandex.net/speech/v1/stt:recognize", "https://stt.example/x?a=b",
		"http://stt.example/x", "https://user:pw@stt.example/x", "https://stt.example", "stt.example/x", "ftp://x/y", "",
	}},
	{"speechkit_sync_max_duration", "SPEECHKIT_SYNC_MAX_DURATION", speechkit.MaxSyncDuration.String(), []string{
		"0", "0s", "1s", "9s", "15s", "29s", "30s", "31s", "40s", "1m", "30", "500ms", "-1s", "soon", "", "05s", "30.5s",
	}},
}

// tfValidation is what Terraform's validation conditions may call here.
var tfValidation = map[string]function.Function{"can": tryfunc.CanFunc, "regex": stdlib.RegexFunc}

// validates evaluates variable v's validation conditions for value.
func validates(v block, name, value string) (bool, error) {
	ctx := &hcl.EvalContext{
		Variables: map[string]cty.Value{"var": cty.ObjectVal(map[string]cty.Value{name: cty.StringVal(value)})},
		Functions: tfValidation,
	}
	for _, vb := range blocksOf(v.Body, "validation") {
		a := attr(vb.Body, "condition")
		if a == nil {
			return false, fmt.Errorf("variable %s: a validation without a condition", name)
		}
		got, diags := a.Expr.Value(ctx)
		if diags.HasErrors() {
			return false, fmt.Errorf("variable %s: %s", name, diags.Error())
		}
		if got.Type() != cty.Bool || got.IsNull() || got.False() {
			return false, nil
		}
	}
	return true, nil
}

// checkSettingVars: each setting variable exists, has the code's default,
// and lets through only values the loader (app.FromEnv) takes.
func checkSettingVars(c *config) []string {
	var bad []string
	vars := c.variables()
	defaults := c.defaults()
	for _, s := range settingVars {
		v, ok := vars[s.variable]
		if !ok {
			bad = append(bad, "no variable "+s.variable)
			continue
		}
		def, ok := defaults[s.variable]
		if !ok || def.Type() != cty.String || def.AsString() != s.code {
			bad = append(bad, fmt.Sprintf("variable %s: its default should be the code's, %q", s.variable, s.code))
		}
		for _, value := range s.tries {
			pass, err := validates(v, s.variable, value)
			if err != nil {
				bad = append(bad, err.Error())
				break
			}
			_, loadErr := app.FromEnv(func(name string) string {
				if name == s.env {
					return value
				}
				return ""
			})
			if pass && loadErr != nil {
				bad = append(bad, fmt.Sprintf("variable %s lets %q through, which the loader refuses: %v", s.variable, value, loadErr))
			}
		}
	}
	sort.Strings(bad)
	return bad
}

func TestSettingVariablesAreWhatTheLoaderTakes(t *testing.T) {
	_, c := load(t)
	require.Empty(t, checkSettingVars(c))
}

func TestSettingVariablesCheckCanFail(t *testing.T) {
	src, _ := load(t)
	cases := []struct{ name, old, new, want string }{
		{"a longer duration let through", `[12][0-9]s|30s)$`, `[1-9][0-9]s)$`, `variable speechkit_sync_max_duration lets "31s" through`},
		{"another default", `default     = "30s"`, `default     = "20s"`, "variable speechkit_sync_max_duration: its default should be the code's"},
		{"http let through", `"^https://[^/@]+/"`, `"^https?://[^/@]+/"`, `variable speechkit_sync_url lets "http://stt.example/x" through`},
		{"no variable", `variable "speechkit_sync_url" {`, `variable "speechkit_sync_endpoint" {`, "no variable speechkit_sync_url"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := mutate(t, src, "variables.tf", tc.old, tc.new)
			requireReported(t, checkSettingVars(c), tc.want)
		})
	}
}
