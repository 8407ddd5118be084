package tftest

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/httpapi"
)

// checkAPITimeout: the api function's execution_timeout is the timeout the
// API keeps its deadline under (httpapi.FunctionTimeout), so it answers
// before the platform stops the call.
func checkAPITimeout(c *config) []string {
	fn, ok := c.resources("yandex_function")["api"]
	if !ok {
		return []string{"no yandex_function.api"}
	}
	v, _ := literal(fn.Body, "execution_timeout")
	s, err := strconv.Atoi(v)
	if err != nil || time.Duration(s)*time.Second != httpapi.FunctionTimeout {
		return []string{fmt.Sprintf("yandex_function.api: execution_timeout %q, want %d (httpapi.FunctionTimeout)",
			v, int(httpapi.FunctionTimeout/time.Second))}
	}
	return nil
}

func TestAPIDeadlineIsItsFunctionsTimeout(t *testing.T) {
	src, c := load(t)
	require.Empty(t, checkAPITimeout(c))

	changed := mutate(t, src, "functions.tf",
		"memory             = 256\n  execution_timeout  = \"30\"\n  service_account_id = yandex_iam_service_account.api.id",
		"memory             = 256\n  execution_timeout  = \"20\"\n  service_account_id = yandex_iam_service_account.api.id")
	requireReported(t, checkAPITimeout(changed), `yandex_function.api: execution_timeout "20", want 30`)
}
