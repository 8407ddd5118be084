package job

import "transcriber/internal/errs"

// The errors a Store returns besides Unavailable for a failed backend. Match
// them with errors.Is.
var (
	// ErrNotFound: no job has this id, or the id is malformed.
	ErrNotFound = errs.New(errs.NotFound, "job_not_found", "no such job")
	// ErrNotClaimable: the job exists but is in another state, or another
	// holder's claim has not expired, or (for due selection) it is not due.
	ErrNotClaimable = errs.New(errs.Conflict, "job_not_claimable", "the job is not ready for this step")
	// ErrClaimLost: the caller's claim expired or was replaced, so its result
	// must not be written. The caller stops; the new holder carries on.
	ErrClaimLost = errs.New(errs.Conflict, "claim_lost", "the job was taken over by another worker")
	// ErrIllegalMove: the requested state does not follow the current one.
	ErrIllegalMove = errs.New(errs.Conflict, "illegal_state_change", "the job cannot move to that state")
	// ErrDeleted is recorded on a job deleted before it finished.
	ErrDeleted = errs.New(errs.Conflict, "deleted", "the job was deleted")
	// ErrInvalid: the draft or the arguments break the rules of the store.
	ErrInvalid = errs.New(errs.Invalid, "job_invalid", "the job request is not valid")
)
