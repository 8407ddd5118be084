package speechkit

import (
	"context"
	"time"

	"transcriber/internal/clock"
	"transcriber/internal/quota"
)

// SyncQuotaKey is the usage counter of the installation's synchronous
// recognition requests, one window per SyncWindow (UTC).
const SyncQuotaKey = quota.PerSecond + "speechkit_sync_requests"

// SyncRequestsPerSecond is SpeechKit's quota of synchronous recognition
// requests: "Requests per second: 20" (speechkit/concepts/limits.md,
// "Synchronous recognition"). Asynchronous requests do not count against
// it. Whether SpeechKit counts it per clock second or over any second is
// not documented: TakeSyncPlace keeps it over any second.
const SyncRequestsPerSecond = 20

// SyncWindow is the length of the synchronous quota's counter windows,
// and SyncWindowsCounted how many of them, the current one last, hold at
// most SyncRequestsPerSecond places between them: half-second windows,
// four of them, two seconds.
const (
	SyncWindow         = 500 * time.Millisecond
	SyncWindowsCounted = 4
)

// SyncSendWithin is how soon after its place is taken a request must
// reach SpeechKit for the bound below to hold: one window.
const SyncSendWithin = SyncWindow

// TakeSyncPlace takes one place in the installation's synchronous quota,
// shared by every instance through counters, so that no span of one
// second holds more than SyncRequestsPerSecond requests, wherever the
// span starts. It returns true with a place; otherwise false and the
// earliest time a place may come (next), which is at most
// SyncWindowsCounted windows (2 s) after now. With nil counters nothing
// is paced and every call has a place.
//
// How: time is cut into windows W(n) = [n·w, (n+1)·w), w = SyncWindow,
// and a place is taken in the window that holds now, W(n): the counts of
// the three windows before it are read (their sum S), then W(n)'s counter
// is reserved with the limit 20 − S (a conditional update: concurrent
// callers never pass it together), and the clock is read again. A place
// is used (the request sent) only if that clock is still inside W(n); a
// place taken later stays counted and unused, and the call tries the
// window it is in, once.
//
// The bound. (1) For every n, the used places of W(n−3) … W(n) number
// at most 20. A used place q of an earlier window W(i) committed before
// the clock left W(i), so before (i+1)·w ≤ n·w, and every place of W(n)
// read the windows before it after n·w: each saw q, so each sum S is at
// least the used places of W(n−3) … W(n−1), and each limit 20 − S at
// most 20 less those. W(n)'s counter never passes the largest limit it
// was reserved with (quota.Counters; a spread counter's rows each keep
// to their share of it), and it holds every used place of W(n). If W(n)
// has no place, the last earlier window that has one covers the rest:
// its four windows hold W(n−3) … W(n)'s used places. (2) A request is
// sent within SyncSendWithin (one window: the breaker's read and the
// job's save) of its place, so the requests of W(n) go in
// [n·w, (n+2)·w). A closed span [a, a + 1 s] = [a, a + 2w] meets that
// only for a/w − 2 < n ≤ a/w + 2: four consecutive windows, at most 20
// requests by (1).
//
// Stated limits of the bound: the instances' clocks are taken to agree
// to within milliseconds (not documented for Cloud Functions: a skew
// adds to the send time's slack), and a request slower than
// SyncSendWithin to leave, or slower on the network than its neighbours
// by as much, may pass it; SpeechKit then answers
// 429 (CodeSyncQuota), and the recognition goes asynchronous.
//
// What it costs: three counter reads a place (each of the spread
// counter's rows, quota.Spread), besides the reservation; and at most 20
// places in any two seconds, 10 a second sustained where SpeechKit takes
// 20: the margin that makes any one second safe. The function calls'
// concurrency binds first (docs/scale.md).
//
// Errors are the store's (errs.Unavailable): the caller should not send
// the request unpaced then, but go asynchronous.
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
			// The window ended during the reads: nothing taken yet.
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
			// W(n) holds at least its share of 20 − S: a refused
			// reservation found every row of it full.
			counts[SyncWindowsCounted-1] = SyncRequestsPerSecond - before
			return false, nextSyncPlace(start, counts), nil
		}
		if clk.Now().Before(end) {
			return true, time.Time{}, nil
		}
		// Taken after the window ended: a later window's reader may have
		// missed it, so it is not used.
		if try > 0 {
			return false, clk.Now(), nil
		}
	}
}

// nextSyncPlace is the earliest a place may come after a refusal in the
// window starting at start, counts being at least what W(n−3) … W(n)
// hold: the first later window whose three windows before it, as far as
// they are known, hold fewer than 20; the windows after W(n) are taken
// empty, so W(n+4) always may.
func nextSyncPlace(start time.Time, counts [SyncWindowsCounted]int64) time.Time {
	for j := 1; j < SyncWindowsCounted; j++ {
		var held int64
		for _, c := range counts[j:] {
			held += c
		}
		if held < SyncRequestsPerSecond {
			return start.Add(time.Duration(j) * SyncWindow)
		}
	}
	return start.Add(SyncWindowsCounted * SyncWindow)
}
