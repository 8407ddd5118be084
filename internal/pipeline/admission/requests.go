package admission

import (
	"context"
	"fmt"
	"time"
)

// DefaultRequestsPerHour is SpeechKit's quota of asynchronous recognition
// requests an hour.
const DefaultRequestsPerHour = 500

// RequestsKey is the counter of the installation's recognition
// requests.
const RequestsKey = "speechkit_requests"

// SubmissionWindows returns the fixed windows the request quota is counted
// in, for perHour requests an hour: their length, an hour divided by k,
// and how many requests each may take, perHour/(k+1) rounded down. Any
// span of an hour touches at most k+1 such windows, so no hour, wherever it
// starts, holds more than perHour. k is the largest of 6…1 that leaves each
// window at least one request: 10-minute windows of 71 for 500 an hour
// (426 an hour when the demand never stops, 500 in the worst-placed hour).
// perHour 1 cannot be kept by fixed windows (two windows meet inside any
// hour that spans their border); it is taken as one per hour-long window,
// at most 2 in a span of an hour. perHour ≤ 0 is no pacing: a limit of 0.
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

// pacing reports whether requests are counted against the quota.
func (a *Admission) pacing() bool { return a.cfg.Counters != nil && a.cfg.RequestsPerHour > 0 }

// requestWindow returns the window of the request quota that holds now
// and its limit. Without pacing it is the window of the default quota,
// which a quota answer from the recognizer waits out.
func (a *Admission) requestWindow(now time.Time) (start, end time.Time, limit int64) {
	n := a.cfg.RequestsPerHour
	if !a.pacing() {
		n = DefaultRequestsPerHour
	}
	length, limit := SubmissionWindows(n)
	start = now.UTC().Truncate(length)
	return start, start.Add(length), limit
}

// requestWindowLength is the length of the request quota's windows, the
// longest a job waits for the quota without being checked.
func (a *Admission) requestWindowLength() time.Duration {
	start, end, _ := a.requestWindow(time.Time{})
	return end.Sub(start)
}

// RequestsFreeAt is when the request window that holds now ends: what a
// job waits for when the recognizer itself answers that its request quota
// is used up.
func (a *Admission) RequestsFreeAt(now time.Time) time.Time {
	_, end, _ := a.requestWindow(now)
	return end
}

// takeRequest counts one recognition request against the quota's current
// window, and returns that window, or refuses until the window ends.
// Without pacing it takes nothing (the zero window).
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
// pieces: the request quota's previous window used at most half of its
// requests, and the n fit in the first half of the current one with what
// it holds already. Each piece is a request: under load, pieces would
// spend the quota that other jobs wait for, so a recording is then sent
// as few files as SEGMENT_LENGTH allows. Speed when the installation is
// quiet, the most audio per request when it is busy. The previous window
// says whether the load goes on: at the start of a window the current
// one holds little whatever the load. Without pacing there is always
// room; a counter that cannot be read leaves the pieces as planned.
func (a *Admission) RoomForPieces(ctx context.Context, n int) bool {
	if !a.pacing() {
		return true
	}
	start, end, limit := a.requestWindow(a.cfg.Clock.Now())
	before := start.Add(-end.Sub(start))
	for _, w := range []struct {
		start time.Time
		n     int64
	}{{before, 0}, {start, int64(n)}} {
		used, err := a.cfg.Counters.Used(ctx, RequestsKey, w.start)
		if err != nil {
			a.cfg.Log.WarnContext(ctx, "could not read the request quota's window; cutting as planned", "error", err.Error())
			return true
		}
		if used+w.n > limit/2 {
			return false
		}
	}
	return true
}
