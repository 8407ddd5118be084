package status

import (
	"time"

	"transcriber/internal/pipeline/admission"
	"transcriber/internal/speechkit"
)

// The keys and the code the pipeline writes that the status reads: the
// admission's counters, and the code the speechkit package names.
const (
	// RequestsKey is the counter of the recognizer's requests, one row per
	// request window.
	RequestsKey = admission.RequestsKey
	// InFlightKey is the counter of the recognitions in flight, one row
	// per in-flight window.
	InFlightKey = admission.InFlightKey
	// CodeRecognitionQuota is the code of a job the recognizer refused for
	// its request quota.
	CodeRecognitionQuota = speechkit.CodeRecognitionQuota
)

// Windows are the fixed windows the pipeline counts in: the recognizer's
// requests (RequestsKey) and the recognitions in flight (InFlightKey).
// The caller passes them in, from the pipeline's configuration
// (PipelineWindows).
type Windows struct {
	// RequestLength is the length of a request window and RequestLimit
	// the requests one allows; 0 is no pacing (the requests are not
	// counted).
	RequestLength time.Duration
	RequestLimit  int64
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

// The pipeline's check pauses the windows follow from (pipeline.Config's
// MaxCheckPause and DeferredCheckPause, which no setting changes).
const (
	pipelineMaxCheckPause      = time.Minute
	pipelineDeferredCheckPause = 15 * time.Minute
)

// PipelineWindows are the windows the pipeline counts in for
// SPEECHKIT_REQUESTS_PER_HOUR = requestsPerHour (0: no pacing): the
// admission's request windows (admission.SubmissionWindows), and the
// in-flight window twice the longest of the longest check pause, the
// deferred check pause and the request window (30 minutes by default).
func PipelineWindows(requestsPerHour int) Windows {
	paced := requestsPerHour > 0
	if !paced {
		requestsPerHour = admission.DefaultRequestsPerHour // the window a refusal by the recognizer waits out
	}
	length, limit := admission.SubmissionWindows(requestsPerHour)
	if !paced {
		limit = 0
	}
	return Windows{
		RequestLength:  length,
		RequestLimit:   limit,
		InFlightLength: admission.InFlightWindowLength(max(pipelineMaxCheckPause, pipelineDeferredCheckPause), length),
	}
}
