package pipeline

import (
	"context"

	"transcriber/internal/errs"
	"transcriber/internal/job"
	"transcriber/internal/pipeline/admission"
)

// The breakers (admission/outage.go): a service out for every job is no
// job's failure. The stages ask before a call (pass), tell what it came
// back with (heard), and a failed attempt whose outage opened the breaker
// is held, not counted (outage). Held jobs come back in the order they
// were held, the first one the probe. A job whose calls fail while others'
// are answered never opens the breaker, and ends by the retry policy.

// heard tells s's breaker that a call was answered (no error, or one that
// is no outage): it closes. An outage is told by the attempt's settling.
func (p *Pipeline) heard(ctx context.Context, s admission.Service, err error) {
	if errs.Is(err, errs.Invalid) {
		return // refused before it left
	}
	if _, down := outageOf(ctx, err); !down && ctx.Err() == nil {
		p.admission.Answered(ctx, s)
	}
}

// pass asks s's breaker whether claimed job j may call s now; if not, the
// job is saved due when the breaker next lets a call through, and
// errOutageWait ends the attempt.
func (h *held) pass(ctx context.Context, j job.Job, s admission.Service) (job.Job, error) {
	until, ok := h.admission.Pass(ctx, s)
	if ok {
		return j, nil
	}
	return h.waitUntil(ctx, j, until, errOutageWait, "job waits", "reason", "outage", "service", string(s))
}

// outage releases claimed job j, its attempt not counted, due when the
// breaker next lets a call through, when cause is an outage that opened
// its service's breaker; it reports whether it did. Anything else, or a
// job past DefaultOutageHoldFor after its upload window, is the retry
// policy's: an outage holds a job for hours, not for ever.
func (p *Pipeline) outage(ctx context.Context, j job.Job, cause error) bool {
	s, ok := outageOf(ctx, cause)
	if !ok {
		return false
	}
	until, open := p.admission.Failed(ctx, s)
	if !open {
		return false
	}
	now := p.Clock.Now()
	from := j.UploadBy
	if from.IsZero() {
		from = j.CreatedAt // made before the window was kept
	}
	if limit := from.Add(DefaultOutageHoldFor); now.After(limit) {
		p.jobLog(j).WarnContext(ctx, "outage hold over; failures count", "service", string(s), "held_until", limit)
		return false
	}
	f := job.FailureOf(cause)
	f.Uncounted = true
	// A failed release is settled as any failure, which finds a lost claim.
	_, err := p.release(ctx, j, max(until.Sub(now), 0), f, "reason", "outage", "service", string(s))
	return err == nil
}
