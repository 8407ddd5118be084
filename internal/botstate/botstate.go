// Package botstate is each Telegram chat's settings; the bot's messages
// are outbox entries (package outbox). The stores (internal/store/sqlite,
// internal/store/ydb) implement Store, and botstatetest is their contract.
package botstate

import (
	"context"
	"strconv"
	"strings"
	"time"

	"transcriber/internal/errs"
)

// Auto says whether the bot transcribes a chat's voice messages unasked.
type Auto string

// The values of Chat.Auto. The empty value is the default: on for private
// chats, off for groups.
const (
	AutoDefault Auto = ""
	AutoOn      Auto = "on"
	AutoOff     Auto = "off"
)

// Chat is one chat's settings. A chat never seen has the zero settings.
type Chat struct {
	ID       int64
	Language string // recognition language pinned by /lang, e.g. "ru-RU"; "" = the service default
	Format   string // document format for long results: "txt", "srt" or "vtt"; "" = txt
	Auto     Auto
	UILang   string // language of the bot's replies: "ru" or "en"; "" = not yet known
	Mode     string // recognition priority set by /mode: "normal" or "deferred" (job.Priority); "" = normal
	// Features are the job options the chat turned on (/speakers,
	// /summary): the words FeatureSpeakers and FeatureSummary, in that
	// order, and /translate's "translate:<lang>", separated by a space;
	// "" = none.
	Features string
	// BlockedAt is when a send found the bot blocked in this chat (403);
	// sends to it stop until the chat writes again. Zero when not blocked.
	BlockedAt time.Time
	UpdatedAt time.Time
}

// The words of Chat.Features.
const (
	FeatureSpeakers = "speakers"
	FeatureSummary  = "summary"
)

// Has reports whether the chat turned the feature on.
func (c Chat) Has(feature string) bool {
	for _, f := range strings.Fields(c.Features) {
		if f == feature {
			return true
		}
	}
	return false
}

// WithFeature returns Features with the feature turned on or off; the
// known words are kept in one order, unknown ones dropped.
func (c Chat) WithFeature(feature string, on bool) string {
	var out []string
	for _, f := range []string{FeatureSpeakers, FeatureSummary} {
		if (f == feature && on) || (f != feature && c.Has(f)) {
			out = append(out, f)
		}
	}
	if lang := c.TranslateTo(); lang != "" {
		out = append(out, featureTranslate+lang)
	}
	return strings.Join(out, " ")
}

// featureTranslate starts the word of Chat.Features that names the
// language /translate set: "translate:en".
const featureTranslate = "translate:"

// TranslateTo is the language /translate set, each transcript coming with
// its translation into it; "" for none.
func (c Chat) TranslateTo() string {
	for _, f := range strings.Fields(c.Features) {
		if lang, ok := strings.CutPrefix(f, featureTranslate); ok {
			return lang
		}
	}
	return ""
}

// WithTranslate is c's Features with /translate set to lang ("" for off).
func (c Chat) WithTranslate(lang string) string {
	var out []string
	for _, f := range strings.Fields(c.Features) {
		if !strings.HasPrefix(f, featureTranslate) {
			out = append(out, f)
		}
	}
	if lang != "" {
		out = append(out, featureTranslate+lang)
	}
	return strings.Join(out, " ")
}

// ErrInvalid is a malformed request.
var ErrInvalid = errs.New(errs.Invalid, "chat_invalid", "the chat request is not valid")

// Store keeps chats. Every method may also fail with an errs.Unavailable
// error when the backend does.
type Store interface {
	// Chat returns a chat's settings; a chat never seen is Chat{ID: id}
	// with no error.
	Chat(ctx context.Context, id int64) (Chat, error)

	// UpdateChat applies change to the chat's settings (the zero settings
	// when never seen) and writes the result with UpdatedAt = now, as one
	// atomic step: concurrent updates of the same chat each see the
	// other's result. change must not alter the ID, and may run more than
	// once (a store retries its transaction on a conflict): it must depend
	// only on the chat it is given. It returns what was written.
	UpdateChat(ctx context.Context, id int64, now time.Time, change func(*Chat)) (Chat, error)

	// ForgetChat removes the chat's settings and all its outbox entries
	// (Telegram keys starting with ChatPrefix).
	ForgetChat(ctx context.Context, chatID int64) error
}

// ChatPrefix starts the outbox key of every Telegram message of a chat:
// the keys are "<chat>/<message>/<part>".
func ChatPrefix(chatID int64) string { return strconv.FormatInt(chatID, 10) + "/" }
