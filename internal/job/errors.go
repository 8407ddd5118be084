package job

import "transcriber/internal/errs"

// A Store's errors besides Unavailable; match with errors.Is.
var (
	ErrNotFound     = errs.New(errs.NotFound, "job_not_found", "no such job") // or a malformed id
	ErrNotClaimable = errs.New(errs.Conflict, "job_not_claimable", "the job is not ready for this step")
	// ErrClaimLost: the caller stops without writing; the new holder carries on.
	ErrClaimLost   = errs.New(errs.Conflict, "claim_lost", "the job was taken over by another worker")
	ErrIllegalMove = errs.New(errs.Conflict, "illegal_state_change", "the job cannot move to that state")
	ErrDeleted     = errs.New(errs.Conflict, "deleted", "the job was deleted") // recorded on a job deleted unfinished
	ErrInvalid     = errs.New(errs.Invalid, "job_invalid", "the job request is not valid")
)
