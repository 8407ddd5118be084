package httpapi_test

import (
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"transcriber/internal/httpapi"
	"transcriber/internal/httpapi/openapitest"
	"transcriber/internal/telegram"
)

// The template marks Terraform fills in (terraform/gateway.tf renders the
// document with templatefile): which function an operation calls, and the
// account API Gateway calls it as.
const (
	apiFunction      = "${api_function_id}"
	telegramFunction = "${telegram_function_id}"
	gatewayAccount   = "${gateway_service_account_id}"
)

// The OpenAPI document, which API Gateway serves, lists exactly the routes
// of the routing table, with a security requirement exactly where the route
// needs a token, and each of them calls the api function; besides them it
// lists exactly one operation, the Telegram webhook, which calls the
// telegram function and needs no token (the function checks the webhook's
// secret header itself). The document is read, and validated, by
// kin-openapi (openapitest.Load).
func TestOpenAPIDocumentMatchesTheRoutes(t *testing.T) {
	spec := openapitest.Load(t).Spec()
	require.True(t, strings.HasPrefix(spec.OpenAPI, "3.0."), "API Gateway takes OpenAPI 3.0")

	routes := map[string]httpapi.Route{}
	for _, rt := range httpapi.Routes {
		routes[rt.Method+" "+rt.Path] = rt
	}

	var apiOps, telegramOps, inCode []string
	for path, item := range spec.Paths.Map() {
		for method, op := range item.Operations() {
			key := method + " " + path
			open := op.Security != nil && len(*op.Security) == 0

			integ, ok := op.Extensions["x-yc-apigateway-integration"].(map[string]any)
			require.True(t, ok, "%s calls a function", key)
			require.Equal(t, "cloud_functions", integ["type"], key)
			require.Equal(t, "1.0", integ["payload_format_version"], key)
			require.Equal(t, gatewayAccount, integ["service_account_id"], "%s: API Gateway calls as its own account", key)

			switch fn := integ["function_id"]; fn {
			case apiFunction:
				apiOps = append(apiOps, key)
				if rt, ok := routes[key]; ok {
					require.Equal(t, !rt.Auth, open, "%s: security in the document matches the route", key)
				}
			case telegramFunction:
				telegramOps = append(telegramOps, key)
				require.True(t, open, "%s: no API token; the telegram function checks the secret header", key)
			default:
				t.Fatalf("%s calls %v: want %s or %s", key, fn, apiFunction, telegramFunction)
			}
		}
	}
	for key := range routes {
		inCode = append(inCode, key)
	}
	sort.Strings(apiOps)
	sort.Strings(inCode)
	require.Equal(t, inCode, apiOps, "the api function's operations are exactly httpapi.Routes")
	require.Equal(t, []string{"POST " + telegram.WebhookPath}, telegramOps,
		"the telegram function serves exactly the webhook")
}

// templatefile reads every "${" and "%{" in the document as a template
// expression: the document holds none but the three marks above.
func TestOpenAPIDocumentHasOnlyTheTemplateMarks(t *testing.T) {
	raw, err := os.ReadFile("../../docs/openapi.yaml")
	require.NoError(t, err)
	text := string(raw)
	require.NotContains(t, text, "%{", "templatefile would read it as a directive")
	for _, mark := range []string{apiFunction, telegramFunction, gatewayAccount} {
		require.Contains(t, text, mark)
		text = strings.ReplaceAll(text, mark, "")
	}
	require.NotContains(t, text, "${", "templatefile would read it as an expression")
}
