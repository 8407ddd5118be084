package status

import "time"

// Windows are the pipeline's counting windows and their counters' keys
// (app.StatusConfig passes them in): the recognizer's requests, RequestLimit
// a RequestLength window (0: not paced, not counted), and the recognitions
// in flight, a counter row a InFlightLength window (0: unread).
type Windows struct {
	RequestsKey    string
	RequestLength  time.Duration
	RequestLimit   int64
	InFlightKey    string
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
