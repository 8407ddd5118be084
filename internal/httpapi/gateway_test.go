package httpapi_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"transcriber/internal/httpapi"
	"transcriber/internal/httpapi/openapitest"
)

// gateway hands ev to the api function's handler, as API Gateway does,
// and checks the answer against the OpenAPI document.
func (h *harness) gateway(ev *httpapi.GatewayRequest) *httpapi.GatewayResponse {
	h.t.Helper()
	resp, err := httpapi.ServeGateway(context.Background(), h.api, h.api.Log, ev)
	require.NoError(h.t, err)
	openapitest.Gateway(h.t, ev, resp)
	return resp
}

// event decodes an API Gateway request as the platform sends it.
func event(t *testing.T, raw string) *httpapi.GatewayRequest {
	t.Helper()
	var ev httpapi.GatewayRequest
	require.NoError(t, json.Unmarshal([]byte(raw), &ev))
	return &ev
}

// An event in API Gateway's payload format 1.0 as its documentation lays
// it out: path is the request's own path, resource the specification's
// template, with pathParameters, parameters, multiValueParameters and
// operationId beside; there is no url.
func TestGatewayEventsReachTheSameRoutes(t *testing.T) {
	h := newHarness(t, httpapi.Config{})
	_, secret := h.token("gw")
	ctx := context.Background()

	body := base64.StdEncoding.EncodeToString([]byte(createBody))
	created := h.gateway(event(t, `{
		"version": "1.0", "resource": "/v1/jobs", "path": "/v1/jobs", "httpMethod": "POST",
		"headers": {"Content-Type": "application/json", "X-Api-Key": "`+secret+`", "Idempotency-Key": "gw-1"},
		"multiValueHeaders": {"Content-Type": ["application/json"], "X-Api-Key": ["`+secret+`"], "Idempotency-Key": ["gw-1"]},
		"queryStringParameters": {}, "multiValueQueryStringParameters": {},
		"pathParameters": {}, "parameters": {}, "multiValueParameters": {}, "operationId": "createJob",
		"body": "`+body+`", "isBase64Encoded": true,
		"requestContext": {"requestId": "r1", "httpMethod": "POST", "identity": {"sourceIp": "203.0.113.7", "userAgent": "curl/8"},
			"apiGateway": {"operationContext": {}}}}`))
	require.Equal(t, http.StatusCreated, created.StatusCode, created.Body)
	require.Equal(t, "application/json; charset=utf-8", created.Headers["Content-Type"])
	var j jobReply
	require.NoError(t, json.Unmarshal([]byte(created.Body), &j))

	for name, raw := range map[string]string{
		"X-Api-Key": `{"version": "1.0", "resource": "/v1/jobs/{id}", "path": "/v1/jobs/` + j.ID + `", "httpMethod": "GET",
			"pathParameters": {"id": "` + j.ID + `"}, "parameters": {"id": "` + j.ID + `"}, "multiValueParameters": {"id": ["` + j.ID + `"]},
			"operationId": "getJob", "headers": {"X-Api-Key": "` + secret + `"},
			"queryStringParameters": {"format": "srt"}, "multiValueQueryStringParameters": {"format": ["srt"]}}`,
		"Authorization": `{"version": "1.0", "resource": "/v1/jobs/{id}", "path": "/v1/jobs/` + j.ID + `", "httpMethod": "GET",
			"pathParameters": {"id": "` + j.ID + `"}, "headers": {"Authorization": "Bearer ` + secret + `"}}`,
	} {
		got := h.gateway(event(t, raw))
		require.Equal(t, http.StatusOK, got.StatusCode, "%s: %s", name, got.Body)
		var again jobReply
		require.NoError(t, json.Unmarshal([]byte(got.Body), &again))
		require.Equal(t, j.ID, again.ID, name)
	}

	// The path is the request's own; resource and pathParameters are not
	// read: a path that differs from them is served as the path says.
	other := h.gateway(event(t, `{"version": "1.0", "resource": "/v1/jobs/{id}", "path": "/v1/jobs",
		"pathParameters": {"id": "`+j.ID+`"}, "httpMethod": "GET", "headers": {"X-Api-Key": "`+secret+`"}}`))
	require.Equal(t, http.StatusOK, other.StatusCode, other.Body)
	require.Contains(t, other.Body, `"jobs"`, "the list, not the job")

	// The query comes from the parameter maps.
	bad := h.gateway(event(t, `{"version": "1.0", "path": "/v1/jobs", "httpMethod": "GET",
		"queryStringParameters": {"limit": "0"}, "headers": {"X-Api-Key": "`+secret+`"}}`))
	require.Equal(t, http.StatusBadRequest, bad.StatusCode, bad.Body)

	unauth := h.gateway(event(t, `{"version": "1.0", "path": "/v1/jobs", "httpMethod": "GET"}`))
	require.Equal(t, http.StatusUnauthorized, unauth.StatusCode)
	require.Contains(t, unauth.Body, `"code":"unauthorized"`)

	broken := h.gateway(event(t, `{"version": "1.0", "httpMethod": "POST", "path": "/v1/jobs", "body": "%%%", "isBase64Encoded": true}`))
	require.Equal(t, http.StatusBadRequest, broken.StatusCode)
	require.Contains(t, broken.Body, `"code":"bad_gateway_event"`)

	empty, err := httpapi.ServeGateway(ctx, h.api, h.api.Log, nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusBadRequest, empty.StatusCode)
}

// An event of payload format 0.1 (url the request's path, path the
// template) means the integration is misconfigured: it is refused as the
// deployment's fault, never routed by the template.
func TestGatewayRefusesPayloadFormat01(t *testing.T) {
	h := newHarness(t, httpapi.Config{})
	_, secret := h.token("gw")
	got := h.gateway(event(t, `{"url": "/v1/jobs?limit=5", "path": "/v1/jobs",
		"httpMethod": "GET", "headers": {"X-Api-Key": "`+secret+`"}, "pathParams": {}, "params": {}}`))
	require.Equal(t, http.StatusInternalServerError, got.StatusCode, got.Body)
	require.Contains(t, got.Body, `"code":"bad_gateway_event"`)
	require.NotContains(t, got.Body, "0.1", "the detail is for the logs")
}

func TestGatewayHostIsTheRequestsHost(t *testing.T) {
	var host, header string
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, header = r.Host, r.Header.Get("Host")
		w.WriteHeader(http.StatusNoContent)
	})
	resp, err := httpapi.ServeGateway(context.Background(), h, slog.Default(), &httpapi.GatewayRequest{
		HTTPMethod: http.MethodPost, Path: "/telegram/webhook",
		Headers: map[string]string{"Host": "d5d.apigw.yandexcloud.net"},
	})
	require.NoError(t, err)
	require.Equal(t, http.StatusNoContent, resp.StatusCode)
	require.Equal(t, "d5d.apigw.yandexcloud.net", host)
	require.Empty(t, header, "as net/http serves it: the host is not a header")
}
