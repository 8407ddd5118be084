// Package callback tells an API client that its job ended: a signed POST
// to the callback_url the job was made with, in the Standard Webhooks
// convention (standardwebhooks.com).
//
// A job made with a callback_url has a delivery, registered when the job
// is made and keyed by the job's id. Its protocol is the Telegram bot's
// (internal/botstate): Begin takes a delivery to send it (the
// pipeline's Notifier, when the job ends), ClaimDue hands due ones to the
// timer's sweep, and Finish records the outcome; a sender holds a delivery
// under a lease, so concurrent senders never POST one attempt twice. A
// sender that crashes between the POST and Finish leaves the delivery to
// be sent again after its lease: receivers dedupe by the webhook-id, which
// is the same on every attempt.
//
// A registered delivery is due at first a while after it is made (Register's
// at): the sweep then finds a job that ended while its notification was
// lost, and puts back one that has not ended. Attempts counts POSTs only.
//
// The package's stores (internal/store/sqlite, internal/store/ydb)
// implement Store, and callbacktest is their contract; the rules are here
// (rules.go), as pure functions every store runs inside its transaction.
package callback

import (
	"context"
	"time"

	"transcriber/internal/errs"
)

// State is where a delivery stands.
type State string

// Delivery states. Delivered and Failed are final.
const (
	Pending   State = "pending"
	Delivered State = "delivered" // a 2xx answered a POST
	Failed    State = "failed"    // given up: 24 h of failed attempts, or the job or its token is gone
)

// Delivery is the callback of one job.
type Delivery struct {
	JobID string
	URL   string // the job's callback_url, checked by CheckURL
	// TokenHash names the API token whose webhook secret signs the
	// delivery (apitoken.Token.Hash): the token that made the job.
	TokenHash string
	// WebhookID is the webhook-id header: one per delivery, the same on
	// every attempt.
	WebhookID  string
	State      State
	Attempts   int       // POSTs made
	NextAt     time.Time // a pending delivery is due for the sweep from then
	LeaseUntil time.Time // the sender that took it holds it until then
	FirstAt    time.Time // the first POST; zero before
	LastAt     time.Time // the last POST; zero before
	LastStatus int       // the HTTP status the last POST got; 0 when none came
	LastError  string    // why the last POST failed, a snake_case code; "" when it got a 2xx or none was made
	CreatedAt  time.Time
	UpdatedAt  time.Time // the last Register, Begin, ClaimDue or Finish that wrote it
}

// Attempt is one POST, for Finish to record.
type Attempt struct {
	At     time.Time // when it was made
	Status int       // the HTTP status of the answer; 0 when none came
	Error  string    // a snake_case code when it failed; "" for a 2xx
}

// Outcome is what Finish records.
type Outcome struct {
	State   State     // Delivered, Failed, or Pending to try again at NextAt
	NextAt  time.Time // with Pending: when it is due again
	Attempt *Attempt  // the POST made under the lease; nil when none was
}

// Errors a Store returns besides errs.Unavailable for a failed backend.
var (
	ErrNotFound = errs.New(errs.NotFound, "callback_not_found", "no such callback")
	ErrInvalid  = errs.New(errs.Invalid, "callback_invalid", "the callback request is not valid")
)

// MaxClaimLimit is the most deliveries one ClaimDue may take.
const MaxClaimLimit = 100

// Store keeps deliveries. Every method may also fail with an
// errs.Unavailable error when the backend does.
type Store interface {
	// Register records d, pending and due at at (Attempts 0, no lease:
	// LeaseUntil = now, CreatedAt = UpdatedAt = now), when its job has no
	// delivery; a recorded one is returned as stored, with created false.
	// d's JobID, URL, TokenHash and WebhookID are kept; its other fields
	// are ignored. Errors: ErrInvalid (a field missing, a zero now or at).
	Register(ctx context.Context, d Delivery, at, now time.Time) (stored Delivery, created bool, err error)

	// Begin takes the pending delivery of jobID whose lease has run out,
	// due or not (its job ended now), holding it until now + lease.
	// taken is false, with the delivery as stored, when it is final or
	// held by an unexpired lease. Errors: ErrNotFound (the job has no
	// delivery), ErrInvalid (no job id, a zero now, a lease not positive).
	Begin(ctx context.Context, jobID string, now time.Time, lease time.Duration) (d Delivery, taken bool, err error)

	// ClaimDue takes up to limit pending deliveries with NextAt <= now
	// and LeaseUntil <= now, ordered by NextAt, as Begin takes them.
	// Concurrent callers never get the same delivery. Errors: ErrInvalid
	// (limit out of 1..MaxClaimLimit, a zero now, a lease not positive).
	ClaimDue(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]Delivery, error)

	// Finish records o and ends the lease (LeaseUntil = now). A pending
	// delivery takes o's state (and NextAt with Pending); o's Attempt, if
	// any, is counted and becomes the last one. A final delivery keeps
	// what it has. Errors: ErrNotFound, ErrInvalid (an unknown state,
	// Pending without NextAt, an attempt without its time).
	Finish(ctx context.Context, jobID string, o Outcome, now time.Time) (Delivery, error)

	// Get returns the delivery of jobID. Errors: ErrNotFound.
	Get(ctx context.Context, jobID string) (Delivery, error)
}
