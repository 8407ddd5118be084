// Package openapitest checks the HTTP API's answers against its OpenAPI
// document, docs/openapi.yaml, with kin-openapi: the document is loaded
// and validated once, and each answer is matched to the document's
// operation and validated (openapi3filter.ValidateResponse) for its
// status, content type, headers and body. Tests only: no function
// imports it (internal/app, TestFunctionsImportOnlyWhatTheyUse).
package openapitest

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"transcriber/internal/httpapi"
)

// Path is the document's path from the module's root.
const Path = "docs/openapi.yaml"

// OffDocument marks a request a test sends off the document on purpose
// (a method or path no operation has, which API Gateway would answer
// itself): its answer is not validated, but the request must match no
// operation. Handler removes the header before the API sees it.
const OffDocument = "X-Test-Off-Document"

// The answers' media types that have no body decoder of kin-openapi's
// own: each is text, validated as a string.
var textTypes = []string{"text/html", "text/vtt", "application/x-subrip"}

func init() {
	for _, ct := range textTypes {
		if openapi3filter.RegisteredBodyDecoder(ct) == nil {
			openapi3filter.RegisterBodyDecoder(ct, openapi3filter.PlainBodyDecoder)
		}
	}
}

// Doc is the loaded document and a router over its operations.
type Doc struct {
	spec   *openapi3.T
	router routers.Router
}

var (
	loadOnce sync.Once
	loaded   *Doc
	loadErr  error
)

// Load returns the document, loaded and validated once per test binary;
// an invalid document fails t.
func Load(t testing.TB) *Doc {
	t.Helper()
	loadOnce.Do(func() {
		var root string
		if root, loadErr = moduleRoot(); loadErr == nil {
			loaded, loadErr = LoadFile(filepath.Join(root, Path))
		}
	})
	if loadErr != nil {
		t.Fatalf("openapitest: %v", loadErr)
	}
	return loaded
}

// LoadFile loads and validates the document at path. Validation follows
// OpenAPI 3.0 with the examples and defaults checked against their
// schemas; extensions (x-yc-apigateway and the like) are taken as the
// specification allows any x- field. Then every object schema that
// lists properties and says nothing of others is closed
// (additionalProperties: false), so an answer with a field the document
// does not name fails.
func LoadFile(path string) (*Doc, error) {
	loader := openapi3.NewLoader()
	spec, err := loader.LoadFromFile(path)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	if err := spec.Validate(loader.Context,
		openapi3.EnableExamplesValidation(),
		openapi3.EnableSchemaDefaultsValidation(),
		openapi3.EnableSchemaPatternValidation(),
		openapi3.EnableSchemaFormatValidation(),
	); err != nil {
		return nil, fmt.Errorf("%s is not a valid OpenAPI document: %w", path, err)
	}
	closeObjects(spec)
	router, err := gorillamux.NewRouter(spec)
	if err != nil {
		return nil, fmt.Errorf("route %s: %w", path, err)
	}
	return &Doc{spec: spec, router: router}, nil
}

// Spec is the loaded document.
func (d *Doc) Spec() *openapi3.T { return d.spec }

// Declared reports whether an operation of the document takes req.
func (d *Doc) Declared(req *http.Request) bool {
	_, _, err := d.router.FindRoute(req)
	return err == nil
}

// Check validates one answer to req against the document: req must match
// an operation, the operation must declare status (or a default), and
// the content type, headers and body must be the declared ones. A
// response the document declares without content must have no body.
func (d *Doc) Check(req *http.Request, status int, header http.Header, body []byte) error {
	route, params, err := d.router.FindRoute(req)
	if err != nil {
		return fmt.Errorf("%s %s: no operation in %s: %w", req.Method, req.URL.Path, Path, err)
	}
	what := fmt.Sprintf("%s %s (%s) answered %d", req.Method, req.URL.Path, route.Operation.OperationID, status)
	resp := route.Operation.Responses.Status(status)
	if resp == nil {
		resp = route.Operation.Responses.Default()
	}
	if resp != nil && resp.Value != nil && len(resp.Value.Content) == 0 && len(body) > 0 {
		return fmt.Errorf("%s with a body (%s) the document does not declare: %.200s", what, header.Get("Content-Type"), body)
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route},
		Status:                 status,
		Header:                 header,
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	in.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		return fmt.Errorf("%s: %w; body: %.300s", what, err, body)
	}
	return nil
}

// Handler wraps h so that each answer is checked against the document
// once h returns; a mismatch fails t. A request with the OffDocument
// header is not checked, but fails t if an operation takes it.
func Handler(t testing.TB, h http.Handler) http.Handler {
	t.Helper()
	doc := Load(t)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(OffDocument) != "" {
			r.Header.Del(OffDocument)
			if doc.Declared(r) {
				t.Errorf("openapitest: %s %s is marked off the document, but an operation takes it", r.Method, r.URL.Path)
			}
			h.ServeHTTP(w, r)
			return
		}
		// Kept apart from what h may do to the request.
		probe := r.Clone(context.Background())
		c := &capture{ResponseWriter: w}
		h.ServeHTTP(c, r)
		if err := doc.Check(probe, c.statusOr200(), c.sentHeader(), c.body.Bytes()); err != nil {
			t.Errorf("openapitest: %v", err)
		}
	})
}

// Gateway checks one answer of the api or telegram function to an API
// Gateway event against the document; a mismatch fails t.
func Gateway(t testing.TB, ev *httpapi.GatewayRequest, resp *httpapi.GatewayResponse) {
	t.Helper()
	if err := CheckGateway(Load(t), ev, resp); err != nil {
		t.Errorf("openapitest: %v", err)
	}
}

// CheckGateway is Check for an API Gateway event and the answer to it.
func CheckGateway(d *Doc, ev *httpapi.GatewayRequest, resp *httpapi.GatewayResponse) error {
	if ev == nil || resp == nil {
		return errors.New("no event or no answer")
	}
	q := url.Values{}
	for k, v := range ev.QueryStringParameters {
		q.Set(k, v)
	}
	for k, vs := range ev.MultiValueQueryStringParameters {
		q[k] = vs
	}
	req, err := http.NewRequest(ev.HTTPMethod, (&url.URL{Path: ev.Path, RawQuery: q.Encode()}).String(), nil)
	if err != nil {
		return fmt.Errorf("the event's request: %w", err)
	}
	header := http.Header{}
	for k, v := range resp.Headers {
		header.Set(k, v)
	}
	for k, vs := range resp.MultiValueHeaders {
		header[http.CanonicalHeaderKey(k)] = vs
	}
	body := []byte(resp.Body)
	if resp.IsBase64Encoded {
		if body, err = base64.StdEncoding.DecodeString(resp.Body); err != nil {
			return fmt.Errorf("the answer's body: %w", err)
		}
	}
	return d.Check(req, resp.StatusCode, header, body)
}

// capture passes an answer through and keeps its status, its header as
// sent and its body.
type capture struct {
	http.ResponseWriter
	status int
	header http.Header
	body   bytes.Buffer
}

func (c *capture) WriteHeader(status int) {
	if c.status == 0 {
		c.status = status
		c.header = c.ResponseWriter.Header().Clone()
	}
	c.ResponseWriter.WriteHeader(status)
}

func (c *capture) Write(b []byte) (int, error) {
	if c.status == 0 {
		c.WriteHeader(http.StatusOK)
	}
	c.body.Write(b)
	return c.ResponseWriter.Write(b)
}

func (c *capture) Flush() {
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (c *capture) Unwrap() http.ResponseWriter { return c.ResponseWriter }

func (c *capture) statusOr200() int {
	if c.status == 0 {
		return http.StatusOK
	}
	return c.status
}

func (c *capture) sentHeader() http.Header {
	if c.header == nil {
		return c.ResponseWriter.Header().Clone()
	}
	return c.header
}

// closeObjects sets additionalProperties: false on every object schema of
// the document that lists properties and leaves additionalProperties
// unsaid.
func closeObjects(spec *openapi3.T) {
	seen := map[*openapi3.Schema]bool{}
	var walk func(*openapi3.SchemaRef)
	walk = func(ref *openapi3.SchemaRef) {
		if ref == nil || ref.Value == nil || seen[ref.Value] {
			return
		}
		s := ref.Value
		seen[s] = true
		if len(s.Properties) > 0 && s.AdditionalProperties.Has == nil && s.AdditionalProperties.Schema == nil {
			no := false
			s.AdditionalProperties.Has = &no
		}
		for _, p := range s.Properties {
			walk(p)
		}
		walk(s.Items)
		walk(s.AdditionalProperties.Schema)
		for _, list := range []openapi3.SchemaRefs{s.AllOf, s.AnyOf, s.OneOf} {
			for _, sub := range list {
				walk(sub)
			}
		}
	}
	if spec.Components != nil {
		for _, s := range spec.Components.Schemas {
			walk(s)
		}
	}
	for _, item := range spec.Paths.Map() {
		for _, op := range item.Operations() {
			for _, resp := range op.Responses.Map() {
				if resp.Value == nil {
					continue
				}
				for _, mt := range resp.Value.Content {
					walk(mt.Schema)
				}
			}
		}
	}
}

// moduleRoot is the nearest folder up from the working directory with a
// go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}
