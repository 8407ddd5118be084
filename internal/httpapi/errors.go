package httpapi

import (
	"cmp"
	"encoding/json"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"transcriber/internal/errs"
	"transcriber/internal/spend"
)

var errNoRoute = errs.New(errs.NotFound, codeRouteNotFound, "no such route")

// statusByKind is the one table from the error vocabulary to HTTP status.
var statusByKind = map[errs.Kind]int{
	errs.NotFound:     http.StatusNotFound,
	errs.Invalid:      http.StatusBadRequest,
	errs.Conflict:     http.StatusConflict,
	errs.Unauthorized: http.StatusUnauthorized,
	errs.Unavailable:  http.StatusServiceUnavailable,
	errs.Permanent:    http.StatusUnprocessableEntity,
	errs.Internal:     http.StatusInternalServerError,
}

// statusByCode refines statusByKind by code.
var statusByCode = map[string]int{
	codeBodyTooLarge:        http.StatusRequestEntityTooLarge,
	codeMethodNotAllowed:    http.StatusMethodNotAllowed,
	codeUnsupportedType:     http.StatusUnsupportedMediaType,
	codeGone:                http.StatusGone,
	codeExpired:             http.StatusGone,
	spend.CodeTooManyActive: http.StatusTooManyRequests,
}

const (
	codeBodyTooLarge     = "body_too_large"
	codeMethodNotAllowed = "method_not_allowed"
	codeUnsupportedType  = "unsupported_media_type"
	codeGone             = "deleted"
	codeExpired          = "expired"
	codeNotDone          = "not_done"
	codeNoSummary        = "no_summary"
	codeRouteNotFound    = "not_found"
)

// writeError answers the one error shape; an unknown error is logged in
// full and shown as a generic message.
func writeError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	code := errs.CodeOf(err)
	status, ok := statusByCode[code]
	if !ok {
		status = statusByKind[errs.KindOf(err)]
	}
	route := cmp.Or(r.Pattern, "unmatched")
	if status >= 500 {
		log.ErrorContext(r.Context(), "request failed", "method", r.Method, "route", route, "status", status, "error", err.Error())
	} else {
		log.InfoContext(r.Context(), "request refused", "method", r.Method, "route", route, "status", status, "code", code)
	}
	switch status {
	case http.StatusUnauthorized:
		w.Header().Set("WWW-Authenticate", `Bearer realm="transcriber"`)
	case http.StatusServiceUnavailable:
		w.Header().Set("Retry-After", "5")
	case http.StatusTooManyRequests:
		w.Header().Set("Retry-After", strconv.Itoa(int(spend.RetryAfter/time.Second)))
	}
	writeJSON(w, status, map[string]errorView{"error": {Code: code, Message: errs.MessageOf(err)}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}
