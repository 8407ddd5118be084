package httpapi_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"transcriber/internal/apitoken"
	"transcriber/internal/errs"
	"transcriber/internal/httpapi"
	"transcriber/internal/httpapi/openapitest"
	"transcriber/internal/ident"
	"transcriber/internal/job"
	"transcriber/internal/uploadlink"
)

// Cloud Functions turn a function's answer that carries one of these
// headers into an error (docs/platform.md, "HTTP invocation").
var forbiddenResponseHeaders = []string{"Www-Authenticate", "Proxy-Authenticate", "Transfer-Encoding", "Via"}

// requireNoForbiddenHeader checks both header maps of a gateway answer,
// whatever the case of the names.
func requireNoForbiddenHeader(t *testing.T, resp *httpapi.GatewayResponse, what string) {
	t.Helper()
	var names []string
	for k := range resp.Headers {
		names = append(names, k)
	}
	for k := range resp.MultiValueHeaders {
		names = append(names, k)
	}
	for _, k := range names {
		for _, f := range forbiddenResponseHeaders {
			require.False(t, strings.EqualFold(k, f), "%s: the gateway answer carries %s", what, k)
		}
	}
}

// unavailable is a store that is down.
var errDown = errs.New(errs.Unavailable, "store_unavailable", "the store is unavailable")

type downTokens struct{ apitoken.Store }

func (downTokens) ByHash(context.Context, string) (apitoken.Token, error) {
	return apitoken.Token{}, errDown
}

type downJobs struct{ job.Store }

func (downJobs) Get(context.Context, string) (job.Job, error) { return job.Job{}, errDown }

// Every route's answers, errors above all, leave through the gateway
// without a header the platform refuses, with the status net/http gives,
// and are the ones the OpenAPI document declares;
// a 401's challenge leaves as X-Www-Authenticate, while net/http (the
// local stack) keeps WWW-Authenticate.
func TestGatewayAnswersCarryNoForbiddenHeader(t *testing.T) {
	h := newHarness(t, httpapi.Config{})
	_, secret := h.token("gw")
	linkSecret := []byte(strings.Repeat("k", uploadlink.MinSecretLen))
	cfg := httpapi.Config{UploadLinkSecret: linkSecret}
	up := httpapi.New(httpapi.Deps{Jobs: h.jobs, Tokens: h.tokens, Objects: h.objects, Recognitions: h.recs,
		Clock: h.clk, Log: logs.Logger(t)}, cfg)
	down := httpapi.New(httpapi.Deps{Jobs: downJobs{}, Tokens: downTokens{}, Objects: h.objects, Recognitions: h.recs,
		Clock: h.clk, Log: logs.Logger(t)}, cfg)
	id := ident.New()
	doc := openapitest.Load(t)

	type request struct {
		name          string
		api           *httpapi.API
		method, path  string
		query, header map[string]string
	}
	statuses := map[int]bool{}
	for _, rt := range httpapi.Routes {
		path := strings.ReplaceAll(rt.Path, "{id}", id)
		link := map[string]string{"t": uploadlink.Token(linkSecret, id)}
		creds := map[string]string{"X-Api-Key": secret}
		requests := []request{
			{"no credentials", up, rt.Method, path, nil, nil},
			{"a wrong credential", up, rt.Method, path, map[string]string{"t": "nope"}, map[string]string{"Authorization": "Bearer nope"}},
			{"credentials, no such job", up, rt.Method, path, link, creds},
			{"a method the route does not take", up, http.MethodPatch, path, link, creds},
			{"the store is down", down, rt.Method, path, link, creds},
		}
		for _, rq := range requests {
			what := rq.name + ": " + rq.method + " " + rt.Path
			q := url.Values{}
			for k, v := range rq.query {
				q.Set(k, v)
			}
			req := httptest.NewRequest(rq.method, path+"?"+q.Encode(), nil)
			for k, v := range rq.header {
				req.Header.Set(k, v)
			}
			local := httptest.NewRecorder()
			rq.api.ServeHTTP(local, req)

			ev := &httpapi.GatewayRequest{
				Version: "1.0", HTTPMethod: rq.method, Path: path, QueryStringParameters: rq.query, Headers: rq.header,
			}
			resp, err := httpapi.ServeGateway(context.Background(), rq.api, rq.api.Log, ev)
			require.NoError(t, err, what)
			if rq.method == rt.Method {
				require.NoError(t, doc.Check(req, local.Code, local.Header(), local.Body.Bytes()), what)
				require.NoError(t, openapitest.CheckGateway(doc, ev, resp), what)
			} else {
				require.False(t, doc.Declared(req), "%s: API Gateway answers it itself", what)
			}
			require.Equal(t, local.Code, resp.StatusCode, "%s: the gateway answers as net/http does: %s", what, resp.Body)
			statuses[resp.StatusCode] = true
			requireNoForbiddenHeader(t, resp, what)

			if local.Code == http.StatusUnauthorized {
				challenge := local.Header().Get("WWW-Authenticate")
				require.NotEmpty(t, challenge, "%s: net/http keeps the challenge", what)
				require.Equal(t, challenge, resp.Headers["X-Www-Authenticate"], "%s: the gateway renames it", what)
			}
		}
	}
	for _, s := range []int{http.StatusUnauthorized, http.StatusNotFound, http.StatusMethodNotAllowed, http.StatusServiceUnavailable} {
		require.True(t, statuses[s], "no route answered %d: the test no longer covers it", s)
	}
}

// Whatever a handler sets, in whatever case and with however many values,
// no refused header leaves through the gateway.
func TestGatewayDropsOrRenamesRefusedHeaders(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="a"`)
		w.Header().Add("Www-Authenticate", `Basic realm="b"`)
		w.Header()["proxy-authenticate"] = []string{"Basic"} // not canonical
		w.Header().Set("Transfer-Encoding", "chunked")
		w.Header().Set("Via", "1.1 proxy")
		w.Header().Set("X-Kept", "yes")
		w.WriteHeader(http.StatusUnauthorized)
	})
	resp, err := httpapi.ServeGateway(context.Background(), h, logs.Logger(t), &httpapi.GatewayRequest{HTTPMethod: http.MethodGet, Path: "/"})
	require.NoError(t, err)
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	requireNoForbiddenHeader(t, resp, "a handler setting every one")
	require.Equal(t, []string{`Bearer realm="a"`, `Basic realm="b"`}, resp.MultiValueHeaders["X-Www-Authenticate"])
	require.Equal(t, "Basic", resp.Headers["X-Proxy-Authenticate"])
	require.Equal(t, "yes", resp.Headers["X-Kept"])
}
