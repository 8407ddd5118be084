package app

import (
	"transcriber/internal/pipeline"
	"transcriber/internal/pipeline/admission"
	"transcriber/internal/status"
)

// statusWindows are the windows p's admission counts in; unpaced, the
// default quota's, with no limit.
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
