package job

import (
	"context"
	"time"
)

// Store keeps jobs. Every method may also fail with an errs.Unavailable
// error when the backend does; the errors listed are the others. An id that
// ident.Parse rejects is ErrNotFound without a call to the backend.
type Store interface {
	// Create records a new job from d, waiting for its upload.
	// Errors: ErrInvalid.
	Create(ctx context.Context, d Draft) (Job, error)

	// CreateForMessage records a job for the Telegram message named by d's
	// chat and message ids, or returns the job already recorded for it, so a
	// redelivered update never makes a second job; created tells which. It
	// holds under concurrent calls. Errors: ErrInvalid.
	CreateForMessage(ctx context.Context, d Draft) (j Job, created bool, err error)

	// CreateOnce records a job for d's owner and idempotency key, or returns
	// the job already recorded for them; created tells which. It holds under
	// concurrent calls. Errors: ErrInvalid (no key, no owner, not an API
	// draft).
	CreateOnce(ctx context.Context, d Draft) (j Job, created bool, err error)

	// Delete marks a job deleted (see ApplyDelete) and returns it; deleting
	// again changes only what ApplyDelete says. In the same write it blanks what the
	// sender gave or what names them (see Forgotten) and removes the job's
	// idempotency key and Telegram message, so CreateOnce with that key and
	// CreateForMessage for that message make a new job. The returned job
	// keeps its segments; the caller removes the job's files and
	// recognitions (Purge). Errors: ErrNotFound.
	Delete(ctx context.Context, id string) (Job, error)

	// Get returns a job with its segments. Errors: ErrNotFound.
	Get(ctx context.Context, id string) (Job, error)

	// Reusable returns the latest done, not deleted job with reuse key key
	// that ended after endedAfter (its transcript not yet expired), without
	// its segments. Errors: ErrNotFound (none; an empty key finds none).
	Reusable(ctx context.Context, key string, endedAfter time.Time) (Job, error)

	// Claim takes the job for step if it is in one of step.From and no
	// unexpired claim holds it, whatever its NextRunAt: an event about this
	// job is the reason to run it now. The job comes back with a new
	// ClaimID, ClaimUntil = now + step.Lease and Attempts one higher.
	// Errors: ErrNotFound, ErrNotClaimable.
	Claim(ctx context.Context, id string, step Step) (Job, error)

	// ClaimDue claims, for step, up to limit jobs in step.From that are due
	// (Job.Due), ordered by NextRunAt, then id. Concurrent callers never get
	// the same job. No due job is an empty slice, not an error.
	// Errors: ErrInvalid (limit out of 1..MaxClaimLimit).
	ClaimDue(ctx context.Context, step Step, limit int) ([]Job, error)

	// Save writes the result of a step, only while j.ClaimID is the job's
	// current, unexpired claim: the state (which must follow the current
	// one, see CanMove), DurationMs, ErrorCode, ErrorMessage, Segments
	// (which replace the stored ones), and what ApplySave takes of
	// Features, Recognition, BilledSeconds and the reservation. The step succeeded: the claim ends,
	// Attempts returns to 0 and the job is next due next.After from now. With
	// next.Keep the step goes on instead: the holder keeps the claim, the
	// attempt is not over (Attempts stays), and the job is due when the
	// claim expires. A terminal state always ends the claim.
	// Errors: ErrNotFound, ErrClaimLost, ErrIllegalMove.
	Save(ctx context.Context, j Job, next Next) (Job, error)

	// Release ends claim c after a failed attempt that may pass: the job
	// keeps its Attempts, records f, and is due again after pause. It
	// returns the job without its segments (Segments nil; they stay
	// stored): a release changes none, and its caller needs none.
	// Errors: ErrNotFound, ErrClaimLost, ErrInvalid (negative pause).
	Release(ctx context.Context, c Claim, pause time.Duration, f Failure) (Job, error)

	// Renew moves the expiry of claim c to now + step.Lease (and the job's
	// NextRunAt with it), only while c is the job's current, unexpired
	// claim: a holder still at work renews well within the lease, so a
	// step may run longer than its lease, while a dead holder's job comes
	// back when the lease ends. It returns the renewed claim; nothing else
	// changes. Errors: ErrNotFound, ErrClaimLost (the holder stops: the
	// claim expired, or another took it, or a deletion or an ending save
	// ended it), ErrInvalid (a lease not positive).
	Renew(ctx context.Context, c Claim, step Step) (Claim, error)

	// NextDue returns the earliest NextRunAt among the jobs in states, and
	// false when there is none. Since a claim sets NextRunAt to its expiry,
	// this is the next moment a due selection of those states may find
	// work; it is one indexed read, so an idle poll costs almost nothing.
	NextDue(ctx context.Context, states []State) (time.Time, bool, error)

	// List returns ownerID's jobs newest first, at most limit, starting after
	// the job named by cursor (empty for the first page).
	// Errors: ErrInvalid (malformed cursor, limit out of 1..MaxListLimit).
	List(ctx context.Context, ownerID, cursor string, limit int) (Page, error)

	// Unfinished returns up to limit jobs charged to chargedTo (ChargedTo)
	// that have not ended (EndedAt zero), oldest first, without their
	// segments. It is one indexed read of at most limit rows: what a limit
	// on a payer's unfinished jobs needs to know.
	// Errors: ErrInvalid (empty chargedTo, limit out of 1..MaxListLimit).
	Unfinished(ctx context.Context, chargedTo string, limit int) ([]Job, error)
}

// Expirer removes the rows of jobs that ended long ago. A store whose
// backend has no row expiry of its own (the embedded one) implements it, and
// the poll function's sweep calls it; the YDB store leaves it to the jobs
// table's TTL.
type Expirer interface {
	// Expired returns up to limit jobs that ended (EndedAt) before before,
	// the longest ended first, with their segments.
	// Errors: ErrInvalid (limit out of 1..MaxClaimLimit).
	Expired(ctx context.Context, before time.Time, limit int) ([]Job, error)
	// Remove deletes the rows of the jobs ids that ended before before,
	// with their segments, and returns how many it deleted. A job not
	// ended by then is kept; an id that names no job is skipped.
	Remove(ctx context.Context, ids []string, before time.Time) (int, error)
}

// Reclaimer takes back every claim at once. Only a store one worker alone
// uses (the local stack's embedded one) is asked, at that worker's start:
// every claim then on it is the worker's own from before it stopped (a
// crash, a kill), held by no one, so its jobs need not wait out their
// leases.
type Reclaimer interface {
	// TakeBackClaims ends the claim of every live job that has one
	// (ApplyTakeBack: due at once, attempts kept) and returns how many it
	// ended.
	TakeBackClaims(ctx context.Context) (int, error)
}

// Limits of a single store call.
const (
	MaxClaimLimit = 100 // jobs one due selection may claim
	MaxListLimit  = 100 // jobs one page may hold
)

// Next says what follows a Save.
type Next struct {
	Keep  bool          // keep holding the claim: the step goes on
	After time.Duration // the job is next due this long from now
}

// Page is one page of a listing.
type Page struct {
	Jobs []Job
	Next string // cursor of the following page; empty on the last one
}
