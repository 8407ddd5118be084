// Package ident makes and reads the service's ids: ULIDs in lower case.
//
// A ULID sorts by creation time (its first 48 bits are milliseconds), is 26
// characters of Crockford base32 with no dashes (one double-click selects it
// in a log), and is unique across tables, so grepping a bare id finds every
// line about its entity. Ids made in the same millisecond by one process are
// monotonic, so "ORDER BY id" is creation order. This package is the only
// place ids are made, and every id that comes from outside goes through Parse
// before it reaches a store.
package ident

import (
	"crypto/rand"
	"errors"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/oklog/ulid/v2"

	"transcriber/internal/clock"
)

// Len is the length of an id.
const Len = ulid.EncodedSize

// ErrMalformed is returned by Parse for a string that is not a ULID. Callers
// treat such an id as one that names nothing.
var ErrMalformed = errors.New("malformed id")

var (
	mu      sync.Mutex
	entropy = ulid.Monotonic(rand.Reader, 0)
	now     = clock.System().Now
)

// New returns a fresh id. Ids made by one process in the same millisecond
// increase.
func New() string {
	return NewAt(now())
}

// NewAt returns a fresh id whose time part is t. Within one millisecond ids
// increase; across milliseconds they follow t.
func NewAt(t time.Time) string {
	mu.Lock()
	defer mu.Unlock()
	id, err := ulid.New(ulid.Timestamp(t), entropy)
	if err != nil {
		// The monotonic reader ran out of room in this millisecond (2^80
		// increments) or the system's random source failed; start afresh so
		// the id is still unique, if not ordered after the previous one.
		entropy = ulid.Monotonic(rand.Reader, 0)
		id = ulid.MustNew(ulid.Timestamp(t), io.Reader(entropy))
	}
	return strings.ToLower(id.String())
}

// Parse checks that s is an id and returns it in canonical (lower-case) form.
// ULIDs decode case-insensitively, but stores compare bytes, so an id from a
// URL or a form must pass through here first.
func Parse(s string) (string, error) {
	if len(s) != Len {
		return "", ErrMalformed
	}
	id, err := ulid.ParseStrict(s)
	if err != nil {
		return "", ErrMalformed
	}
	return strings.ToLower(id.String()), nil
}

// Time returns the moment encoded in a valid id.
func Time(id string) (time.Time, error) {
	u, err := ulid.ParseStrict(id)
	if err != nil {
		return time.Time{}, ErrMalformed
	}
	return ulid.Time(u.Time()).UTC(), nil
}
