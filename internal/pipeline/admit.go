package pipeline

import (
	"context"
	"errors"

	"transcriber/internal/job"
	"transcriber/internal/pipeline/admission"
)

// admit asks the admission for piece i of claimed job j (audio within the
// reservation, the breaker, a place in flight, a request in the window,
// all or none) and reports whether it may be submitted now. Without a
// place in flight the piece waits for a later check (false, no error);
// at the request quota or an outage the job is saved due when it frees,
// and errQuotaWait or errOutageWait ends the attempt; audio beyond the
// reservation fails the job.
func (h *held) admit(ctx context.Context, j job.Job, i int, round *admission.Round) (job.Job, bool, error) {
	err := h.admission.Take(ctx, &j, i, round)
	var refused *admission.Refused
	if !errors.As(err, &refused) {
		return j, err == nil, err
	}
	switch refused.Resource {
	case admission.InFlight:
		h.jobLog(j).InfoContext(ctx, "piece waits", "reason", "in_flight", "segment", j.Segments[i].Seq, "max_in_flight", h.cfg.MaxInFlight)
		return j, false, nil
	case admission.Requests:
		j, err = h.waitUntil(ctx, j, refused.Until, errQuotaWait, "job waits", "reason", "requests",
			"requests_per_hour", h.cfg.RequestsPerHour)
		return j, false, err
	case admission.Outage:
		j, err = h.waitUntil(ctx, j, refused.Until, errOutageWait, "job waits", "reason", "outage",
			"service", string(admission.Recognizer))
		return j, false, err
	}
	return j, false, err
}
