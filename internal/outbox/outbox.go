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
	"errors"
	"log/slog"
	"time"

	"transcriber/internal/errs"
	"transcriber/internal/job"
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

// Jobs reads the job an entry belongs to.
type Jobs interface {
	Get(ctx context.Context, id string) (job.Job, error)
}

// RecordTimeout bounds recording an outcome after the caller's context
// ended: unrecorded, a sent message is sent again after its lease.
const RecordTimeout = 5 * time.Second

// ErrStop, returned by a sweep's send, ends the sweep without an error.
var ErrStop = errors.New("stop the sweep")

// Sender is the lease dance of one kind's senders: sweep, record, retry.
type Sender struct {
	Store Store
	Kind  Kind
	Now   func() time.Time
	Lease time.Duration
	Log   *slog.Logger
}

// Record finishes key with o, even after ctx ended (RecordTimeout).
func (s Sender) Record(ctx context.Context, key string, o Outcome) (Entry, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), RecordTimeout)
	defer cancel()
	return s.Store.Finish(ctx, s.Kind, key, o, s.Now())
}

// Finish is Record that logs a failure.
func (s Sender) Finish(ctx context.Context, key string, o Outcome) {
	if _, err := s.Record(ctx, key, o); err != nil {
		s.Log.WarnContext(ctx, "outcome not recorded", "kind", string(s.Kind), "key", key, "error", err.Error())
	}
}

// Retry leaves key pending, due after wait.
func (s Sender) Retry(ctx context.Context, key string, wait time.Duration) {
	s.Finish(ctx, key, Outcome{State: Pending, NextAt: s.Now().Add(wait)})
}

// Sweep claims due entries one at a time, so a lease covers only the send
// in hand, and hands each to send, which records its outcome and reports
// whether it delivered. It ends when none is due, when ctx has less than
// the lease and budget left, or when send fails (ErrStop: without error).
func (s Sender) Sweep(ctx context.Context, budget time.Duration, send func(context.Context, Entry) (bool, error)) (int, error) {
	n := 0
	for ctx.Err() == nil {
		if dl, ok := ctx.Deadline(); ok && dl.Sub(s.Now()) < s.Lease+budget {
			break
		}
		due, err := s.Store.ClaimDue(ctx, s.Kind, s.Now(), s.Lease, 1)
		if err != nil || len(due) == 0 {
			return n, err
		}
		ok, err := send(ctx, due[0])
		if ok {
			n++
		}
		if errors.Is(err, ErrStop) {
			break
		}
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// Job reads e's job for a sweep; ok is false when it recorded e instead:
// failed for a job gone or deleted, due in a minute (and err) for a read
// that failed.
func (s Sender) Job(ctx context.Context, jobs Jobs, e Entry) (j job.Job, ok bool, err error) {
	j, err = jobs.Get(ctx, e.JobID)
	switch {
	case errors.Is(err, job.ErrNotFound) || (err == nil && j.Deleted()):
		s.Finish(ctx, e.Key, Outcome{State: Failed})
		return j, false, nil
	case err != nil:
		s.Retry(ctx, e.Key, time.Minute)
		return j, false, err
	}
	return j, true, nil
}
