// Package ident is the one place ids are made and read: lower-case ULIDs,
// sorted by creation (monotonic within a millisecond), one double-click in
// a log, unique across tables. Every id from outside passes Parse first.
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

const Len = ulid.EncodedSize

// ErrMalformed: callers treat such an id as naming nothing.
var ErrMalformed = errors.New("malformed id")

var (
	mu      sync.Mutex
	entropy = ulid.Monotonic(rand.Reader, 0)
	now     = clock.System().Now
)

// New returns a fresh id.
func New() string { return NewAt(now()) }

// NewAt returns a fresh id whose time part is t.
func NewAt(t time.Time) string {
	mu.Lock()
	defer mu.Unlock()
	id, err := ulid.New(ulid.Timestamp(t), entropy)
	if err != nil {
		// Out of room in this millisecond, or the random source failed:
		// start afresh, unique if not ordered.
		entropy = ulid.Monotonic(rand.Reader, 0)
		id = ulid.MustNew(ulid.Timestamp(t), io.Reader(entropy))
	}
	return strings.ToLower(id.String())
}

// Parse returns s in canonical lower case: stores compare bytes.
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

func Time(id string) (time.Time, error) {
	u, err := ulid.ParseStrict(id)
	if err != nil {
		return time.Time{}, ErrMalformed
	}
	return ulid.Time(u.Time()).UTC(), nil
}
