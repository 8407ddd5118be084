package pipeline

import (
	"context"
	"errors"
	"time"

	"transcriber/internal/errs"
	"transcriber/internal/job"
	"transcriber/internal/media/ffmpeg"
	"transcriber/internal/pipeline/admission"
	"transcriber/internal/speechkit"
	"transcriber/internal/storage/s3"
)

// Outages: the recognizer or the object store unavailable to every job is
// no job's failure. The admission keeps a breaker a service in the shared
// counters (admission/outage.go); the stages ask it before they call
// (pass: before submissions, that is Take, and checks the recognizer;
// before ingest and a finish storage), tell it what a call came back with
// (heard), and a failed attempt whose cause is an outage that opened the
// breaker is held (outage), not counted. A held job is due when the
// breaker next lets a call through, so the jobs come back in the order
// they were held (their due time, then their id), and the first of them
// is the probe. Attempts stay for what is the job's own: a job whose calls
// keep failing while other jobs' are answered never opens the breaker,
// and ends dead by the retry policy.

// outageOf names the service whose outage err says, if it says one. A
// call stopped by its own context (a shutdown, a lost claim, the call's
// deadline) is nobody's outage.
func outageOf(ctx context.Context, err error) (admission.Service, bool) {
	switch {
	case err == nil || ctx.Err() != nil:
		return "", false
	case speechkit.Outage(err):
		return admission.Recognizer, true
	case s3.Outage(err), errors.Is(err, ffmpeg.ErrSourceUnavailable):
		return admission.Storage, true
	}
	return "", false
}

// heard tells s's breaker what a call to s came back with: an answer (no
// error, or an error that is not an outage) closes it; an outage is told
// by the failed attempt's settling (outage).
func (p *Pipeline) heard(ctx context.Context, s admission.Service, err error) {
	if errs.Is(err, errs.Invalid) {
		return // refused before it left: it says nothing of the service
	}
	if _, down := outageOf(ctx, err); !down && ctx.Err() == nil {
		p.admission.Answered(ctx, s)
	}
}

// heardAside tells s's breaker what a call came back with when its
// failure ends no attempt, so no settling tells it (a synchronous request,
// whose failure sends the job the asynchronous way): an answer closes the
// breaker as heard does; an outage counts one more failure in a row, as a
// failed attempt's settling would; a call refused before it left (errs.
// Invalid) or stopped by a fault of ours (errs.Internal) says nothing.
func (p *Pipeline) heardAside(ctx context.Context, s admission.Service, err error) {
	switch _, down := outageOf(ctx, err); {
	case errs.Is(err, errs.Internal):
	case down:
		p.admission.Failed(ctx, s)
	default:
		p.heard(ctx, s, err)
	}
}

// pass asks s's breaker whether the claimed job j may call s now. When it
// may not, the job is held until the breaker's interval ends (waitOutage)
// and errOutageWait ends the attempt.
func (p *Pipeline) pass(ctx context.Context, j job.Job, s admission.Service) (job.Job, error) {
	until, ok := p.admission.Pass(ctx, s)
	if ok {
		return j, nil
	}
	return p.waitOutage(ctx, j, s, until)
}

// waitOutage saves the claimed job due at until, when s's breaker next
// lets a call through, and returns errOutageWait. Saving, as for the
// request quota, keeps the attempt from counting and keeps what the job
// has done (its submitted pieces).
func (p *Pipeline) waitOutage(ctx context.Context, j job.Job, s admission.Service, until time.Time) (job.Job, error) {
	return p.waitUntil(ctx, j, until, errOutageWait, "a service every job needs is unavailable; the job waits for it",
		"service", string(s))
}

// outage ends claimed job j's failed attempt when its cause is an outage
// that has opened its service's breaker: the job is released due when the
// breaker next lets a call through, the failure recorded and the attempt
// not counted (job.Failure.Uncounted). It reports whether it did. A
// failure that is no outage, or one that leaves the breaker closed (the
// first in a row, or failures between answers), is the retry policy's;
// so is every failure of a job held longer than OutageHoldFor past its
// upload window: an outage may hold a job for hours, not for ever.
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
	if limit := holdLimit(j, p.cfg.OutageHoldFor); now.After(limit) {
		p.jobLog(j).WarnContext(ctx, "the job has waited out outages for too long; its failures count again",
			"service", string(s), "held_until", limit)
		return false
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), settleTimeout)
	defer cancel()
	f := job.FailureOf(cause)
	f.Uncounted = true
	released, err := p.Store.Release(sctx, j.Claim(), max(until.Sub(now), 0), f)
	if err != nil {
		return false // settled as any failure: a lost claim is found there
	}
	p.jobLog(released).InfoContext(ctx, "a service every job needs is unavailable; the job waits for it, its attempt not counted",
		"service", string(s), "code", released.ErrorCode, "next_run_at", released.NextRunAt, "attempts", released.Attempts)
	return true
}

// holdLimit is when j stops being held for outages: hold after its upload
// window closed (its creation, for a job made before the window was kept).
func holdLimit(j job.Job, hold time.Duration) time.Time {
	from := j.UploadBy
	if from.IsZero() {
		from = j.CreatedAt
	}
	return from.Add(hold)
}
