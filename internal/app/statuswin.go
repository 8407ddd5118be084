package app

import (
	"transcriber/internal/pipeline"
	"transcriber/internal/pipeline/admission"
	"transcriber/internal/status"
)

// statusWindows are the windows the pipeline of p counts in, for the
// status to read: the admission's request windows (not paced: the
// default quota's window, which a refusal by the recognizer waits out,
// with no limit).
func statusWindows(p pipeline.Config) status.Windows {
	perHour := p.RequestsPerHour
	paced := perHour > 0
	if !paced {
		perHour = admission.DefaultRequestsPerHour
	}
	length, limit := admission.SubmissionWindows(perHour)
	if !paced {
		limit = 0
	}
	return status.Windows{
		RequestsKey:   admission.RequestsKey,
		RequestLength: length,
		RequestLimit:  limit,
	}
}
