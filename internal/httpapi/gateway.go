package httpapi

import (
	"cmp"
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

// GatewayRequest is API Gateway's payload format 1.0 (docs/openapi.yaml);
// resource and pathParameters are not read, the routes find them in path.
// Format 0.1 (the path in url, a template in path) is refused.
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

type GatewayResponse struct {
	StatusCode        int                 `json:"statusCode"`
	Headers           map[string]string   `json:"headers"`
	MultiValueHeaders map[string][]string `json:"multiValueHeaders,omitempty"`
	Body              string              `json:"body"`
	IsBase64Encoded   bool                `json:"isBase64Encoded"`
}

const codeBadGatewayEvent = "bad_gateway_event"

// ServeGateway serves an API Gateway event with a plain HTTP handler (the
// API, the Telegram webhook).
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

// NotReady answers an event the function could not get ready for (its
// configuration, its store) in the one error shape: 503 with Retry-After
// for an unavailable dependency, else 500. As the function's error it
// would reach the client as the gateway's answer, with no Retry-After.
func NotReady(ctx context.Context, log *slog.Logger, err error) *GatewayResponse {
	if !errs.Is(err, errs.Unavailable) {
		err = errs.Wrap(err, errs.Internal, "function_not_ready", "")
	}
	return errorResponse(ctx, log, err)
}

func errorResponse(ctx context.Context, log *slog.Logger, err error) *GatewayResponse {
	rec := newRecorder()
	r, _ := http.NewRequestWithContext(ctx, http.MethodGet, "/", nil)
	writeError(rec, r, log, err)
	return response(rec)
}

func (ev *GatewayRequest) request(ctx context.Context) (*http.Request, error) {
	bad := func(msg string) error { return errs.New(errs.Invalid, codeBadGatewayEvent, msg) }
	if ev.URL != "" {
		// the deployment's fault, not the caller's
		return nil, errs.Wrap(errors.New("an API Gateway event of payload format 0.1 (it has url)"),
			errs.Internal, codeBadGatewayEvent, "the gateway is misconfigured")
	}
	if !strings.HasPrefix(ev.Path, "/") {
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
	r, err := http.NewRequestWithContext(ctx, cmp.Or(ev.HTTPMethod, http.MethodGet), "/", strings.NewReader(body))
	if err != nil {
		return nil, bad("the event's method is malformed")
	}
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
	// set, not parsed: "//x" would read as a host
	r.URL = &url.URL{Path: ev.Path, RawQuery: q.Encode()}
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
	// the gateway's domain, which the bot's upload links point to
	r.Host = r.Header.Get("Host")
	r.Header.Del("Host")
	r.ContentLength = int64(len(body))
	r.RemoteAddr = ev.RequestContext.Identity.SourceIP
	return r, nil
}

// Response headers Cloud Functions turn into a 502 (docs/platform.md,
// "HTTP invocation"): the 401 and 407 challenges, of use to a client, leave
// under an X- name; the hop headers, the platform's own, are dropped.
var (
	renamedResponseHeaders = map[string]string{
		"Www-Authenticate":   "X-Www-Authenticate",
		"Proxy-Authenticate": "X-Proxy-Authenticate",
	}
	droppedResponseHeaders = map[string]bool{"Transfer-Encoding": true, "Via": true}
)

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
