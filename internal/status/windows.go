package status

import "time"

// Windows are the pipeline's request windows and their counter's key
// (app.StatusConfig passes them in): RequestLimit requests a RequestLength
// window (0: not paced, not counted).
type Windows struct {
	RequestsKey   string
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
