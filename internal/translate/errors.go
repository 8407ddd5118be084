package translate

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"transcriber/internal/errs"
)

// Error codes (classify says when). The API's words go only into the
// wrapped cause, cut short, without secrets and texts.
const (
	CodeUnavailable         = "translate_unavailable"
	CodeQuota               = "translate_quota"
	CodeAccessDenied        = "translate_access_denied" // a key, token or role (ai.translate.user) to fix
	codeAuthUnavailable     = "translate_auth_unavailable"
	CodeInvalid             = "translate_invalid"
	CodeUnsupportedLanguage = "translate_unsupported_language"
	codeInternal            = "translate_error"
)

const (
	msgUnavailable  = "the translator is unavailable; try again later"
	msgQuota        = "the translator's quota is used up for now; try again later"
	msgAccessDenied = "the translator refused this service's credentials; try again later"
	msgInvalid      = "the translator refused the request"
	msgUnsupported  = "the translator does not support this language"
)

const (
	maxQuoted = 200 // bytes of an error message kept
	// minScrubbed: a shorter text ("ok") scrubbed would blank the API's words.
	minScrubbed  = 4
	textRedacted = "[text]"
	quoteWindow  = 12 // bytes of a text in a row that make a quote
	withheld     = "[withheld: the message quotes the texts]"
)

// apiError, an answer other than 200, is the classified error's cause;
// code is a gRPC code, message is cleaned.
type apiError struct {
	status     int
	code       int
	message    string
	trace      string
	retryAfter time.Duration
	hasRetry   bool
}

func (e *apiError) Error() string {
	s := fmt.Sprintf("translate answered %d", e.status)
	if e.code != 0 {
		s += fmt.Sprintf(" (code %d)", e.code)
	}
	if e.message != "" {
		s += ": " + e.message
	}
	if e.trace != "" {
		s += "; x-server-trace-id " + e.trace
	}
	if e.hasRetry {
		s += fmt.Sprintf("; retry after %s", e.retryAfter)
	}
	return s
}

// classify maps an answer other than 200 to errs (docs/platform.md,
// "Translate") and whether to retry; raw is the API's message uncleaned.
func classify(e *apiError, raw string) (err error, retry bool) {
	switch s := e.status; {
	case s == 429:
		return errs.Wrap(e, errs.Unavailable, CodeQuota, msgQuota), true
	case s >= 500 && s <= 599, s == 408:
		return unavailable(e), true
	case s == 400 && unsupportedLanguage(raw):
		return errs.Wrap(e, errs.Permanent, CodeUnsupportedLanguage, msgUnsupported), false
	case s == 400, s == 413:
		return errs.Wrap(e, errs.Invalid, CodeInvalid, msgInvalid), false
	case s == 401, s == 403:
		return errs.Wrap(e, errs.Unavailable, CodeAccessDenied, msgAccessDenied), false
	default:
		return internal(e), false
	}
}

// unsupportedLanguage matches the 400 "unsupported target_language_code:
// xx" (or source_…) as public clients do [U] (docs/platform.md, "Translate").
func unsupportedLanguage(message string) bool {
	m := strings.ToLower(message)
	return strings.Contains(m, "unsupported") && strings.Contains(m, "language")
}

// clean is text fit for an error's cause: secrets (before the cut, which
// could leave part of one) and the request's texts removed, cut short, and
// withheld altogether if it still quotes a text.
func (c *Client) clean(text string, texts []string) string {
	text = c.cfg.Credentials.Scrub(text)
	for _, t := range texts {
		if len(t) >= minScrubbed {
			text = strings.ReplaceAll(text, t, textRedacted)
		}
	}
	text = cut(text, maxQuoted)
	if quotes(text, texts) {
		return withheld
	}
	return text
}

func quotes(msg string, texts []string) bool {
	if len(msg) < quoteWindow {
		return false
	}
	windows := make(map[string]struct{}, len(msg))
	for i := 0; i+quoteWindow <= len(msg); i++ {
		windows[msg[i:i+quoteWindow]] = struct{}{}
	}
	for _, t := range texts {
		for i := 0; i+quoteWindow <= len(t); i++ {
			if _, ok := windows[t[i:i+quoteWindow]]; ok {
				return true
			}
		}
	}
	return false
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
