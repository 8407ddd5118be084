package speechkit

import (
	"context"
	"time"

	"transcriber/internal/quota"
)

// SyncQuotaKey is the usage counter of the installation's synchronous
// recognition requests, one window per UTC second.
const SyncQuotaKey = quota.PerSecond + "speechkit_sync_requests"

// SyncRequestsPerSecond is SpeechKit's quota of synchronous recognition
// requests: "Requests per second: 20" (speechkit/concepts/limits.md,
// "Synchronous recognition"). Asynchronous requests do not count against
// it.
const SyncRequestsPerSecond = 20

// TakeSyncPlace takes one place in the installation's synchronous quota
// for the UTC second that holds now, shared by every instance through
// counters (a conditional update: concurrent callers never pass the limit
// together). It returns false when the second's SyncRequestsPerSecond
// places are taken: the recording then goes asynchronous rather than wait,
// since the asynchronous path is the one that waits well. With nil counters
// nothing is paced and every call has a place.
//
// A place taken and not used is not given back: the second is over before
// it could serve anyone else. Seconds are fixed windows, so two calls a
// second apart may fall in different ones; whether SpeechKit counts its 20
// the same way is not documented, and a request it refuses (429,
// CodeSyncQuota) goes asynchronous all the same.
//
// Errors are the store's (errs.Unavailable): the caller should not send
// the request unpaced then, but go asynchronous.
func TakeSyncPlace(ctx context.Context, counters quota.Counters, now time.Time) (bool, error) {
	if counters == nil {
		return true, nil
	}
	window := now.UTC().Truncate(time.Second)
	_, ok, err := counters.Reserve(ctx, SyncQuotaKey, window, 1, SyncRequestsPerSecond)
	if err != nil {
		return false, err
	}
	return ok, nil
}
