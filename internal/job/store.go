package job

import (
	"context"
	"time"
)

// Store keeps jobs. Any method may also fail errs.Unavailable; an id
// ident.Parse rejects is ErrNotFound without a backend call.
type Store interface {
	Create(ctx context.Context, d Draft) (Job, error)

	// CreateForMessage records the job of d's Telegram message, or returns
	// the one recorded (created says which), under concurrency too.
	CreateForMessage(ctx context.Context, d Draft) (j Job, created bool, err error)

	// CreateOnce is CreateForMessage for d's owner and idempotency key.
	CreateOnce(ctx context.Context, d Draft) (j Job, created bool, err error)

	// Delete applies ApplyDelete and removes the job's key rows in the same
	// write, so that key or message makes a new job. The job keeps its
	// segments for the caller's Purge.
	Delete(ctx context.Context, id string) (Job, error)

	Get(ctx context.Context, id string) (Job, error)

	// Reusable returns, without segments, the latest done, undeleted job
	// with key that ended after endedAfter; else (or for "") ErrNotFound.
	Reusable(ctx context.Context, key string, endedAfter time.Time) (Job, error)

	// Claim takes the job for step whatever its NextRunAt (an event about
	// it is the reason to run it now); ErrNotClaimable per ApplyClaim.
	Claim(ctx context.Context, id string, step Step) (Job, error)

	// ClaimDue claims up to limit due jobs of step.From by NextRunAt, then
	// id; concurrent callers never get the same job; none is no error.
	ClaimDue(ctx context.Context, step Step, limit int) ([]Job, error)

	// Save writes a step's result under the holder's claim (ApplySave):
	// the claim ends and the job is due next.After from now, unless
	// next.Keep holds it on.
	Save(ctx context.Context, j Job, next Next) (Job, error)

	// Release ends claim c after a failure that may pass (ApplyRelease);
	// the job comes back without segments.
	Release(ctx context.Context, c Claim, pause time.Duration, f Failure) (Job, error)

	// Renew extends a live holder's claim (ApplyRenew), so a step may
	// outrun its lease while a dead holder's job comes back when it ends.
	Renew(ctx context.Context, c Claim, step Step) (Claim, error)

	// NextDue is the earliest NextRunAt in states, claims included: one
	// indexed read, so an idle poll costs almost nothing.
	NextDue(ctx context.Context, states []State) (time.Time, bool, error)

	// List returns ownerID's jobs newest first, after cursor.
	List(ctx context.Context, ownerID, cursor string, limit int) (Page, error)

	// Unfinished returns, oldest first and without segments, up to limit
	// of the payer's jobs that have not ended: one indexed read.
	Unfinished(ctx context.Context, chargedTo string, limit int) ([]Job, error)
}

// Expirer removes jobs ended long ago, for a store without row expiry
// (sqlite); YDB leaves it to the table's TTL.
type Expirer interface {
	// Expired returns up to limit jobs ended before before, oldest end first.
	Expired(ctx context.Context, before time.Time, limit int) ([]Job, error)
	// Remove deletes those of ids ended before before and counts them.
	Remove(ctx context.Context, ids []string, before time.Time) (int, error)
}

// Reclaimer is a store one worker alone uses (the local stack's): at its
// start every claim is its own from before a crash, so it takes them all
// back (ApplyTakeBack) rather than wait out the leases.
type Reclaimer interface {
	TakeBackClaims(ctx context.Context) (int, error)
}

// Limits of a single store call.
const (
	MaxClaimLimit = 100 // jobs one due selection may claim
	MaxListLimit  = 100 // jobs one page may hold
)

// Next says what follows a Save.
type Next struct {
	Keep  bool // the step goes on under the claim
	After time.Duration
}

// Page is one page of a listing.
type Page struct {
	Jobs []Job
	Next string // empty on the last page
}
