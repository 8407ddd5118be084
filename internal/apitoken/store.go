package apitoken

import (
	"context"
	"time"

	"transcriber/internal/errs"
)

// Store keeps tokens. Every method may also fail with an errs.Unavailable
// error when the backend does; the errors listed are the others.
type Store interface {
	// Create records t, made by New. Errors: ErrInvalid (t fails
	// Token.Check: a zero id or hash among others), ErrConflict (a token
	// with this hash or this id exists).
	Create(ctx context.Context, t Token) error
	// ByHash returns the token whose secret hashes to hash, revoked or not.
	// Errors: ErrNotFound.
	ByHash(ctx context.Context, hash string) (Token, error)
	// List returns every token, revoked ones too, oldest first (by id). No
	// token is an empty slice. Tokens are made by hand, so there are few:
	// the list is not paged.
	List(ctx context.Context) ([]Token, error)
	// Revoke marks token id revoked at now and returns it as stored.
	// Revoking a revoked token is not an error and keeps the first time.
	// Errors: ErrNotFound (also for an id ParseID rejects, with no call to
	// the backend), ErrInvalid (a zero now).
	Revoke(ctx context.Context, id string, now time.Time) (Token, error)
}

const codeInvalid = "token_invalid"

// The errors a Store returns besides Unavailable for a failed backend. Match
// them with errors.Is.
var (
	// ErrNotFound: no token has this hash or id, or the id is malformed.
	ErrNotFound = errs.New(errs.NotFound, "token_not_found", "no such token")
	// ErrInvalid: the token or the arguments break the rules of the store.
	ErrInvalid = errs.New(errs.Invalid, codeInvalid, "the token is not valid")
	// ErrConflict: a token with the same id or hash is already stored.
	ErrConflict = errs.New(errs.Conflict, "token_exists", "a token with this id or secret already exists")
)
