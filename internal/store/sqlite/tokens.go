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

type TokenStore struct{ db *DB }

var _ apitoken.Store = (*TokenStore)(nil)

func NewTokenStore(db *DB) *TokenStore { return &TokenStore{db: db} }

// tokenColumns is the one column list: scanToken and Create follow it.
const tokenColumns = `id, name, hash, created_at, revoked_at, callback_secret`

const selectToken = `SELECT ` + tokenColumns + ` FROM api_tokens`

func scanToken(r scanner) (t apitoken.Token, err error) {
	if err := r.Scan(&t.ID, &t.Name, &t.Hash, timeText(&t.CreatedAt), timeText(&t.RevokedAt), &t.CallbackSecret); err != nil {
		return apitoken.Token{}, err
	}
	return t, nil
}

// translateToken reads a broken UNIQUE (hash or id) as apitoken.ErrConflict.
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

func (s *TokenStore) Create(ctx context.Context, t apitoken.Token) error {
	if err := t.Check(); err != nil {
		return fmt.Errorf("create token: %w", err)
	}
	inserted := false // by an earlier run of this call
	err := s.db.tx(ctx, func(tx *sql.Tx) error {
		if inserted {
			// Run again after its commit, it finds its own token.
			found, err := scanRow(tx.QueryRowContext(ctx, selectToken+` WHERE id = ?`, t.ID), scanToken, nil)
			if err != nil || t.Same(found) {
				return err
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

// ByHash names no hash in errors: it is what a secret is looked up by.
func (s *TokenStore) ByHash(ctx context.Context, hash string) (apitoken.Token, error) {
	t, err := scanRow(s.db.sql.QueryRowContext(ctx, selectToken+` WHERE hash = ?`, hash), scanToken, apitoken.ErrNotFound)
	if err != nil && !errors.Is(err, apitoken.ErrNotFound) {
		return apitoken.Token{}, fmt.Errorf("find token by hash: %w", err)
	}
	return t, err
}

// List returns every token, oldest first.
func (s *TokenStore) List(ctx context.Context) ([]apitoken.Token, error) {
	list, err := queryAll(ctx, s.db.sql, selectToken+` ORDER BY id`, nil, scanToken)
	if err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	if list == nil {
		list = []apitoken.Token{}
	}
	return list, nil
}

// Revoke keeps the time of an earlier revocation (COALESCE).
func (s *TokenStore) Revoke(ctx context.Context, id string, now time.Time) (apitoken.Token, error) {
	id, err := apitoken.ParseID(id)
	if err != nil {
		return apitoken.Token{}, fmt.Errorf("revoke token: %w", err)
	}
	if now.IsZero() {
		return apitoken.Token{}, fmt.Errorf("revoke token %s: %w: no time given", id, apitoken.ErrInvalid)
	}
	t, err := txResult(ctx, s.db, func(tx *sql.Tx) (apitoken.Token, error) {
		return scanRow(tx.QueryRowContext(ctx, `UPDATE api_tokens SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?
			RETURNING `+tokenColumns, formatTime(now), id), scanToken, apitoken.ErrNotFound)
	})
	if err != nil {
		return apitoken.Token{}, fmt.Errorf("revoke token %s: %w", id, err)
	}
	return t, nil
}
