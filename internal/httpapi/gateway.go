package httpapi

import (
	"context"
	"encoding/base64"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"transcriber/internal/errs"
)

// GatewayRequest is a request as API Gateway hands it to a function in
// payload format 1.0, the format the gateway's specification asks for
// (docs/openapi.yaml): path is the request's own path; resource is the
// specification's template for it (/v1/jobs/{id}), with the values in
// pathParameters, which the routes find again from the path, so neither is
// read. Format 0.1 puts the request's path in url and the template in path;
// an event with url is refused rather than routed by a template.
type GatewayRequest struct {
	Version                         string              `json:"version"`
	HTTPMethod                      string              `json:"httpMethod"`
	Path                            string              `json:"path"`
	URL                             string              `json:"url"` // format 0.1 only
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

// codeBadGatewayEvent is the error code of an event the adapter cannot
// turn into a request.
const codeBadGatewayEvent = "bad_gateway_event"

// Gateway serves an API Gateway event with the same routes the local stack
// serves over net/http.
func (a *API) Gateway(ctx context.Context, ev *GatewayRequest) (*GatewayResponse, error) {
	return ServeGateway(ctx, a, a.Log, ev)
}

// ServeGateway serves an API Gateway event (payload format 1.0) with h, as
// net/http would serve the request: how a function behind API Gateway runs
// a plain HTTP handler (the API, the Telegram webhook).
func ServeGateway(ctx context.Context, h http.Handler, log *slog.Logger, ev *GatewayRequest) (*GatewayResponse, error) {
	rec := newRecorder()
	if ev == nil {
		ev = &GatewayRequest{}
	}
	r, err := ev.request(ctx)
	if err != nil {
		return errorResponse(ctx, log, err), nil
	}
	h.ServeHTTP(rec, r)
	return response(rec), nil
}

// codeNotReady is the error of a call the function could not get ready
// for, other than an unavailable dependency: its configuration.
const codeNotReady = "function_not_ready"

// NotReady is the answer to an event the function could not get ready
// for (its configuration refused, its job store not opened), in the one
// error shape, with err logged to log: an unavailable dependency is 503
// with Retry-After, anything else 500, the deployment's fault and not
// the caller's. Returned as the function's error instead, it would reach
// the client as the gateway's own answer, with nothing to say when to
// retry.
func NotReady(ctx context.Context, log *slog.Logger, err error) *GatewayResponse {
	if !errs.Is(err, errs.Unavailable) {
		err = errs.Wrap(err, errs.Internal, codeNotReady, "")
	}
	return errorResponse(ctx, log, err)
}

// errorResponse is err answered in the one error shape.
func errorResponse(ctx context.Context, log *slog.Logger, err error) *GatewayResponse {
	rec := newRecorder()
	r, _ := http.NewRequestWithContext(ctx, http.MethodGet, "/", nil)
	writeError(rec, r, log, err)
	return response(rec)
}

func (ev *GatewayRequest) request(ctx context.Context) (*http.Request, error) {
	bad := func(msg string) error { return errs.New(errs.Invalid, codeBadGatewayEvent, msg) }
	if ev.URL != "" {
		// The gateway's integration is not payload_format_version 1.0: a
		// fault of the deployment, not of the caller.
		return nil, errs.Wrap(errors.New("an API Gateway event of payload format 0.1 (it has url)"),
			errs.Internal, codeBadGatewayEvent, "the gateway is misconfigured")
	}
	path := ev.Path
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
	r.URL = &url.URL{Path: path, RawQuery: ev.query()}
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

// Response headers Cloud Functions refuse: a function's answer carrying
// one is turned into an error (502) instead of being sent (docs/platform.md,
// "HTTP invocation"). The challenges of 401 and 407 are information a
// client can use (RFC 9110 has a 401 carry WWW-Authenticate), so they
// leave under an X- name; Transfer-Encoding and Via describe connections
// and hops, which the platform makes itself once the answer is a JSON
// document, so they are dropped.
var (
	renamedResponseHeaders = map[string]string{
		"Www-Authenticate":   "X-Www-Authenticate",
		"Proxy-Authenticate": "X-Proxy-Authenticate",
	}
	droppedResponseHeaders = map[string]bool{"Transfer-Encoding": true, "Via": true}
)

// gatewayHeaders is h as the platform takes it: canonical names, without
// the headers it refuses (renamed or dropped).
func gatewayHeaders(h http.Header) http.Header {
	out := http.Header{}
	for k, vs := range h {
		k = http.CanonicalHeaderKey(k)
		if droppedResponseHeaders[k] {
			continue
		}
		if to, ok := renamedResponseHeaders[k]; ok {
			k = to
		}
		out[k] = append(out[k], vs...)
	}
	return out
}

func response(rec *recorder) *GatewayResponse {
	out := &GatewayResponse{StatusCode: rec.Code, Headers: map[string]string{}}
	for k, vs := range gatewayHeaders(rec.Header()) {
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
