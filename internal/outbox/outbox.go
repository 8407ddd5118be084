// Package outbox keeps every delivery that must happen once and be retried:
// an API job's callback (a signed POST) and each message the Telegram bot
// posts, owner alerts among them, keyed by kind and a key unique within it.
//
// A sender takes an entry under a lease (Begin when an event asks for it,
// ClaimDue in the timer's sweep), so no attempt is sent twice, and records
// the outcome (Finish). A sender that crashes between its send and Finish
// leaves the entry to be sent again after the lease: the one case that
// sends twice (callback receivers dedupe by webhook-id; Telegram cannot).
//
// The stores implement Store over one table; outboxtest is their contract
// and rules.go the pure rules they run inside their transactions.
package outbox

import (
	"context"
	"time"

	"transcriber/internal/errs"
)

// Kind is what an entry delivers; it decides who sends it.
type Kind string

const (
	// Callback is an API job's callback, keyed by the job id, put when the
	// job is made; its Payload is the target (callback.Target).
	Callback Kind = "callback"
	// Telegram is a message the bot posts, keyed "<chat>/<message>/<part>";
	// made when first sent (Begin) or put for later (a job's result).
	Telegram Kind = "telegram"
)

// State is where an entry stands; Delivered and Failed are final.
type State string

const (
	Pending   State = "pending"
	Delivered State = "delivered" // a 2xx answered the POST; Telegram took the message
	Failed    State = "failed"    // given up: never to be sent
)

// Entry is one delivery.
type Entry struct {
	Kind       Kind
	Key        string
	JobID      string // "" for none (a refusal, an alert)
	Payload    string // fixed when made: a callback's target
	State      State
	SentID     int64     // Telegram: the id of the message posted
	Attempts   int       // sends recorded by Finish
	NextAt     time.Time // a pending entry is due for the sweep from then
	LeaseUntil time.Time // the sender that took it holds it until then
	FirstAt    time.Time // the first send recorded
	LastAt     time.Time // the last send recorded
	LastStatus int       // the HTTP status the last send got; 0 when none came
	LastError  string    // why the last send failed, snake_case
	CreatedAt  time.Time
	UpdatedAt  time.Time // the last Put, Begin, ClaimDue or Finish that wrote it
}

// Attempt is one send, for Finish to record.
type Attempt struct {
	At     time.Time
	Status int    // the HTTP status of the answer; 0 when none came
	Error  string // snake_case when it failed
}

// Outcome is what Finish records.
type Outcome struct {
	State   State     // Delivered, Failed, or Pending to try again at NextAt
	NextAt  time.Time // with Pending
	SentID  int64     // non-zero: the message posted (Telegram)
	Attempt *Attempt  // the send made under the lease; nil when none was
}

// Errors a Store returns besides errs.Unavailable for a failed backend.
var (
	ErrNotFound = errs.New(errs.NotFound, "delivery_not_found", "no such delivery")
	ErrInvalid  = errs.New(errs.Invalid, "delivery_invalid", "the delivery request is not valid")
)

// Bounds of an entry's fields, in bytes, and of one claim.
const (
	MaxKeyLen     = 128
	MaxJobIDLen   = 64
	MaxPayloadLen = 8192
	MaxClaimLimit = 100
)

// Store keeps entries. Every method fails with ErrInvalid for malformed
// arguments (an unknown kind, an empty or long key, a zero time, a lease
// not positive, a limit out of 1..MaxClaimLimit).
type Store interface {
	// Put records e (Kind, Key, JobID, Payload) pending, due at at and
	// untaken, unless it is recorded: then it returns the stored entry,
	// created false.
	Put(ctx context.Context, e Entry, at, now time.Time) (stored Entry, created bool, err error)

	// Begin takes the pending entry e names, due or not, whose lease ran
	// out, until now + lease (NextAt kept). A Telegram entry not recorded
	// is made from e and taken (NextAt = LeaseUntil); any other is
	// ErrNotFound. taken is false, with the entry as stored, when it is
	// final or held.
	Begin(ctx context.Context, e Entry, now time.Time, lease time.Duration) (d Entry, taken bool, err error)

	// ClaimDue takes up to limit entries Due at now, by NextAt, as Begin
	// takes them; concurrent callers never get the same entry.
	ClaimDue(ctx context.Context, kind Kind, now time.Time, lease time.Duration, limit int) ([]Entry, error)

	// Finish records o and ends the lease (LeaseUntil = UpdatedAt = now).
	// A pending entry takes o's state, its SentID when non-zero, and
	// counts its Attempt; a final one keeps its record but for Delivered
	// with a SentID (an edit that posted anew). Errors: ErrNotFound.
	Finish(ctx context.Context, kind Kind, key string, o Outcome, now time.Time) (Entry, error)

	// Get returns an entry. Errors: ErrNotFound.
	Get(ctx context.Context, kind Kind, key string) (Entry, error)
}

// Expirer is a Store whose entries do not expire by themselves (the
// embedded one; YDB's TTL expires them in the cloud): the timer deletes up
// to limit entries last written before before.
type Expirer interface {
	Expire(ctx context.Context, before time.Time, limit int) (int, error)
}
