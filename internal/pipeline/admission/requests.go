package admission

import (
	"context"
	"fmt"
	"time"
)

// DefaultRequestsPerHour is SpeechKit's quota of asynchronous recognition
// requests an hour; RequestsKey counts them.
const (
	DefaultRequestsPerHour = 500
	RequestsKey            = "speechkit_requests"
)

// SubmissionWindows returns the fixed windows the request quota is counted
// in for perHour: an hour / k long, each taking perHour/(k+1). Any hour
// touches at most k+1 windows, so none holds more than perHour. k is the
// largest of 6…1 that leaves a window one request: 10-minute windows of 71
// for 500 (426 an hour under steady demand). perHour 1 is one per hour-long
// window (at most 2 in an hour); perHour ≤ 0 is no pacing (limit 0).
func SubmissionWindows(perHour int) (time.Duration, int64) {
	if perHour <= 0 {
		return time.Hour / 6, 0
	}
	for k := 6; k >= 1; k-- {
		if limit := perHour / (k + 1); limit >= 1 {
			return time.Hour / time.Duration(k), int64(limit)
		}
	}
	return time.Hour, 1
}

func (a *Admission) pacing() bool { return a.cfg.Counters != nil && a.cfg.RequestsPerHour > 0 }

// requestWindow is the request window that holds now, and its limit;
// without pacing, the default quota's window (what a refusal by the
// recognizer waits out).
func (a *Admission) requestWindow(now time.Time) (start, end time.Time, limit int64) {
	n := a.cfg.RequestsPerHour
	if !a.pacing() {
		n = DefaultRequestsPerHour
	}
	length, limit := SubmissionWindows(n)
	start = now.UTC().Truncate(length)
	return start, start.Add(length), limit
}

// RequestsFreeAt is when the request window that holds now ends.
func (a *Admission) RequestsFreeAt(now time.Time) time.Time {
	_, end, _ := a.requestWindow(now)
	return end
}

// takeRequest counts one request in the current window and returns the
// window, or refuses until it ends; without pacing it takes nothing.
func (a *Admission) takeRequest(ctx context.Context) (time.Time, error) {
	if !a.pacing() {
		return time.Time{}, nil
	}
	start, end, limit := a.requestWindow(a.cfg.Clock.Now())
	_, ok, err := a.cfg.Counters.Reserve(ctx, RequestsKey, start, 1, limit)
	if err != nil {
		return time.Time{}, fmt.Errorf("count a recognition request: %w", err)
	}
	if !ok {
		return time.Time{}, &Refused{Resource: Requests, Until: end}
	}
	return start, nil
}

// RoomForPieces reports whether the installation is quiet enough for n
// pieces, each a request: the previous window used at most half its
// limit, and the n fit in the current one's first half. Under load a
// recording goes as few pieces as SEGMENT_LENGTH allows, leaving the quota
// to other jobs. Without pacing, or a counter unread, there is room.
func (a *Admission) RoomForPieces(ctx context.Context, n int) bool {
	if !a.pacing() {
		return true
	}
	start, end, limit := a.requestWindow(a.cfg.Clock.Now())
	before := start.Add(-end.Sub(start))
	for i, w := range []time.Time{before, start} { // the pieces go in the second
		used, err := a.cfg.Counters.Used(ctx, RequestsKey, w)
		if err != nil {
			a.cfg.Log.WarnContext(ctx, "request window unread; cutting as planned", "error", err.Error())
			return true
		}
		if used+int64(i*n) > limit/2 {
			return false
		}
	}
	return true
}
