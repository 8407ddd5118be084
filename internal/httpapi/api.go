// Package httpapi is the HTTP API: jobs with presigned uploads, their
// transcripts, and deletion, for any HTTP client. One routing table serves
// the API Gateway events of the api function (Gateway) and plain net/http
// (the local stack, the tests).
package httpapi

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"path"
	"strings"
	"time"

	"transcriber/internal/apitoken"
	"transcriber/internal/callback"
	"transcriber/internal/clock"
	"transcriber/internal/errs"
	"transcriber/internal/job"
	"transcriber/internal/quota"
	"transcriber/internal/spend"
	"transcriber/internal/storage/s3"
	"transcriber/internal/transcript"
)

// Objects is the object storage the API signs uploads for, reads
// transcripts from and deletes files in. Missing objects are errs.NotFound.
type Objects interface {
	PresignPut(ctx context.Context, key string, size int64, contentType string, ttl time.Duration) (s3.Presigned, error)
	Get(ctx context.Context, key string) (io.ReadCloser, error)
	Delete(ctx context.Context, key string) error
}

// Recognitions deletes a job's recognitions at the recognizer.
type Recognitions interface {
	Delete(ctx context.Context, operationID string) error
}

// Callbacks keeps the callbacks of jobs made with a callback_url
// (callback.Sender).
type Callbacks interface {
	// Register records job j's callback to url, made by tok; a job's first
	// registration is kept, and returned as stored.
	Register(ctx context.Context, j job.Job, tok apitoken.Token, url string) (callback.Delivery, error)
	// Get returns a job's callback: outbox.ErrNotFound when it has none.
	Get(ctx context.Context, jobID string) (callback.Delivery, error)
}

// Deps are the API's collaborators.
type Deps struct {
	Jobs         job.Store
	Tokens       apitoken.Store
	Objects      Objects
	Recognitions Recognitions
	// Counters keeps what is counted against the limits (package spend):
	// the caller's unfinished jobs, which POST /v1/jobs counts, and the
	// audio, which GET /v1/usage reads. Nil counts nothing: no limit of
	// unfinished jobs, and no audio used.
	Counters quota.Counters
	// Callbacks keeps job callbacks; nil refuses a callback_url.
	Callbacks Callbacks
	// Translations translates transcripts (package translation); nil
	// refuses translate_to.
	Translations Translations
	Clock        clock.Clock
	Log          *slog.Logger
}

// Translations gives a done job's transcript in another language,
// translated once and kept (translation.Service.Of).
type Translations interface {
	Of(ctx context.Context, j job.Job, t transcript.Transcript, lang string) (transcript.Transcript, error)
}

// Config holds the API's numbers and switches; see docs/settings.md.
type Config struct {
	// UploadURLTTL is how long a presigned upload URL stays valid.
	UploadURLTTL time.Duration
	// UploadGrace is how long after the URL expires an upload may still be
	// arriving (a PUT started in time runs on); then the job is swept.
	UploadGrace time.Duration
	// MaxSourceBytes is the largest file a job takes: the single-PUT limit.
	MaxSourceBytes int64
	// DefaultLanguage is a job's language when the request names none.
	DefaultLanguage string
	// ValidLanguage tells the recognizer's languages.
	ValidLanguage func(string) bool
	// MaxBodyBytes bounds a request body.
	MaxBodyBytes int64
	// CORSOrigins are the browser origins allowed to call the API; "*"
	// allows any. Empty: no CORS headers.
	CORSOrigins []string
	// UploadLinkSecret keys the one-time upload links the Telegram bot
	// hands out for files too large for it (package uploadlink). Empty:
	// the upload page's routes answer 404.
	UploadLinkSecret []byte
	// Summaries says whether jobs may ask for a summary: a summary model is
	// configured (SUMMARY_MODEL_URI). Without one, "summary": true is
	// answered 400 summary_unavailable.
	Summaries bool
	// Limits are the spend limits (package spend): a caller with
	// Limits.ActiveJobs unfinished jobs (counted in Counters) is answered
	// 429 too_many_active_jobs, and GET /v1/usage shows them.
	Limits spend.Limits
	// CallbackAllowPrivate (CALLBACK_ALLOW_PRIVATE) lets a callback_url
	// be http and name any address: for local use and tests only.
	CallbackAllowPrivate bool
	// RequestTimeout is the longest a request's work runs before the API
	// answers 503 request_timeout (within, deadline.go); a deadline the
	// request's context has already (CallContext, in the api function)
	// ends it sooner. 0: DefaultRequestTimeout.
	RequestTimeout time.Duration
}

// UploadWindow is how long a job waits for its file: the upload URL's
// lifetime and the grace after it.
func (c Config) UploadWindow() time.Duration {
	d := c.withDefaults()
	return d.UploadURLTTL + d.UploadGrace
}

func (c Config) withDefaults() Config {
	if c.UploadURLTTL == 0 {
		c.UploadURLTTL = 15 * time.Minute
	}
	if c.UploadGrace == 0 {
		c.UploadGrace = 2 * time.Hour
	}
	if c.MaxSourceBytes == 0 {
		c.MaxSourceBytes = s3.MaxPutSize
	}
	if c.DefaultLanguage == "" {
		c.DefaultLanguage = "ru-RU"
	}
	if c.ValidLanguage == nil {
		c.ValidLanguage = func(string) bool { return true }
	}
	if c.MaxBodyBytes == 0 {
		c.MaxBodyBytes = 16 << 10
	}
	if c.RequestTimeout <= 0 {
		c.RequestTimeout = DefaultRequestTimeout
	}
	return c
}

// API serves the routes.
type API struct {
	Deps
	cfg Config
	mux *http.ServeMux
}

// Route is one line of the routing table; the OpenAPI document lists the
// same lines (a test keeps them equal).
type Route struct {
	Method  string
	Path    string // net/http pattern syntax, which is OpenAPI's: /v1/jobs/{id}
	Auth    bool
	handler func(a *API, w http.ResponseWriter, r *http.Request, caller apitoken.Token) error
}

// Routes is the routing table.
var Routes = []Route{
	{Method: http.MethodGet, Path: "/healthz", handler: (*API).health},
	{Method: http.MethodPost, Path: "/v1/jobs", Auth: true, handler: (*API).createJob},
	{Method: http.MethodGet, Path: "/v1/jobs", Auth: true, handler: (*API).listJobs},
	{Method: http.MethodGet, Path: "/v1/jobs/{id}", Auth: true, handler: (*API).getJob},
	{Method: http.MethodDelete, Path: "/v1/jobs/{id}", Auth: true, handler: (*API).deleteJob},
	{Method: http.MethodGet, Path: "/v1/jobs/{id}/transcript", Auth: true, handler: (*API).transcript},
	{Method: http.MethodGet, Path: "/v1/jobs/{id}/summary", Auth: true, handler: (*API).summary},
	{Method: http.MethodGet, Path: "/v1/usage", Auth: true, handler: (*API).usage},
	// The upload page for a Telegram file too large for the bot: the
	// link's token is the credential (upload_page.go).
	{Method: http.MethodGet, Path: "/upload/{id}", handler: (*API).uploadPage},
	{Method: http.MethodPost, Path: "/upload/{id}", handler: (*API).signUpload},
	{Method: http.MethodGet, Path: "/upload/{id}/status", handler: (*API).uploadStatus},
}

// New returns the API.
func New(d Deps, cfg Config) *API {
	if d.Clock == nil {
		d.Clock = clock.System()
	}
	if d.Log == nil {
		d.Log = slog.Default()
	}
	a := &API{Deps: d, cfg: cfg.withDefaults(), mux: http.NewServeMux()}
	byPath := map[string][]Route{}
	var paths []string
	for _, rt := range Routes {
		if _, ok := byPath[rt.Path]; !ok {
			paths = append(paths, rt.Path)
		}
		byPath[rt.Path] = append(byPath[rt.Path], rt)
	}
	for _, p := range paths {
		routes := byPath[p]
		// Methods are matched here, not by the mux, so a wrong method gets
		// the JSON error shape like every other error.
		a.mux.HandleFunc(p, func(w http.ResponseWriter, r *http.Request) { a.dispatch(w, r, routes) })
	}
	a.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, r, a.Log, errs.New(errs.NotFound, codeRouteNotFound, "no such route"))
	})
	return a
}

// ServeHTTP answers a request.
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if a.cors(w, r) {
		return
	}
	if p := r.URL.Path; p == "" || path.Clean(p) != p {
		// The mux would redirect to the clean path in HTML; no route of
		// ours needs that, so it is not found, in the one error shape.
		writeError(w, r, a.Log, errs.New(errs.NotFound, codeRouteNotFound, "no such route"))
		return
	}
	a.mux.ServeHTTP(w, r)
}

func (a *API) dispatch(w http.ResponseWriter, r *http.Request, routes []Route) {
	var allowed []string
	for _, rt := range routes {
		allowed = append(allowed, rt.Method)
		if rt.Method != r.Method {
			continue
		}
		a.within(w, r, func(w http.ResponseWriter, r *http.Request) {
			var caller apitoken.Token
			if rt.Auth {
				var err error
				if caller, err = a.authenticate(r); err != nil {
					writeError(w, r, a.Log, err)
					return
				}
			}
			if err := rt.handler(a, w, r, caller); err != nil {
				writeError(w, r, a.Log, err)
			}
		})
		return
	}
	w.Header().Set("Allow", strings.Join(allowed, ", "))
	writeError(w, r, a.Log, errs.New(errs.Invalid, codeMethodNotAllowed, "this route does not take "+r.Method))
}

// authenticate reads the caller's token from "Authorization: Bearer …" or,
// since a gateway may not pass Authorization on, "X-Api-Key: …".
func (a *API) authenticate(r *http.Request) (apitoken.Token, error) {
	secret := r.Header.Get("X-Api-Key")
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, rest, ok := strings.Cut(h, " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") {
			return apitoken.Token{}, apitoken.ErrUnauthorized
		}
		secret = strings.TrimSpace(rest)
	}
	return apitoken.Authenticate(r.Context(), a.Tokens, secret)
}

func (a *API) health(w http.ResponseWriter, _ *http.Request, _ apitoken.Token) error {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	return nil
}

func routeOf(r *http.Request) string {
	if r.Pattern != "" {
		return r.Pattern
	}
	return "unmatched"
}

// cors sets the CORS headers for an allowed origin and answers a
// preflight; it reports whether the request was answered.
func (a *API) cors(w http.ResponseWriter, r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" || len(a.cfg.CORSOrigins) == 0 {
		return false
	}
	allowed := false
	for _, o := range a.cfg.CORSOrigins {
		allowed = allowed || o == "*" || o == origin
	}
	if !allowed {
		return false
	}
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", origin)
	h.Add("Vary", "Origin")
	if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
		h.Set("Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS")
		h.Set("Access-Control-Allow-Headers", "Authorization, X-Api-Key, Content-Type, Idempotency-Key")
		h.Set("Access-Control-Max-Age", "600")
		w.WriteHeader(http.StatusNoContent)
		return true
	}
	return false
}
