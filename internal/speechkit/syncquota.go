package speechkit

import (
	"context"
	"time"

	"transcriber/internal/clock"
	"transcriber/internal/quota"
)

const (
	// SyncQuotaKey counts the installation's synchronous requests per SyncWindow (UTC).
	SyncQuotaKey = quota.PerSecond + "speechkit_sync_requests"
	// SyncRequestsPerSecond is SpeechKit's synchronous quota
	// (speechkit/concepts/limits.md); clock second or any second is not
	// documented, so TakeSyncPlace keeps it over any second.
	SyncRequestsPerSecond = 20
	// SyncWindowsCounted windows of SyncWindow, the current one last, hold
	// at most SyncRequestsPerSecond places between them.
	SyncWindow         = 500 * time.Millisecond
	SyncWindowsCounted = 4
	// SyncSendWithin is how soon after its place a request must leave for the bound to hold.
	SyncSendWithin = SyncWindow
)

// TakeSyncPlace takes a place in the installation's synchronous quota so
// that no one-second span, wherever it starts, holds more than 20 requests;
// without one it returns the earliest time one may come (at most 2 s on).
// Nil counters pace nothing; on a store error the caller goes asynchronous.
//
// In window W(n) = [n·w, (n+1)·w) it reads the three windows before (sum S),
// reserves W(n) with limit 20 − S (a conditional update) and reads the
// clock again: a place taken after W(n) ended stays counted, unused, and
// the call tries once more. So every used place of an earlier window
// committed before n·w and every reader of W(n) saw it: W(n−3)…W(n) hold
// at most 20, W(n)'s requests leave in [n·w, (n+2)·w), and a one-second
// span meets four windows. It assumes clocks agree to milliseconds and no
// request takes over SyncSendWithin to leave (else a 429 sends it
// asynchronous). The price: 10 a second sustained of SpeechKit's 20
// (docs/scale.md).
func TakeSyncPlace(ctx context.Context, counters quota.Counters, clk clock.Clock) (ok bool, next time.Time, err error) {
	if counters == nil {
		return true, time.Time{}, nil
	}
	for try := 0; ; try++ {
		start := clk.Now().UTC().Truncate(SyncWindow)
		end := start.Add(SyncWindow)
		var counts [SyncWindowsCounted]int64 // W(n−3) … W(n)
		var before int64
		for i := range SyncWindowsCounted - 1 {
			w := start.Add(-time.Duration(SyncWindowsCounted-1-i) * SyncWindow)
			if counts[i], err = counters.Used(ctx, SyncQuotaKey, w); err != nil {
				return false, time.Time{}, err
			}
			before += counts[i]
		}
		if before >= SyncRequestsPerSecond {
			return false, nextSyncPlace(start, counts), nil
		}
		if !clk.Now().Before(end) {
			// The window ended during the reads; nothing taken.
			if try == 0 {
				continue
			}
			return false, clk.Now(), nil
		}
		_, ok, err := counters.Reserve(ctx, SyncQuotaKey, start, 1, SyncRequestsPerSecond-before)
		if err != nil {
			return false, time.Time{}, err
		}
		if !ok {
			// A refused reservation found every row full.
			counts[SyncWindowsCounted-1] = SyncRequestsPerSecond - before
			return false, nextSyncPlace(start, counts), nil
		}
		if clk.Now().Before(end) {
			return true, time.Time{}, nil
		}
		// Taken after the window ended: a later reader may have missed it.
		if try > 0 {
			return false, clk.Now(), nil
		}
	}
}

// nextSyncPlace is the first later window whose three predecessors, later
// ones taken empty, hold fewer than 20; W(n+4) always may.
func nextSyncPlace(start time.Time, counts [SyncWindowsCounted]int64) time.Time {
	for j := 1; ; j++ { // j = SyncWindowsCounted counts nothing
		var held int64
		for _, c := range counts[j:] {
			held += c
		}
		if held < SyncRequestsPerSecond {
			return start.Add(time.Duration(j) * SyncWindow)
		}
	}
}
