// Package quota is the port of usage counters: how much of something (a
// request, a second of audio) was used per key and window, changed only by
// conditional updates, so concurrent callers sharing one limit never pass
// it together.
//
// A counter is named by a key (e.g. "speechkit_requests", or a user's id
// with what is counted) and the start of its window (the hour, the day, the
// month it counts); the caller chooses both, so one store serves any
// scheme of fixed windows. Rows expire Retention after their window starts:
// the YDB store by its table's TTL, the embedded one through Expirer, which
// the poll function's sweep calls.
//
// The contract every store keeps is the suite in quotatest. A counter
// every instance changes at once is spread over several rows (Spread),
// so that concurrent reservations do not abort each other on one.
package quota

import (
	"context"
	"fmt"
	"strings"
	"time"

	"transcriber/internal/errs"
)

// Counters keeps usage counters. Every method may also fail with an
// errs.Unavailable error when the backend does; the errors listed are the
// others.
type Counters interface {
	// Reserve adds amount to the counter of key and window if the total
	// stays within limit (limit ≤ 0: no limit), and returns the new total
	// and true. Otherwise it changes nothing and returns the current total
	// and false. The read, the check and the write are one atomic step:
	// concurrent reservations never pass the limit together.
	// Errors: ErrInvalid (empty key, amount not positive).
	Reserve(ctx context.Context, key string, window time.Time, amount, limit int64) (used int64, ok bool, err error)

	// Release subtracts amount from the counter of key and window, never
	// below 0: a reservation that was not used goes back. A counter that
	// does not exist stays absent. Errors: ErrInvalid (as Reserve).
	Release(ctx context.Context, key string, window time.Time, amount int64) error

	// Used returns the counter of key and window; 0 when it does not exist.
	// Errors: ErrInvalid (empty key).
	Used(ctx context.Context, key string, window time.Time) (int64, error)
}

// MultiReader reads several counters of one window in one call: one
// statement where the backend has them in one table (SELECT … WHERE
// counter IN $keys). A store that can implements it; Spread reads a spread
// counter's rows through it when the counters it spreads offer it.
type MultiReader interface {
	// UsedMany returns the counter of each of keys in window, 0 for one
	// that does not exist: every key asked is in the map.
	// Errors: ErrInvalid (no keys, more than MaxKeys, a key Used refuses).
	UsedMany(ctx context.Context, keys []string, window time.Time) (map[string]int64, error)
}

// MaxKeys is the most keys one UsedMany reads.
const MaxKeys = 100

// CheckKeys is the argument rule of UsedMany, shared by every store.
func CheckKeys(keys []string) error {
	if len(keys) == 0 || len(keys) > MaxKeys {
		return fmt.Errorf("%w: 1..%d keys", ErrInvalid, MaxKeys)
	}
	for _, k := range keys {
		if err := CheckKey(k); err != nil {
			return err
		}
	}
	return nil
}

// Expirer removes expired counters. A store whose backend has no row
// expiry of its own (the embedded one) implements it, and the poll
// function's sweep calls it; the YDB store leaves it to the counters
// table's TTL.
type Expirer interface {
	// ExpireCounters deletes the counters whose window started Retention
	// or longer before now, and returns how many it deleted.
	ExpireCounters(ctx context.Context, now time.Time) (int, error)
}

// Retention is how long a counter is kept after its window starts: longer
// than the longest window a caller uses (a calendar month), so a counter
// never expires while its window is open.
const Retention = 35 * 24 * time.Hour

// MaxKey is the longest key taken, in bytes.
const MaxKey = 255

// ErrInvalid: the arguments break the rules of the store.
var ErrInvalid = errs.New(errs.Invalid, "quota_invalid", "the usage counter request is not valid")

// Check is the argument rule of Reserve and Release, shared by every store.
func Check(key string, amount int64) error {
	if err := CheckKey(key); err != nil {
		return err
	}
	if amount <= 0 {
		return fmt.Errorf("%w: amount %d is not positive", ErrInvalid, amount)
	}
	return nil
}

// CheckKey is the argument rule of Used.
func CheckKey(key string) error {
	if key == "" || len(key) > MaxKey {
		return fmt.Errorf("%w: key must be 1..%d bytes", ErrInvalid, MaxKey)
	}
	return nil
}

// PerSecond starts the keys of counters whose windows are seconds (the
// synchronous quota's): their rows, up to 8 a second with the shards,
// expire ShortRetention after their window starts, not with the month's.
const PerSecond = "per_second:"

// ShortRetention is how long a PerSecond counter is kept: minutes past
// any reader of its second.
const ShortRetention = 10 * time.Minute

// ExpiresAt is when the counter of key and window expires.
func ExpiresAt(key string, window time.Time) time.Time {
	if strings.HasPrefix(key, PerSecond) {
		return window.Add(ShortRetention)
	}
	return window.Add(Retention)
}

// Fits reports whether used+amount stays within limit (limit ≤ 0: no
// limit). Every store decides with it, inside its transaction.
func Fits(used, amount, limit int64) bool { return limit <= 0 || amount <= limit-used }

// Less is used-amount, never below 0: what Release leaves.
func Less(used, amount int64) int64 {
	if amount >= used {
		return 0
	}
	return used - amount
}
