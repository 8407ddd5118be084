package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"transcriber/internal/apitoken"
	"transcriber/internal/errs"
)

// TokenStore keeps API tokens in the api_tokens table.
type TokenStore struct{ db *DB }

var _ apitoken.Store = (*TokenStore)(nil)

// NewTokenStore returns the token store of db.
func NewTokenStore(db *DB) *TokenStore { return &TokenStore{db: db} }

// tokenColumns is the one list of the api_tokens table's columns: scanToken
// reads them and Create writes them in this order.
const tokenColumns = `id, name, hash, created_at, revoked_at, callback_secret`

const selectToken = `SELECT ` + tokenColumns + ` FROM api_tokens`

func scanToken(r scanner) (apitoken.Token, error) {
	var (
		t       apitoken.Token
		created string
		revoked sql.NullString
	)
	if err := r.Scan(&t.ID, &t.Name, &t.Hash, &created, &revoked, &t.CallbackSecret); err != nil {
		return apitoken.Token{}, err
	}
	var errT [2]error
	t.CreatedAt, errT[0] = parseTime(created)
	t.RevokedAt, errT[1] = parseNullTime(revoked)
	if err := errors.Join(errT[:]...); err != nil {
		return apitoken.Token{}, fmt.Errorf("token %s: %w", t.ID, err)
	}
	return t, nil
}

// translateToken is translate, with a broken UNIQUE constraint (the hash,
// the primary key, or the id) read as apitoken.ErrConflict.
func translateToken(err error) error {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() {
		case sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY, sqlite3.SQLITE_CONSTRAINT_UNIQUE:
			return errs.Wrap(err, errs.Conflict, apitoken.ErrConflict.Code, apitoken.ErrConflict.Message)
		}
	}
	return translate(err)
}

// Create records a new token.
func (s *TokenStore) Create(ctx context.Context, t apitoken.Token) error {
	if err := t.Check(); err != nil {
		return fmt.Errorf("create token: %w", err)
	}
	inserted := false // by an earlier run of this call
	err := s.db.tx(ctx, func(tx *sql.Tx) error {
		if inserted {
			// A run again after a commit whose answer was lost finds the
			// token it made: made by this call, not a conflict.
			found, err := scanToken(tx.QueryRowContext(ctx, selectToken+` WHERE id = ?`, t.ID))
			if err == nil && t.Same(found) {
				return nil
			}
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return translate(err)
			}
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO api_tokens (`+tokenColumns+`) VALUES (?, ?, ?, ?, ?, ?)`,
			t.ID, t.Name, t.Hash, formatTime(t.CreatedAt), nullTime(t.RevokedAt), t.CallbackSecret)
		inserted = err == nil
		return translateToken(err)
	})
	if err != nil {
		return fmt.Errorf("create token %s: %w", t.ID, err)
	}
	return nil
}

// ByHash returns the token whose secret hashes to hash. The hash is not
// named in errors: it is what a presented secret is looked up by.
func (s *TokenStore) ByHash(ctx context.Context, hash string) (apitoken.Token, error) {
	t, err := scanToken(s.db.sql.QueryRowContext(ctx, selectToken+` WHERE hash = ?`, hash))
	if errors.Is(err, sql.ErrNoRows) {
		return apitoken.Token{}, apitoken.ErrNotFound
	}
	if err != nil {
		return apitoken.Token{}, fmt.Errorf("find token by hash: %w", translate(err))
	}
	return t, nil
}

// List returns every token, oldest first.
func (s *TokenStore) List(ctx context.Context) ([]apitoken.Token, error) {
	rows, err := s.db.sql.QueryContext(ctx, selectToken+` ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("list tokens: %w", translate(err))
	}
	defer rows.Close()
	list := []apitoken.Token{}
	for rows.Next() {
		t, err := scanToken(rows)
		if err != nil {
			return nil, fmt.Errorf("list tokens: %w", translate(err))
		}
		list = append(list, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list tokens: %w", translate(err))
	}
	return list, nil
}

// Revoke marks a token revoked at now, keeping the time of an earlier
// revocation.
func (s *TokenStore) Revoke(ctx context.Context, id string, now time.Time) (apitoken.Token, error) {
	id, err := apitoken.ParseID(id)
	if err != nil {
		return apitoken.Token{}, fmt.Errorf("revoke token: %w", err)
	}
	if now.IsZero() {
		return apitoken.Token{}, fmt.Errorf("revoke token %s: %w: no time given", id, apitoken.ErrInvalid)
	}
	var t apitoken.Token
	err = s.db.tx(ctx, func(tx *sql.Tx) error {
		// COALESCE keeps the first revocation's time; one statement reads
		// and writes, inside the write transaction.
		row := tx.QueryRowContext(ctx, `UPDATE api_tokens SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?
			RETURNING `+tokenColumns, formatTime(now), id)
		var err error
		t, err = scanToken(row)
		if errors.Is(err, sql.ErrNoRows) {
			return apitoken.ErrNotFound
		}
		return translate(err)
	})
	if err != nil {
		return apitoken.Token{}, fmt.Errorf("revoke token %s: %w", id, err)
	}
	return t, nil
}
