// Package botstate is what the Telegram bot keeps besides jobs: each chat's
// settings, and a record of every message the bot posts for a Telegram
// message (a delivery), so a redelivered update or a retried delivery never
// posts twice.
//
// A delivery is keyed by the Telegram message it answers and a part name
// ("status", "result", "reply", …), not by job: a refusal or a command's
// answer has no job. Its protocol mirrors a job's claim: Begin takes a
// delivery to send it (creating it, or taking over one whose sender's lease
// ran out), Finish records the outcome; a delivery left pending is due again
// at NextAt and ClaimDue hands it to the timer's sweep. Telegram's sends are
// not idempotent, so exactly once is not possible: a sender that crashes
// between the send and Finish leaves the delivery to be sent again after its
// lease, the one case that can post twice.
//
// The package imports only errs; the stores (internal/store/sqlite,
// internal/store/ydb) implement Store, and botstatetest is their contract.
// The rules of Store are here too (rules.go), as pure functions (ApplyBegin
// and the rest) that every store runs inside its own transaction.
package botstate

import (
	"context"
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
	// BlockedAt is when a delivery found the bot blocked in this chat (403);
	// deliveries to it stop until the chat writes again. Zero when not
	// blocked.
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

// DeliveryState is where a delivery stands.
type DeliveryState string

// Delivery states. Sent and Abandoned are final.
const (
	Pending   DeliveryState = "pending"
	Sent      DeliveryState = "sent"
	Abandoned DeliveryState = "abandoned" // will never be sent: the chat blocked the bot, the job was forgotten
)

// Key names a delivery: the Telegram message it answers and the part.
type Key struct {
	ChatID    int64
	MessageID int64
	Part      string
}

// MaxPartLen is the longest part name, in bytes.
const MaxPartLen = 32

// Delivery is one message the bot posts (or edits) for a Telegram message.
type Delivery struct {
	Key
	JobID      string        // the job it belongs to; "" for one without (a refusal)
	State      DeliveryState //
	SentID     int64         // the message id Telegram gave what was posted; 0 before
	Attempts   int           // Begin and ClaimDue calls that took it
	NextAt     time.Time     // a pending delivery is due for the sweep from then
	LeaseUntil time.Time     // the sender that took it holds it until then
	UpdatedAt  time.Time     // the last Begin, ClaimDue or Finish
}

// Outcome is what Finish records.
type Outcome struct {
	State  DeliveryState // Sent, Abandoned, or Pending to try again at NextAt
	SentID int64         // with Sent; 0 keeps the one recorded
	NextAt time.Time     // with Pending: when it is due again
}

// Errors a Store returns besides errs.Unavailable for a failed backend.
var (
	ErrNotFound = errs.New(errs.NotFound, "delivery_not_found", "no such delivery")
	ErrInvalid  = errs.New(errs.Invalid, "delivery_invalid", "the delivery request is not valid")
)

// Expirer is a Store whose deliveries do not expire by themselves (the
// embedded store's; YDB's TTL expires them in the cloud): the timer's
// housekeeping deletes them.
type Expirer interface {
	// ExpireDeliveries deletes up to limit deliveries last written before
	// before and returns how many it deleted.
	ExpireDeliveries(ctx context.Context, before time.Time, limit int) (int, error)
}

// Store keeps chats and deliveries. Every method may also fail with an
// errs.Unavailable error when the backend does.
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

	// Begin takes the delivery named by k for sending at now. A delivery
	// not yet recorded is created pending for jobID, with Attempts 1 and
	// NextAt = LeaseUntil = now + lease; a pending one whose LeaseUntil has
	// passed is taken over (Attempts one higher, LeaseUntil = now + lease;
	// NextAt kept). taken is false, with the delivery as stored, when it is
	// sent, abandoned, or held by an unexpired lease.
	// Errors: ErrInvalid (zero chat or message id, empty or too long part,
	// lease not positive).
	Begin(ctx context.Context, k Key, jobID string, now time.Time, lease time.Duration) (d Delivery, taken bool, err error)

	// Schedule records a pending delivery for later without taking it: it
	// is created pending (Attempts 0, NextAt = at, no lease) when not yet
	// recorded, and otherwise left exactly as it is. It returns the
	// delivery as stored. Errors: ErrInvalid (as Begin).
	Schedule(ctx context.Context, k Key, jobID string, at, now time.Time) (Delivery, error)

	// Finish records the outcome of a send: the state, SentID (when non-zero)
	// and, for Pending, NextAt; the lease ends (LeaseUntil = now). A
	// delivery already Sent or Abandoned keeps its state, except that Sent
	// with a new SentID updates it (an edit that posted anew).
	// Errors: ErrNotFound, ErrInvalid (unknown state, Pending without
	// NextAt).
	Finish(ctx context.Context, k Key, o Outcome, now time.Time) (Delivery, error)

	// Get returns a delivery. Errors: ErrNotFound.
	Get(ctx context.Context, k Key) (Delivery, error)

	// ClaimDue takes up to limit pending deliveries with NextAt <= now and
	// LeaseUntil <= now, ordered by NextAt, as Begin would take them
	// (Attempts one higher, LeaseUntil = now + lease). Concurrent callers
	// never get the same delivery. Errors: ErrInvalid (limit out of
	// 1..MaxClaimLimit, lease not positive).
	ClaimDue(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]Delivery, error)

	// ForgetChat removes the chat's settings and all its deliveries.
	ForgetChat(ctx context.Context, chatID int64) error
}

// MaxClaimLimit is the most deliveries one ClaimDue may take.
const MaxClaimLimit = 100
