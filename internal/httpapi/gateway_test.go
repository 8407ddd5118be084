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
)

// event decodes an API Gateway request as the platform sends it.
func event(t *testing.T, raw string) *httpapi.GatewayRequest {
	t.Helper()
	var ev httpapi.GatewayRequest
	require.NoError(t, json.Unmarshal([]byte(raw), &ev))
	return &ev
}

func TestGatewayEventsReachTheSameRoutes(t *testing.T) {
	h := newHarness(t, httpapi.Config{})
	_, secret := h.token("gw")
	ctx := context.Background()

	body := base64.StdEncoding.EncodeToString([]byte(createBody))
	created, err := h.api.Gateway(ctx, event(t, `{
		"httpMethod": "POST", "url": "/v1/jobs", "path": "/v1/jobs",
		"headers": {"Content-Type": "application/json", "X-Api-Key": "`+secret+`", "Idempotency-Key": "gw-1"},
		"multiValueHeaders": {"Content-Type": ["application/json"]},
		"queryStringParameters": {}, "body": "`+body+`", "isBase64Encoded": true,
		"requestContext": {"requestId": "r1", "identity": {"sourceIp": "203.0.113.7"}}}`))
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, created.StatusCode, created.Body)
	require.Equal(t, "application/json; charset=utf-8", created.Headers["Content-Type"])
	var j jobReply
	require.NoError(t, json.Unmarshal([]byte(created.Body), &j))

	// Both readings of payload 1.0: the path itself in url, or the route's
	// template in path with the values in pathParams.
	for name, raw := range map[string]string{
		"url": `{"httpMethod": "GET", "url": "/v1/jobs/` + j.ID + `?format=srt", "path": "/v1/jobs/{id}",
			"headers": {"X-Api-Key": "` + secret + `"}}`,
		"template": `{"httpMethod": "GET", "path": "/v1/jobs/{id}", "pathParams": {"id": "` + j.ID + `"},
			"headers": {"X-Api-Key": "` + secret + `"}, "queryStringParameters": {"format": "srt"}}`,
		"plain path": `{"httpMethod": "GET", "path": "/v1/jobs/` + j.ID + `", "headers": {"Authorization": "Bearer ` + secret + `"}}`,
	} {
		got, err := h.api.Gateway(ctx, event(t, raw))
		require.NoError(t, err, name)
		require.Equal(t, http.StatusOK, got.StatusCode, "%s: %s", name, got.Body)
		var again jobReply
		require.NoError(t, json.Unmarshal([]byte(got.Body), &again))
		require.Equal(t, j.ID, again.ID, name)
	}

	// A query given only in the parameters still counts.
	bad, err := h.api.Gateway(ctx, event(t, `{"httpMethod": "GET", "url": "/v1/jobs", "queryStringParameters": {"limit": "0"},
		"headers": {"X-Api-Key": "`+secret+`"}}`))
	require.NoError(t, err)
	require.Equal(t, http.StatusBadRequest, bad.StatusCode, bad.Body)

	unauth, err := h.api.Gateway(ctx, event(t, `{"httpMethod": "GET", "url": "/v1/jobs"}`))
	require.NoError(t, err)
	require.Equal(t, http.StatusUnauthorized, unauth.StatusCode)
	require.Contains(t, unauth.Body, `"code":"unauthorized"`)

	broken, err := h.api.Gateway(ctx, event(t, `{"httpMethod": "POST", "url": "/v1/jobs", "body": "%%%", "isBase64Encoded": true}`))
	require.NoError(t, err)
	require.Equal(t, http.StatusBadRequest, broken.StatusCode)
	require.Contains(t, broken.Body, `"code":"bad_gateway_event"`)

	empty, err := h.api.Gateway(ctx, nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusBadRequest, empty.StatusCode)
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
