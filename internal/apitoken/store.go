package apitoken

import (
	"context"
	"time"

	"transcriber/internal/errs"
)

// Store keeps tokens; any method may also fail errs.Unavailable.
type Store interface {
	// Create records t after Token.Check; ErrConflict on its id or hash.
	Create(ctx context.Context, t Token) error
	// ByHash finds a token, revoked or not.
	ByHash(ctx context.Context, hash string) (Token, error)
	// List is every token oldest first; made by hand, they are few.
	List(ctx context.Context) ([]Token, error)
	// Revoke keeps the first time on a revoked token.
	Revoke(ctx context.Context, id string, now time.Time) (Token, error)
}

const codeInvalid = "token_invalid"

// A Store's errors besides Unavailable.
var (
	ErrNotFound = errs.New(errs.NotFound, "token_not_found", "no such token")
	ErrInvalid  = errs.New(errs.Invalid, codeInvalid, "the token is not valid")
	ErrConflict = errs.New(errs.Conflict, "token_exists", "a token with this id or secret already exists")
)
