package httpapi_test

import (
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"transcriber/internal/httpapi"
)

// The OpenAPI document, which API Gateway serves, lists exactly the routes
// of the routing table, with a security requirement exactly where the route
// needs a token, and each operation calls the api function.
func TestOpenAPIDocumentMatchesTheRoutes(t *testing.T) {
	raw, err := os.ReadFile("../../docs/openapi.yaml")
	require.NoError(t, err)
	var doc struct {
		OpenAPI string                    `yaml:"openapi"`
		Paths   map[string]map[string]any `yaml:"paths"`
	}
	require.NoError(t, yaml.Unmarshal(raw, &doc))
	require.True(t, strings.HasPrefix(doc.OpenAPI, "3."))

	var inDoc, inCode []string
	for path, ops := range doc.Paths {
		for method, v := range ops {
			if method == "parameters" {
				continue
			}
			op, ok := v.(map[string]any)
			require.True(t, ok, "%s %s is an operation", method, path)
			key := strings.ToUpper(method) + " " + path
			inDoc = append(inDoc, key)
			sec, hasSec := op["security"]
			open := hasSec && len(sec.([]any)) == 0
			for _, rt := range httpapi.Routes {
				if rt.Method+" "+rt.Path == key {
					require.Equal(t, !rt.Auth, open, "%s: security in the document matches the route", key)
				}
			}
			integ, ok := op["x-yc-apigateway-integration"].(map[string]any)
			require.True(t, ok, "%s calls the function", key)
			require.Equal(t, "cloud_functions", integ["type"])
			require.Equal(t, "1.0", integ["payload_format_version"])
		}
	}
	for _, rt := range httpapi.Routes {
		inCode = append(inCode, rt.Method+" "+rt.Path)
	}
	sort.Strings(inDoc)
	sort.Strings(inCode)
	require.Equal(t, inCode, inDoc)
}
