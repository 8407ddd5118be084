package ydb

import (
	"context"
	"fmt"
	"time"

	"github.com/ydb-platform/ydb-go-sdk/v3/query"

	"transcriber/internal/apitoken"
)

// TokenStore keeps API tokens in the api_tokens table.
type TokenStore struct{ db *DB }

var _ apitoken.Store = (*TokenStore)(nil)

// NewTokenStore returns the token store of db.
func NewTokenStore(db *DB) *TokenStore { return &TokenStore{db: db} }

// Create records a new token if neither its hash nor its id is taken: both
// are read, then the row inserted, in one transaction. A concurrent Create
// of the same token invalidates this one's locks; run again, it finds the
// token and answers ErrConflict. A run again after this call's own commit
// (its answer lost) finds its own token, and succeeds.
func (s *TokenStore) Create(ctx context.Context, t apitoken.Token) error {
	if err := t.Check(); err != nil {
		return fmt.Errorf("create token: %w", err)
	}
	err := s.db.update(ctx, func(ctx context.Context, tx query.TxActor) error {
		for _, q := range []struct {
			stmt string
			p    params
		}{
			{selectTokenByHash, tokenHashParams(t.Hash)},
			{selectTokenByID, tokenIDParams(t.ID)},
		} {
			found, err := s.one(ctx, tx, q.stmt, q.p)
			if err != nil {
				return err
			}
			if found != nil && earlierCommit(ctx) && t.Same(*found) {
				return nil // this call's, committed by a run whose answer was lost
			}
			if found != nil {
				return apitoken.ErrConflict
			}
		}
		err := s.db.exec(ctx, tx, insertToken, tokenParams(t))
		if isKeyExists(err) {
			return apitoken.ErrConflict
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("create token %s: %w", t.ID, err)
	}
	return nil
}

// one reads at most one token; nil when there is none.
func (s *TokenStore) one(ctx context.Context, tx query.TxActor, stmt string, p params) (*apitoken.Token, error) {
	var found *apitoken.Token
	err := s.db.rows(ctx, tx, stmt, p, func(row query.Row) error {
		var r tokenRow
		if err := row.ScanNamed(tokenDests(&r)...); err != nil {
			return fmt.Errorf("read token row: %w", err)
		}
		t := r.finish()
		found = &t
		return nil
	})
	return found, err
}

// ByHash returns the token whose secret hashes to hash. The hash is not
// named in errors: it is what a presented secret is looked up by.
func (s *TokenStore) ByHash(ctx context.Context, hash string) (apitoken.Token, error) {
	var found *apitoken.Token
	err := s.db.read(ctx, func(ctx context.Context, tx query.TxActor) error {
		var err error
		found, err = s.one(ctx, tx, selectTokenByHash, tokenHashParams(hash))
		return err
	})
	if err != nil {
		return apitoken.Token{}, fmt.Errorf("find token by hash: %w", err)
	}
	if found == nil {
		return apitoken.Token{}, apitoken.ErrNotFound
	}
	return *found, nil
}

// List returns every token, oldest first.
func (s *TokenStore) List(ctx context.Context) ([]apitoken.Token, error) {
	var list []apitoken.Token
	err := s.db.read(ctx, func(ctx context.Context, tx query.TxActor) error {
		list = []apitoken.Token{}
		return s.db.rows(ctx, tx, selectTokens, nil, func(row query.Row) error {
			var r tokenRow
			if err := row.ScanNamed(tokenDests(&r)...); err != nil {
				return fmt.Errorf("read token row: %w", err)
			}
			list = append(list, r.finish())
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	return list, nil
}

// Revoke marks a token revoked at now, keeping the time of an earlier
// revocation: the token is read through api_tokens_id and, if live,
// updated, in one transaction.
func (s *TokenStore) Revoke(ctx context.Context, id string, now time.Time) (apitoken.Token, error) {
	id, err := apitoken.ParseID(id)
	if err != nil {
		return apitoken.Token{}, fmt.Errorf("revoke token: %w", err)
	}
	if now.IsZero() {
		return apitoken.Token{}, fmt.Errorf("revoke token %s: %w: no time given", id, apitoken.ErrInvalid)
	}
	at := now.UTC().Truncate(time.Millisecond)
	var t apitoken.Token
	err = s.db.update(ctx, func(ctx context.Context, tx query.TxActor) error {
		t = apitoken.Token{}
		found, err := s.one(ctx, tx, selectTokenByID, tokenIDParams(id))
		if err != nil {
			return err
		}
		if found == nil {
			return apitoken.ErrNotFound
		}
		if found.Revoked() {
			t = *found
			return nil
		}
		if err := s.db.exec(ctx, tx, revokeToken, revokeParams(found.Hash, at)); err != nil {
			return err
		}
		t = *found
		t.RevokedAt = at
		return nil
	})
	if err != nil {
		return apitoken.Token{}, fmt.Errorf("revoke token %s: %w", id, err)
	}
	return t, nil
}
