// Package botstate is each Telegram chat's settings; the bot's messages
// are outbox entries. botstatetest is the stores' contract.
package botstate

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"transcriber/internal/errs"
)

// Auto says whether the bot transcribes a chat's voice messages unasked;
// the default is on for private chats, off for groups.
type Auto string

const (
	AutoDefault Auto = ""
	AutoOn      Auto = "on"
	AutoOff     Auto = "off"
)

// Chat is one chat's settings; "" is the default of each. A chat never
// seen has the zero settings.
type Chat struct {
	ID       int64
	Language string // recognition language pinned by /lang, e.g. "ru-RU"
	Format   string // document format for long results: "txt" (default), "srt" or "vtt"
	Auto     Auto
	UILang   string // language of the bot's replies: "ru" or "en"
	Mode     string // /mode: "normal" or "deferred" (job.Priority)
	// Features are the options the chat turned on, space-separated:
	// FeatureSpeakers and FeatureSummary in that order, then /translate's
	// "translate:<lang>".
	Features string
	// BlockedAt is when a send found the bot blocked (403); sends stop
	// until the chat writes again.
	BlockedAt time.Time
	UpdatedAt time.Time
}

// The words of Chat.Features.
const (
	FeatureSpeakers  = "speakers"
	FeatureSummary   = "summary"
	featureTranslate = "translate:"
)

// Has reports whether the chat turned the feature on.
func (c Chat) Has(feature string) bool { return slices.Contains(strings.Fields(c.Features), feature) }

// WithFeature returns Features with the feature turned on or off; the
// known words are kept in order, unknown ones dropped.
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

// TranslateTo is the language /translate set; "" for none.
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

// Store keeps chats; any method may fail with errs.Unavailable.
type Store interface {
	// Chat returns a chat's settings: Chat{ID: id} for one never seen.
	Chat(ctx context.Context, id int64) (Chat, error)

	// UpdateChat applies change to the chat's settings and writes them
	// with UpdatedAt = now, atomically (ApplyChatUpdate). change may run
	// more than once (a store retries on a conflict), so it must depend
	// only on the chat it is given. It returns what was written.
	UpdateChat(ctx context.Context, id int64, now time.Time, change func(*Chat)) (Chat, error)

	// ForgetChat removes the chat's settings and its outbox entries
	// (Telegram keys starting with ChatPrefix).
	ForgetChat(ctx context.Context, chatID int64) error
}

// ChatPrefix starts the outbox key of every Telegram message of a chat:
// the keys are "<chat>/<message>/<part>".
func ChatPrefix(chatID int64) string { return strconv.FormatInt(chatID, 10) + "/" }

// ValidateChatUpdate is UpdateChat's argument rule, checked before a store
// is asked.
func ValidateChatUpdate(now time.Time) error {
	if now.IsZero() {
		return fmt.Errorf("%w: no time given", ErrInvalid)
	}
	return nil
}

// ApplyChatUpdate is the rule of UpdateChat, run inside a store's
// transaction on cur, the chat as stored: cur after change, with UpdatedAt
// = now, times in UTC milliseconds as stored. Errors: ErrInvalid for a
// zero now (change not called) or a change of the chat id.
func ApplyChatUpdate(cur Chat, now time.Time, change func(*Chat)) (Chat, error) {
	if err := ValidateChatUpdate(now); err != nil {
		return Chat{}, err
	}
	c := cur
	change(&c)
	if c.ID != cur.ID {
		return Chat{}, fmt.Errorf("%w: the change altered the chat id %d to %d", ErrInvalid, cur.ID, c.ID)
	}
	if !c.BlockedAt.IsZero() {
		c.BlockedAt = c.BlockedAt.UTC().Truncate(time.Millisecond)
	}
	c.UpdatedAt = now.UTC().Truncate(time.Millisecond)
	return c, nil
}
