package pipeline

import (
	"context"
	"errors"
	"time"

	"transcriber/internal/job"
	"transcriber/internal/pipeline/admission"
)

// admit asks the admission for piece i of claimed job j (audio within the
// reservation, the breaker, a request in the window, all or none) and
// returns the request's window, for Unsent. At the request quota or an
// outage the job is saved due when it frees, and errQuotaWait or
// errOutageWait ends the attempt; audio beyond the reservation fails it.
func (h *held) admit(ctx context.Context, j job.Job, i int) (job.Job, time.Time, error) {
	window, err := h.admission.Take(ctx, j, i)
	var refused *admission.Refused
	if !errors.As(err, &refused) {
		return j, window, err
	}
	switch refused.Resource {
	case admission.Requests:
		j, err = h.waitUntil(ctx, j, refused.Until, errQuotaWait, "job waits", "reason", "requests",
			"requests_per_hour", h.cfg.RequestsPerHour)
	case admission.Outage:
		j, err = h.waitUntil(ctx, j, refused.Until, errOutageWait, "job waits", "reason", "outage",
			"service", string(admission.Recognizer))
	}
	return j, window, err
}
