package openapitest_test

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"transcriber/internal/httpapi"
	"transcriber/internal/httpapi/openapitest"
)

const jobID = "01JD0M3Y8K9Q2R5T7V4W6X8Z0A"

var jsonType = http.Header{"Content-Type": {"application/json; charset=utf-8"}}

func get(path string) *http.Request { return httptest.NewRequest(http.MethodGet, path, nil) }

// The document loads and passes kin-openapi's validation, its
// x-yc-apigateway extensions included.
func TestTheDocumentIsValid(t *testing.T) {
	spec := openapitest.Load(t).Spec()
	require.Contains(t, spec.Extensions, "x-yc-apigateway")
	op := spec.Paths.Find("/v1/jobs").Post
	require.Contains(t, op.Extensions, "x-yc-apigateway-integration")
}

// A flow mapping with an unquoted comma in a description turns the rest
// of the sentence into a key of the schema: the validator refuses it.
func TestAnUnquotedCommaInAFlowDescriptionIsRefused(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	raw, err := os.ReadFile(filepath.Join(root, openapitest.Path))
	require.NoError(t, err)
	good := `error_message: {type: string, description: "the failure in words, when failed or dead"}`
	require.Contains(t, string(raw), good)
	bad := strings.Replace(string(raw), good, `error_message: {type: string, description: the failure in words, when failed or dead}`, 1)
	path := filepath.Join(t.TempDir(), "openapi.yaml")
	require.NoError(t, os.WriteFile(path, []byte(bad), 0o600))
	_, err = openapitest.LoadFile(path)
	require.ErrorContains(t, err, "when failed or dead")
}

// Each part of an answer is checked: the operation, the status, the
// content type, the body's schema, and no field the document does not
// name.
func TestCheckRefusesWhatTheDocumentDoesNotDeclare(t *testing.T) {
	doc := openapitest.Load(t)
	errBody := []byte(`{"error": {"code": "job_not_found", "message": "no such job"}}`)
	job := []byte(`{"id": "` + jobID + `", "state": "done", "progress": 100}`)
	for _, tc := range []struct {
		name   string
		req    *http.Request
		status int
		header http.Header
		body   []byte
		want   string // "" when the answer is declared
	}{
		{"health", get("/healthz"), 200, jsonType, []byte(`{"status": "ok"}`), ""},
		{"health without its body", get("/healthz"), 200, nil, nil, "Content-Type"},
		{"health's error in another shape", get("/healthz"), 503, jsonType, []byte(`{}`), `property "error" is missing`},
		{"a job", get("/v1/jobs/" + jobID), 200, jsonType, job, ""},
		{"a job's error", get("/v1/jobs/" + jobID), 404, jsonType, errBody, ""},
		{"an error of another shape", get("/v1/jobs/" + jobID), 404, jsonType, []byte(`{"error": "no such job"}`), "doesn't match schema"},
		{"a job with a field the document lacks", get("/v1/jobs/" + jobID), 200, jsonType,
			[]byte(`{"id": "x", "secret_key": "k"}`), "secret_key"},
		{"a job as text", get("/v1/jobs/" + jobID), 200, http.Header{"Content-Type": {"text/plain"}}, job, "Content-Type"},
		{"a state the document lacks", get("/v1/jobs/" + jobID), 200, jsonType, []byte(`{"state": "lost"}`), "lost"},
		{"usage without its windows", get("/v1/usage"), 200, jsonType, []byte(`{"active_jobs": 0}`), "day"},
		{"a transcript as subtitles", get("/v1/jobs/" + jobID + "/transcript?format=srt"), 200,
			http.Header{"Content-Type": {"application/x-subrip"}}, []byte("1\n00:00:00,000 --> 00:00:01,000\nhi\n"), ""},
		{"the upload page", get("/upload/" + jobID + "?t=x"), 200, http.Header{"Content-Type": {"text/html; charset=utf-8"}}, []byte("<!doctype html>"), ""},
		{"a route the document lacks", get("/nowhere"), 404, jsonType, errBody, "no operation"},
		{"a method the document lacks", httptest.NewRequest(http.MethodPut, "/v1/jobs", nil), 405, jsonType, errBody, "no operation"},
		{"the webhook", httptest.NewRequest(http.MethodPost, "/telegram/webhook", nil), 200,
			http.Header{"Content-Type": {"text/plain; charset=utf-8"}}, []byte("ok\n"), ""},
		{"the webhook with a status it lacks", httptest.NewRequest(http.MethodPost, "/telegram/webhook", nil), 404,
			http.Header{"Content-Type": {"text/plain; charset=utf-8"}}, []byte("no\n"), "status is not supported"},
	} {
		err := doc.Check(tc.req, tc.status, tc.header, tc.body)
		if tc.want == "" {
			require.NoError(t, err, tc.name)
		} else {
			require.ErrorContains(t, err, tc.want, tc.name)
		}
	}
}

// A response the document declares without content has no body.
func TestAResponseWithoutContentHasNoBody(t *testing.T) {
	path := filepath.Join(t.TempDir(), "openapi.yaml")
	require.NoError(t, os.WriteFile(path, []byte(`openapi: 3.0.0
info: {title: t, version: "1"}
paths:
  /ping:
    get:
      responses:
        "204": {description: nothing}
`), 0o600))
	doc, err := openapitest.LoadFile(path)
	require.NoError(t, err)
	require.NoError(t, doc.Check(get("/ping"), 204, nil, nil))
	require.ErrorContains(t, doc.Check(get("/ping"), 204, jsonType, []byte(`{"status":"ok"}`)), "does not declare")
}

// spy records what a test helper reports instead of failing the test.
type spy struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (s *spy) Helper() {}

func (s *spy) Errorf(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.errs = append(s.errs, fmt.Sprintf(format, args...))
}

func (s *spy) reported() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.errs...)
}

// Handler fails the test on an answer the document does not declare, and
// on a request marked off the document that an operation takes; the mark
// does not reach the handler.
func TestHandlerReportsEachMismatch(t *testing.T) {
	var marked bool
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		marked = marked || r.Header.Get(openapitest.OffDocument) != ""
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		if r.URL.Query().Get("bad") != "" {
			_, _ = w.Write([]byte(`{"status": "down"}`))
			return
		}
		if r.URL.Path == "/healthz" {
			_, _ = w.Write([]byte(`{"status": "ok"}`))
			return
		}
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"error": {"code": "not_found", "message": "no such route"}}`))
	})
	s := &spy{TB: t}
	srv := httptest.NewServer(openapitest.Handler(s, api))
	defer srv.Close()
	call := func(method, path string, off bool) {
		req, err := http.NewRequest(method, srv.URL+path, nil)
		require.NoError(t, err)
		if off {
			req.Header.Set(openapitest.OffDocument, "yes")
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
	}

	call(http.MethodGet, "/healthz", false)
	call(http.MethodGet, "/nowhere", true)
	require.Empty(t, s.reported(), "a declared answer, and an off-document request")

	call(http.MethodGet, "/healthz?bad=1", false)
	require.Len(t, s.reported(), 1)
	require.Contains(t, s.reported()[0], "down")

	call(http.MethodGet, "/nowhere", false)
	require.Len(t, s.reported(), 2)
	require.Contains(t, s.reported()[1], "no operation")

	call(http.MethodGet, "/healthz", true)
	require.Len(t, s.reported(), 3)
	require.Contains(t, s.reported()[2], "marked off the document")
	require.False(t, marked, "the mark never reaches the API")
}

// CheckGateway reads the answer as API Gateway would: a base64 body
// decoded, multi-value headers taken.
func TestCheckGatewayReadsTheAnswerAsTheGatewayDoes(t *testing.T) {
	doc := openapitest.Load(t)
	ev := &httpapi.GatewayRequest{HTTPMethod: http.MethodGet, Path: "/healthz"}
	ok := &httpapi.GatewayResponse{StatusCode: 200, Body: base64.StdEncoding.EncodeToString([]byte(`{"status":"ok"}`)), IsBase64Encoded: true,
		MultiValueHeaders: map[string][]string{"content-type": {"application/json"}}}
	require.NoError(t, openapitest.CheckGateway(doc, ev, ok))
	notBase64 := *ok
	notBase64.IsBase64Encoded = false
	require.Error(t, openapitest.CheckGateway(doc, ev, &notBase64))
	require.Error(t, openapitest.CheckGateway(doc, &httpapi.GatewayRequest{HTTPMethod: http.MethodPost, Path: "/healthz"}, ok))
}
