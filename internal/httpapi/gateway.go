package httpapi

import (
	"context"
	"encoding/base64"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"unicode/utf8"

	"transcriber/internal/errs"
)

// GatewayRequest is a request as API Gateway hands it to a function
// (payload format 1.0). Which of path and url carries the request's own
// path is not certain from the documentation (docs/api.md): path may be
// the route's template (/v1/jobs/{id}) with the values in pathParams, or
// the path itself. Both readings are handled.
type GatewayRequest struct {
	HTTPMethod                      string              `json:"httpMethod"`
	URL                             string              `json:"url"`
	Path                            string              `json:"path"`
	PathParams                      map[string]string   `json:"pathParams"`
	PathParameters                  map[string]string   `json:"pathParameters"`
	Headers                         map[string]string   `json:"headers"`
	MultiValueHeaders               map[string][]string `json:"multiValueHeaders"`
	QueryStringParameters           map[string]string   `json:"queryStringParameters"`
	MultiValueQueryStringParameters map[string][]string `json:"multiValueQueryStringParameters"`
	Body                            string              `json:"body"`
	IsBase64Encoded                 bool                `json:"isBase64Encoded"`
	RequestContext                  struct {
		RequestID string `json:"requestId"`
		Identity  struct {
			SourceIP string `json:"sourceIp"`
		} `json:"identity"`
	} `json:"requestContext"`
}

// GatewayResponse is the function's answer to API Gateway.
type GatewayResponse struct {
	StatusCode        int                 `json:"statusCode"`
	Headers           map[string]string   `json:"headers"`
	MultiValueHeaders map[string][]string `json:"multiValueHeaders,omitempty"`
	Body              string              `json:"body"`
	IsBase64Encoded   bool                `json:"isBase64Encoded"`
}

// Gateway serves an API Gateway event with the same routes the local stack
// serves over net/http.
func (a *API) Gateway(ctx context.Context, ev *GatewayRequest) (*GatewayResponse, error) {
	return ServeGateway(ctx, a, a.Log, ev)
}

// ServeGateway serves an API Gateway event (payload format 1.0) with h, as
// net/http would serve the request: how a function behind API Gateway runs
// a plain HTTP handler (the API, the Telegram webhook).
func ServeGateway(ctx context.Context, h http.Handler, log *slog.Logger, ev *GatewayRequest) (*GatewayResponse, error) {
	rec := httptest.NewRecorder()
	if ev == nil {
		ev = &GatewayRequest{}
	}
	r, err := ev.request(ctx)
	if err != nil {
		writeError(rec, httptest.NewRequest(http.MethodGet, "/", nil).WithContext(ctx), log, err)
		return response(rec), nil
	}
	h.ServeHTTP(rec, r)
	return response(rec), nil
}

func (ev *GatewayRequest) request(ctx context.Context) (*http.Request, error) {
	bad := func(msg string) error { return errs.New(errs.Invalid, "bad_gateway_event", msg) }
	path, rawQuery := ev.path()
	if path == "" || !strings.HasPrefix(path, "/") {
		return nil, bad("the event has no request path")
	}
	body := ev.Body
	if ev.IsBase64Encoded {
		b, err := base64.StdEncoding.DecodeString(ev.Body)
		if err != nil {
			return nil, bad("the event's body is not base64")
		}
		body = string(b)
	}
	method := ev.HTTPMethod
	if method == "" {
		method = http.MethodGet
	}
	r, err := http.NewRequestWithContext(ctx, method, "/", strings.NewReader(body))
	if err != nil {
		return nil, bad("the event's method is malformed")
	}
	// Set, not parsed from text: a path like "//x" would read as a host.
	r.URL = &url.URL{Path: path, RawQuery: rawQuery}
	r.RequestURI = r.URL.RequestURI()
	for k, vs := range ev.MultiValueHeaders {
		for _, v := range vs {
			r.Header.Add(k, v)
		}
	}
	for k, v := range ev.Headers {
		if r.Header.Get(k) == "" {
			r.Header.Set(k, v)
		}
	}
	// net/http keeps the host apart from the headers: the gateway's
	// domain, which the bot's upload links point to.
	r.Host = r.Header.Get("Host")
	r.Header.Del("Host")
	r.ContentLength = int64(len(body))
	r.RemoteAddr = ev.RequestContext.Identity.SourceIP
	return r, nil
}

// path returns the request's own path and query: from url when it is
// given, else path with any {name} filled from the path parameters, and
// the query from the query parameters.
func (ev *GatewayRequest) path() (string, string) {
	if ev.URL != "" {
		if u, err := url.Parse(ev.URL); err == nil && u.Path != "" {
			if u.RawQuery == "" {
				return u.Path, ev.query() // the query may come only in the parameters
			}
			return u.Path, u.RawQuery
		}
	}
	p := ev.Path
	params := ev.PathParams
	if len(params) == 0 {
		params = ev.PathParameters
	}
	for k, v := range params {
		p = strings.ReplaceAll(p, "{"+k+"}", url.PathEscape(v))
	}
	return p, ev.query()
}

// query is the request's query from the event's parameter maps.
func (ev *GatewayRequest) query() string {
	q := url.Values{}
	for k, vs := range ev.MultiValueQueryStringParameters {
		for _, v := range vs {
			q.Add(k, v)
		}
	}
	for k, v := range ev.QueryStringParameters {
		if !q.Has(k) {
			q.Set(k, v)
		}
	}
	return q.Encode()
}

func response(rec *httptest.ResponseRecorder) *GatewayResponse {
	out := &GatewayResponse{StatusCode: rec.Code, Headers: map[string]string{}}
	for k, vs := range rec.Header() {
		if len(vs) == 1 {
			out.Headers[k] = vs[0]
			continue
		}
		if out.MultiValueHeaders == nil {
			out.MultiValueHeaders = map[string][]string{}
		}
		out.MultiValueHeaders[k] = vs
		out.Headers[k] = strings.Join(vs, ", ")
	}
	b := rec.Body.Bytes()
	if utf8.Valid(b) {
		out.Body = string(b)
	} else {
		out.Body, out.IsBase64Encoded = base64.StdEncoding.EncodeToString(b), true
	}
	return out
}
