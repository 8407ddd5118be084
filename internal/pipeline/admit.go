package pipeline

import (
	"context"
	"errors"
	"time"

	"transcriber/internal/job"
	"transcriber/internal/pipeline/admission"
)

// Admit a recognition: before a piece is submitted, the admission takes
// what it needs, all or none — the job's audio within its reservation, a
// place among the installation's recognitions in flight, a request in the
// recognizer's quota window — and when one has nothing, the piece waits
// (or, for audio beyond the reservation, the job fails). This is where a
// submission asks; prepare.go reserves the audio and gives back what the
// file did not hold, recognize_sync.go asks for a synchronous request
// (TakeSync), and submit.go, check.go and settle.go tell the admission
// what is over.

// admit asks the admission for piece i of the claimed job j, and reports
// whether the piece may be submitted now; j comes back with the piece's
// place recorded. A piece that finds no place in flight waits, the job in
// transcribe, and goes at a later check, as places come free (false, no
// error). At the request quota the job is saved due when the window ends,
// and errQuotaWait ends the attempt; with the recognizer out for every
// job, it is saved due when its breaker next lets a call through, and
// errOutageWait ends the attempt (outage.go). Audio beyond the reservation fails
// the job (admission.ErrOverReserved).
func (p *Pipeline) admit(ctx context.Context, j job.Job, i int, round *admission.Round) (job.Job, bool, error) {
	err := p.admission.Take(ctx, &j, i, round)
	var refused *admission.Refused
	if !errors.As(err, &refused) {
		return j, err == nil, err
	}
	switch refused.Resource {
	case admission.InFlight:
		p.jobLog(j).InfoContext(ctx, "the installation has its most recognitions in flight; the piece waits for a place",
			"segment", j.Segments[i].Seq, "max_in_flight", p.cfg.MaxInFlight)
		return j, false, nil
	case admission.Requests:
		j, err = p.waitForQuota(ctx, j, refused.Until)
		return j, false, err
	case admission.Outage:
		j, err = p.waitOutage(ctx, j, admission.Recognizer, refused.Until)
		return j, false, err
	}
	return j, false, err
}

// waitForQuota saves the claimed job due at until, when the request
// quota's next window opens, and returns errQuotaWait. Saving, not
// releasing, is what keeps the attempt from counting: the job goes on from
// where it is (its submitted segments kept) when it comes back.
func (p *Pipeline) waitForQuota(ctx context.Context, j job.Job, until time.Time) (job.Job, error) {
	return p.waitUntil(ctx, j, until, errQuotaWait, "recognition request quota used up; the job waits for the next window",
		"by", "counted", "requests_per_hour", p.cfg.RequestsPerHour)
}
