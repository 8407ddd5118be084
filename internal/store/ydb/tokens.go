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

func NewTokenStore(db *DB) *TokenStore { return &TokenStore{db: db} }

// Create inserts t if neither its hash nor its id is taken, read in the
// same transaction; run again after its own commit, it finds its own token.
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
				return nil
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
	t, found, err := scanOne(ctx, s.db, tx, stmt, p, scanToken)
	if !found {
		return nil, err
	}
	return &t, err
}

// ByHash names no hash in errors: it is what a secret is looked up by.
func (s *TokenStore) ByHash(ctx context.Context, hash string) (apitoken.Token, error) {
	found, err := inTx(ctx, s.db.read, func(ctx context.Context, tx query.TxActor) (*apitoken.Token, error) {
		return s.one(ctx, tx, selectTokenByHash, tokenHashParams(hash))
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
	list, err := readAll(ctx, s.db, selectTokens, nil, scanToken)
	if err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	if list == nil {
		list = []apitoken.Token{}
	}
	return list, nil
}

// Revoke keeps the time of an earlier revocation.
func (s *TokenStore) Revoke(ctx context.Context, id string, now time.Time) (apitoken.Token, error) {
	id, err := apitoken.ParseID(id)
	if err != nil {
		return apitoken.Token{}, fmt.Errorf("revoke token: %w", err)
	}
	if now.IsZero() {
		return apitoken.Token{}, fmt.Errorf("revoke token %s: %w: no time given", id, apitoken.ErrInvalid)
	}
	at := truncMs(now)
	t, err := inTx(ctx, s.db.update, func(ctx context.Context, tx query.TxActor) (apitoken.Token, error) {
		found, err := s.one(ctx, tx, selectTokenByID, tokenIDParams(id))
		switch {
		case err != nil:
			return apitoken.Token{}, err
		case found == nil:
			return apitoken.Token{}, apitoken.ErrNotFound
		case found.Revoked():
			return *found, nil
		}
		t := *found
		t.RevokedAt = at
		return t, s.db.exec(ctx, tx, revokeToken, revokeParams(found.Hash, at))
	})
	if err != nil {
		return apitoken.Token{}, fmt.Errorf("revoke token %s: %w", id, err)
	}
	return t, nil
}
