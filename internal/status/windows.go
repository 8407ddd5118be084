package status

import "time"

// Windows are the request windows the pipeline counts in, passed in from
// its configuration (app.StatusConfig) so the status holds none of its
// numbers.
type Windows struct {
	RequestsKey string // one row per request window
	// RequestLength is a window's length, RequestLimit the requests it
	// allows; 0 is no pacing.
	RequestLength time.Duration
	RequestLimit  int64
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
