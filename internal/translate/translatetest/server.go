// Package translatetest is an in-process fake of Yandex Translate's REST
// API v2 translate method (POST /translate/v2/translate), for tests.
//
// Like the API (docs/platform.md, "Translate") it refuses, before any
// script sees the request: missing or unknown credentials with 401
// (code 16); a body that is not the request's JSON with 400 (code 3); a
// request past the configured rate with 429 (code 8); a missing or unknown
// target language, or an unknown source, with 400 "unsupported
// target_language_code: xx"; no text with 400; and texts over 10,000
// characters in all with 400. Then the script decides (Script, Plan); with
// none it translates every text deterministically: "[<target>] <text>",
// and detects Russian in text with Cyrillic letters, English otherwise.
//
// Its error messages echo what they refuse, credentials and texts
// included, as a careless server might, so that tests see the client keep
// them out of its errors.
package translatetest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"transcriber/internal/clock"
	"transcriber/internal/speechkit"
	"transcriber/internal/translate"
)

// Path is the translate method's path.
const Path = "/translate/v2/translate"

// TestKey is the API key the fake takes ("Api-Key " + TestKey).
const TestKey = "test-translate-key-0123456789"

// MaxChars is the fake's limit on a request's texts, the API's: 10,000
// characters, counted as Unicode code points, over all the texts.
const MaxChars = 10_000

// Plan is what the fake answers to one request that passed its checks.
type Plan struct {
	// Status is the answer's status; 0 is 200 with the translations. Any
	// other answers {"code", "message"}: Code and Message, or the fake's
	// own for the status.
	Status  int
	Code    int
	Message string
	// RetryAfter is the answer's Retry-After header, if not empty.
	RetryAfter string
	// Translations, when not nil, are the 200's translations instead of
	// the fake's (a wrong count, for an answer that is not the API's).
	Translations []string
	// Body, when set, is the whole answer body instead.
	Body []byte
	// Drop closes the connection without an answer, after reading the
	// request: a request the API may have done.
	Drop bool
}

// Call is one request as the fake saw it.
type Call struct {
	Texts         []string
	Target        string
	Source        string
	Format        string
	FolderID      string
	Authorization string
	RequestID     string      // x-client-request-id
	Header        http.Header // every header of the request
	Chars         int         // the texts' code points
	At            time.Time   // the fake's clock when the request came
	Status        int         // what the fake answered; 0 for a dropped connection
}

// Server is the fake.
type Server struct {
	srv *httptest.Server

	mu         sync.Mutex
	clock      clock.Clock
	script     func(Call) Plan
	calls      []Call
	tokens     map[string]bool // IAM tokens taken as "Bearer <token>"
	keys       map[string]bool // API keys taken as "Api-Key <key>", besides TestKey
	perSecond  int             // requests a second before 429; 0: no limit
	retryAfter string          // the 429's Retry-After
	passed     []time.Time     // requests that passed the rate, for the window
}

// Start starts a fake on an httptest server, closed when tb ends.
func Start(tb testing.TB) *Server {
	tb.Helper()
	s := &Server{clock: clock.System(), tokens: map[string]bool{}, keys: map[string]bool{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	tb.Cleanup(s.srv.Close)
	return s
}

// URL is the translate method's URL.
func (s *Server) URL() string { return s.srv.URL + Path }

// Config is a client configuration for this fake: its URL over plain HTTP,
// API key TestKey.
func (s *Server) Config() translate.Config {
	return translate.Config{URL: s.URL(), Insecure: true, Credentials: KeyCredentials(TestKey)}
}

// KeyCredentials authorize with API key key, as SpeechKit's do.
func KeyCredentials(key string) translate.Credentials {
	a, err := speechkit.NewAuthorizer(key, "", "", nil)
	if err != nil {
		panic(err) // an API key needs nothing that can fail
	}
	return a
}

// AcceptToken makes the fake take "Bearer <token>" too.
func (s *Server) AcceptToken(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens[token] = true
}

// AcceptKey makes the fake take "Api-Key <key>" too: a stack whose
// credentials are SpeechKit's fake's.
func (s *Server) AcceptKey(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keys[key] = true
}

// SetClock sets the clock the rate is counted by (clock.System() until
// then): a test pacing the client with a fake clock gives the same one.
func (s *Server) SetClock(c clock.Clock) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clock = c
}

// Limit makes the fake answer 429 to a request when perSecond requests
// have passed in the second before it, with Retry-After retryAfter unless
// it is empty. 0 lifts the limit.
func (s *Server) Limit(perSecond int, retryAfter string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.perSecond, s.retryAfter = perSecond, retryAfter
}

// Script sets what each later request that passes the fake's checks is
// answered; fn sees the request (Status not yet set).
func (s *Server) Script(fn func(Call) Plan) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = fn
}

// Calls are the requests so far, in order, refused ones included.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

// wireRequest is the request body (translate/api-ref/Translation/translate.md).
type wireRequest struct {
	FolderID           string   `json:"folderId"`
	Texts              []string `json:"texts"`
	TargetLanguageCode string   `json:"targetLanguageCode"`
	SourceLanguageCode string   `json:"sourceLanguageCode"`
	Format             string   `json:"format"`
}

type wireTranslation struct {
	Text                 string `json:"text"`
	DetectedLanguageCode string `json:"detectedLanguageCode,omitempty"`
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != Path {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		answerError(w, http.StatusMethodNotAllowed, 12, "method not allowed")
		return
	}
	c := Call{
		Authorization: r.Header.Get("Authorization"),
		RequestID:     r.Header.Get("x-client-request-id"),
		Header:        r.Header.Clone(),
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	var req wireRequest
	if err == nil {
		err = json.Unmarshal(body, &req)
	}
	c.Texts, c.Target, c.Source, c.Format, c.FolderID = req.Texts, req.TargetLanguageCode, req.SourceLanguageCode, req.Format, req.FolderID
	for _, t := range req.Texts {
		c.Chars += utf8.RuneCountInString(t)
	}

	s.mu.Lock()
	c.At = s.clock.Now()
	i := len(s.calls)
	s.calls = append(s.calls, c)
	status, code, msg, retryAfter := s.check(c, err)
	script := s.script
	s.mu.Unlock()

	if status != 0 {
		if retryAfter != "" {
			w.Header().Set("Retry-After", retryAfter)
		}
		s.setStatus(i, status)
		answerError(w, status, code, msg)
		return
	}
	var plan Plan
	if script != nil {
		plan = script(c)
	}
	s.answer(w, i, c, plan)
}

// check is the fake's refusal of c, before the script (0 when none);
// called with mu held.
func (s *Server) check(c Call, decodeErr error) (status, code int, msg, retryAfter string) {
	auth := c.Authorization
	token, bearer := strings.CutPrefix(auth, "Bearer ")
	key, isKey := strings.CutPrefix(auth, "Api-Key ")
	known := isKey && (key == TestKey || s.keys[key]) || bearer && s.tokens[token]
	if !known {
		return http.StatusUnauthorized, 16, "unknown credentials: " + auth, ""
	}
	if decodeErr != nil {
		return http.StatusBadRequest, 3, "the request is not JSON", ""
	}
	if s.perSecond > 0 {
		cutoff := c.At.Add(-time.Second)
		kept := s.passed[:0]
		for _, t := range s.passed {
			if t.After(cutoff) {
				kept = append(kept, t)
			}
		}
		s.passed = kept
		if len(s.passed) >= s.perSecond {
			return http.StatusTooManyRequests, 8, "limit on requests was exceeded", s.retryAfter
		}
		s.passed = append(s.passed, c.At)
	}
	switch {
	case c.Target == "":
		return http.StatusBadRequest, 3, "target_language_code must be set", ""
	case !translate.Supported(c.Target) || c.Target != strings.ToLower(c.Target):
		return http.StatusBadRequest, 3, "unsupported target_language_code: " + c.Target, ""
	case c.Source != "" && (!translate.Supported(c.Source) || c.Source != strings.ToLower(c.Source)):
		return http.StatusBadRequest, 3, "unsupported source_language_code: " + c.Source, ""
	case c.Format != "" && c.Format != "PLAIN_TEXT" && c.Format != "HTML" && c.Format != "FORMAT_UNSPECIFIED":
		return http.StatusBadRequest, 3, "unsupported format: " + c.Format, ""
	case len(c.Texts) == 0:
		return http.StatusBadRequest, 3, "texts are empty", ""
	case c.Chars > MaxChars:
		return http.StatusBadRequest, 3, fmt.Sprintf("total texts length must be not greater than %d, got: %s", MaxChars, strings.Join(c.Texts, "")), ""
	}
	return 0, 0, "", ""
}

func (s *Server) answer(w http.ResponseWriter, i int, c Call, p Plan) {
	if p.Drop {
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				_ = conn.Close()
				return
			}
		}
		panic(http.ErrAbortHandler)
	}
	status := p.Status
	if status == 0 {
		status = http.StatusOK
	}
	if p.RetryAfter != "" {
		w.Header().Set("Retry-After", p.RetryAfter)
	}
	w.Header().Set("x-server-trace-id", "trace-"+c.RequestID)
	s.setStatus(i, status)
	if p.Body != nil {
		w.WriteHeader(status)
		_, _ = w.Write(p.Body)
		return
	}
	if status != http.StatusOK {
		code, msg := p.Code, p.Message
		if code == 0 {
			code = grpcCode(status)
		}
		if msg == "" {
			msg = http.StatusText(status)
		}
		answerError(w, status, code, msg)
		return
	}
	out := make([]wireTranslation, 0, len(c.Texts))
	if p.Translations != nil {
		for _, t := range p.Translations {
			out = append(out, wireTranslation{Text: t})
		}
	} else {
		for _, t := range c.Texts {
			out = append(out, wireTranslation{Text: Translation(t, c.Target), DetectedLanguageCode: detect(t, c.Source)})
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"translations": out})
}

func (s *Server) setStatus(i, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls[i].Status = status
}

// Translation is the fake's translation of text into target.
func Translation(text, target string) string { return "[" + target + "] " + text }

// detect is the fake's language detection: the source when given (the API
// may leave it out then; the fake says it), Russian for text with a
// Cyrillic letter, English otherwise.
func detect(text, source string) string {
	if source != "" {
		return source
	}
	for _, r := range text {
		if unicode.Is(unicode.Cyrillic, r) {
			return "ru"
		}
	}
	return "en"
}

// grpcCode is the gRPC code of an HTTP status, as the API's error table
// pairs them (_includes/errors-handling.md).
func grpcCode(status int) int {
	switch status {
	case 400:
		return 3
	case 401:
		return 16
	case 403:
		return 7
	case 404:
		return 5
	case 429:
		return 8
	case 501:
		return 12
	case 503:
		return 14
	case 504:
		return 4
	default:
		return 13
	}
}

func answerError(w http.ResponseWriter, status, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"code":    code,
		"message": msg,
		"details": []map[string]string{{"@type": "type.googleapis.com/google.rpc.RequestInfo", "requestId": "fake"}},
	})
}
