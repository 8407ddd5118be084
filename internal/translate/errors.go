package translate

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"transcriber/internal/errs"
)

// The codes of the errors this package returns. Their messages are for
// people; the API's words go only into the wrapped cause, cut short and
// with the secrets and the texts removed.
const (
	// Retry later (errs.Unavailable).
	CodeUnavailable = "translate_unavailable" // 5xx after the retries, a transport error, the context ended
	// CodeQuota: 429 after the retries, a Retry-After longer than the
	// client waits (RetryAfter says how long), or the pacer's wait too
	// long. No fault of the texts'.
	CodeQuota = "translate_quota"
	// CodeAccessDenied: 401 or 403, a key, a token or a role
	// (ai.translate.user) is wrong; someone must fix it.
	CodeAccessDenied    = "translate_access_denied"
	codeAuthUnavailable = "translate_auth_unavailable" // no IAM token to be had

	// The request is wrong and will stay wrong (errs.Invalid): a language
	// code that is not one (refused here, nothing sent), or the API's 400.
	CodeInvalid = "translate_invalid"

	// Give up (errs.Permanent): the API does not translate from or into
	// the language asked for.
	CodeUnsupportedLanguage = "translate_unsupported_language"

	// Anything else (errs.Internal): an answer that is not the API's.
	codeInternal = "translate_error"
)

const (
	msgUnavailable  = "the translator is unavailable; try again later"
	msgQuota        = "the translator's quota is used up for now; try again later"
	msgAccessDenied = "the translator refused this service's credentials; try again later"
	msgInvalid      = "the translator refused the request"
	msgUnsupported  = "the translator does not support this language"
)

const (
	// maxQuoted bounds the part of an error answer's message kept in the
	// cause, for logs.
	maxQuoted = 200
	// minScrubbed is the shortest text scrubbed from an error answer's
	// message: a shorter one ("ok") would blank out the API's own words.
	minScrubbed  = 4
	textRedacted = "[text]"
	// quoteWindow is the shortest run of a text's bytes taken as a quote
	// of it in an error answer's message.
	quoteWindow = 12
	withheld    = "[withheld: the message quotes the texts]"
)

// apiError is an answer other than 200, the cause of the classified error:
// the status, the API's code (a gRPC code) and message, cut and cleaned,
// the answer's x-server-trace-id, and the Retry-After asked for.
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

// RetryAfter is the wait the API asked for (Retry-After) in the answer that
// ended the call with err, if it asked for one.
func RetryAfter(err error) (time.Duration, bool) {
	var e *apiError
	if errors.As(err, &e) && e.hasRetry {
		return e.retryAfter, true
	}
	return 0, false
}

// classify turns an answer other than 200 into the errs vocabulary
// (docs/platform.md, "Translate"), and says whether it may be retried:
//
//   - 429: errs.Unavailable CodeQuota, retried;
//   - 5xx, 408: errs.Unavailable CodeUnavailable, retried;
//   - 400 whose message says a language code is unsupported:
//     errs.Permanent CodeUnsupportedLanguage;
//   - 400, 413: errs.Invalid CodeInvalid;
//   - 401, 403: errs.Unavailable CodeAccessDenied;
//   - anything else: errs.Internal.
//
// raw is the API's message as it came: e holds it cleaned.
func classify(e *apiError, raw string) (err error, retry bool) {
	switch s := e.status; {
	case s == 429:
		return errs.Wrap(e, errs.Unavailable, CodeQuota, msgQuota), true
	case s >= 500 && s <= 599, s == 408:
		return errs.Wrap(e, errs.Unavailable, CodeUnavailable, msgUnavailable), true
	case s == 400 && unsupportedLanguage(raw):
		return errs.Wrap(e, errs.Permanent, CodeUnsupportedLanguage, msgUnsupported), false
	case s == 400, s == 413:
		return errs.Wrap(e, errs.Invalid, CodeInvalid, msgInvalid), false
	case s == 401, s == 403:
		return errs.Wrap(e, errs.Unavailable, CodeAccessDenied, msgAccessDenied), false
	default:
		return errs.Wrap(e, errs.Internal, codeInternal, ""), false
	}
}

// unsupportedLanguage: the API's 400 for a language it does not know reads
// "unsupported target_language_code: xx" (or source_…), as public clients
// of the API match it [U] (docs/platform.md, "Translate").
func unsupportedLanguage(message string) bool {
	m := strings.ToLower(message)
	return strings.Contains(m, "unsupported") && strings.Contains(m, "language")
}

// clean is text fit for an error's cause: the secrets and every text of
// the request (minScrubbed bytes and longer) removed, then cut short; and
// if what is left still quotes a text (quoteWindow bytes of one, as a
// message quoting the start of a long text would), nothing but a note.
// Secrets go before the cut, which could leave a part of one.
func (c *Client) clean(text string, texts []string) string {
	text = c.creds.Scrub(text)
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

// quotes reports whether msg holds quoteWindow bytes in a row of one of
// texts.
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

// cut is s cut to at most n bytes at a character boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
