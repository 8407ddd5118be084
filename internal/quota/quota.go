// Package quota is the port of usage counters: how much was used per key
// and window (the start of a fixed window the caller chooses), changed
// only by conditional updates, so concurrent callers never pass a shared
// limit together. Rows expire Retention after their window starts (YDB's
// TTL; the embedded store's Expirer, called by the poll's sweep). The
// contract is the suite in quotatest; a counter every instance changes is
// spread over rows (Spread).
package quota

import (
	"context"
	"fmt"
	"strings"
	"time"

	"transcriber/internal/errs"
)

// Counters keeps usage counters. Besides ErrInvalid (bad arguments), any
// method may fail errs.Unavailable.
type Counters interface {
	// Reserve adds amount to the counter of key and window if the total
	// stays within limit (≤ 0: none), atomically, and returns the new
	// total and true; otherwise the current total and false.
	Reserve(ctx context.Context, key string, window time.Time, amount, limit int64) (used int64, ok bool, err error)
	// Release subtracts amount, never below 0; an absent counter stays so.
	Release(ctx context.Context, key string, window time.Time, amount int64) error
	// Used returns the counter; 0 when absent.
	Used(ctx context.Context, key string, window time.Time) (int64, error)
}

// MultiReader reads several counters of one window in one statement;
// Spread uses it to read a spread counter's rows.
type MultiReader interface {
	// UsedMany returns every key asked, 0 for an absent one.
	UsedMany(ctx context.Context, keys []string, window time.Time) (map[string]int64, error)
}

// MaxKeys is the most keys one UsedMany reads.
const MaxKeys = 100

// CheckKeys is UsedMany's argument rule, shared by every store.
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

// Expirer removes expired counters, in a store without row expiry of its
// own (the embedded one).
type Expirer interface {
	// ExpireCounters deletes the counters past their expiry (ExpiresAt).
	ExpireCounters(ctx context.Context, now time.Time) (int, error)
}

// Retention outlives the longest window a caller uses, a month; MaxKey is
// the longest key, in bytes.
const (
	Retention = 35 * 24 * time.Hour
	MaxKey    = 255
)

// ErrInvalid: the arguments break the store's rules.
var ErrInvalid = errs.New(errs.Invalid, "quota_invalid", "the usage counter request is not valid")

// Check is the argument rule of Reserve and Release; CheckKey of Used.
func Check(key string, amount int64) error {
	if err := CheckKey(key); err != nil {
		return err
	}
	if amount <= 0 {
		return fmt.Errorf("%w: amount %d is not positive", ErrInvalid, amount)
	}
	return nil
}

func CheckKey(key string) error {
	if key == "" || len(key) > MaxKey {
		return fmt.Errorf("%w: key must be 1..%d bytes", ErrInvalid, MaxKey)
	}
	return nil
}

// PerSecond starts the keys of counters whose windows are seconds (the
// synchronous quota's): their many rows expire after ShortRetention.
const (
	PerSecond      = "per_second:"
	ShortRetention = 10 * time.Minute
)

// ExpiresAt is when the counter of key and window expires.
func ExpiresAt(key string, window time.Time) time.Time {
	if strings.HasPrefix(key, PerSecond) {
		return window.Add(ShortRetention)
	}
	return window.Add(Retention)
}

// Fits reports whether used+amount stays within limit (≤ 0: none); every
// store decides with it, inside its transaction.
func Fits(used, amount, limit int64) bool { return limit <= 0 || amount <= limit-used }

// Less is used-amount, never below 0: what Release leaves.
func Less(used, amount int64) int64 { return max(used-amount, 0) }
