package status

import "time"

// Windows are the fixed windows the pipeline counts in, in the usage
// counters, and the counters' keys: the recognizer's requests and the
// recognitions in flight. The caller passes them in from the pipeline's
// configuration (app.StatusConfig), so the status holds none of the
// pipeline's numbers.
type Windows struct {
	// RequestsKey is the counter of the recognizer's requests, one row per
	// request window.
	RequestsKey string
	// RequestLength is the length of a request window and RequestLimit
	// the requests one allows; 0 is no pacing (the requests are not
	// counted).
	RequestLength time.Duration
	RequestLimit  int64
	// InFlightKey is the counter of the recognitions in flight, one row
	// per in-flight window.
	InFlightKey string
	// InFlightLength is the length of an in-flight window; 0 leaves the
	// recognitions in flight unread.
	InFlightLength time.Duration
}

// RequestWindow is the request window that holds a moment.
type RequestWindow struct {
	Start, End time.Time
	Limit      int64 // 0: not paced
}

// Request returns the request window that holds now.
func (w Windows) Request(now time.Time) RequestWindow {
	if w.RequestLength <= 0 {
		return RequestWindow{}
	}
	start := now.UTC().Truncate(w.RequestLength)
	return RequestWindow{Start: start, End: start.Add(w.RequestLength), Limit: w.RequestLimit}
}

// InFlight returns the in-flight window that holds now and the one before
// it; the zero times when InFlightLength is 0.
func (w Windows) InFlight(now time.Time) (cur, prev time.Time) {
	if w.InFlightLength <= 0 {
		return time.Time{}, time.Time{}
	}
	cur = now.UTC().Truncate(w.InFlightLength)
	return cur, cur.Add(-w.InFlightLength)
}
