// Package httpapi is the HTTP API: jobs with presigned uploads, their
// transcripts, and deletion. One routing table serves API Gateway events
// (Gateway) and plain net/http.
package httpapi

import (
	"cmp"
	"context"
	"io"
	"log/slog"
	"net/http"
	"path"
	"slices"
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
	"transcriber/internal/translation"
)

// Objects is the object storage; missing objects are errs.NotFound.
type Objects interface {
	PresignPut(ctx context.Context, key string, size int64, contentType string, ttl time.Duration) (s3.Presigned, error)
	Get(ctx context.Context, key string) (io.ReadCloser, error)
	Delete(ctx context.Context, key string) error
}

// Callbacks keeps the jobs' callbacks (callback.Sender).
type Callbacks interface {
	// Register records j's callback; a job's first registration is kept
	// and returned as stored.
	Register(ctx context.Context, j job.Job, tok apitoken.Token, url string) (callback.Delivery, error)
	Get(ctx context.Context, jobID string) (callback.Delivery, error)
}

// Deps: nil Counters count nothing; nil Callbacks refuse callback_url,
// nil Translations translate_to.
type Deps struct {
	Jobs         job.Store
	Tokens       apitoken.Store
	Objects      Objects
	Recognitions job.Deleter
	Counters     quota.Counters
	Callbacks    Callbacks
	Translations *translation.Service
	Clock        clock.Clock
	Log          *slog.Logger
}

// Config holds the API's settings (docs/settings.md); zero takes the default.
type Config struct {
	UploadURLTTL    time.Duration
	DefaultLanguage string
	ValidLanguage   func(string) bool // the recognizer's languages
	MaxBodyBytes    int64
	CORSOrigins     []string // "*": any; none: no CORS headers
	// UploadLinkSecret keys the bot's upload links (package uploadlink);
	// empty: the upload page's routes answer 404.
	UploadLinkSecret []byte
	Summaries        bool // a summary model is configured
	Limits           spend.Limits
	// CallbackAllowPrivate lets a callback_url be http to any address:
	// local use and tests only.
	CallbackAllowPrivate bool
	// RequestTimeout bounds a request's work before 503 request_timeout
	// (deadline.go); 0: DefaultRequestTimeout.
	RequestTimeout time.Duration
}

// uploadGrace is how long after the URL expires a PUT started in time may
// still be arriving before the sweep.
const uploadGrace = 2 * time.Hour

// UploadWindow is how long a job waits for its file.
func (c Config) UploadWindow() time.Duration {
	return c.withDefaults().UploadURLTTL + uploadGrace
}

func (c Config) withDefaults() Config {
	c.UploadURLTTL, c.DefaultLanguage, c.MaxBodyBytes = cmp.Or(c.UploadURLTTL, 15*time.Minute), cmp.Or(c.DefaultLanguage, "ru-RU"), cmp.Or(c.MaxBodyBytes, 16<<10)
	if c.ValidLanguage == nil {
		c.ValidLanguage = func(string) bool { return true }
	}
	if c.RequestTimeout <= 0 {
		c.RequestTimeout = DefaultRequestTimeout
	}
	return c
}

type API struct {
	Deps
	cfg Config
	mux *http.ServeMux
}

// Route is one line of the routing table, which a test holds equal to
// the OpenAPI document.
type Route struct {
	Method string
	Path   string // net/http pattern syntax, which is OpenAPI's: /v1/jobs/{id}
	Auth   bool
	// handler's answer, if any, is written as JSON with 200; nil: it wrote its own
	handler func(a *API, w http.ResponseWriter, r *http.Request, caller apitoken.Token) (any, error)
}

var Routes = []Route{
	{Method: http.MethodGet, Path: "/healthz", handler: (*API).health},
	{Method: http.MethodPost, Path: "/v1/jobs", Auth: true, handler: (*API).createJob},
	{Method: http.MethodGet, Path: "/v1/jobs", Auth: true, handler: (*API).listJobs},
	{Method: http.MethodGet, Path: "/v1/jobs/{id}", Auth: true, handler: (*API).getJob},
	{Method: http.MethodDelete, Path: "/v1/jobs/{id}", Auth: true, handler: (*API).deleteJob},
	{Method: http.MethodGet, Path: "/v1/jobs/{id}/transcript", Auth: true, handler: (*API).transcript},
	{Method: http.MethodGet, Path: "/v1/jobs/{id}/summary", Auth: true, handler: (*API).summary},
	{Method: http.MethodGet, Path: "/v1/usage", Auth: true, handler: (*API).usage},
	// the bot's upload page: the link's token is the credential
	{Method: http.MethodGet, Path: "/upload/{id}", handler: (*API).uploadPage},
	{Method: http.MethodPost, Path: "/upload/{id}", handler: (*API).signUpload},
	{Method: http.MethodGet, Path: "/upload/{id}/status", handler: (*API).uploadStatus},
}

func New(d Deps, cfg Config) *API {
	d.Clock, d.Log = cmp.Or(d.Clock, clock.System()), cmp.Or(d.Log, slog.Default())
	a := &API{Deps: d, cfg: cfg.withDefaults(), mux: http.NewServeMux()}
	byPath := map[string][]Route{}
	for _, rt := range Routes {
		byPath[rt.Path] = append(byPath[rt.Path], rt)
	}
	for p, routes := range byPath {
		// methods are matched here, so a wrong one gets the JSON error shape
		a.mux.HandleFunc(p, func(w http.ResponseWriter, r *http.Request) { a.dispatch(w, r, routes) })
	}
	a.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { writeError(w, r, a.Log, errNoRoute) })
	return a
}

func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if a.cors(w, r) {
		return
	}
	if p := r.URL.Path; p == "" || path.Clean(p) != p {
		// rather than the mux's HTML redirect to the clean path
		writeError(w, r, a.Log, errNoRoute)
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
			switch v, err := rt.handler(a, w, r, caller); {
			case err != nil:
				writeError(w, r, a.Log, err)
			case v != nil:
				writeJSON(w, http.StatusOK, v)
			}
		})
		return
	}
	w.Header().Set("Allow", strings.Join(allowed, ", "))
	writeError(w, r, a.Log, errs.New(errs.Invalid, codeMethodNotAllowed, "this route does not take "+r.Method))
}

// authenticate reads "Authorization: Bearer …", or "X-Api-Key: …" since a
// gateway may not pass Authorization on.
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

func (a *API) health(w http.ResponseWriter, _ *http.Request, _ apitoken.Token) (any, error) {
	return map[string]string{"status": "ok"}, nil
}

// cors sets the headers for an allowed origin and reports whether it
// answered a preflight.
func (a *API) cors(w http.ResponseWriter, r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" || len(a.cfg.CORSOrigins) == 0 {
		return false
	}
	if !slices.Contains(a.cfg.CORSOrigins, "*") && !slices.Contains(a.cfg.CORSOrigins, origin) {
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
