package pipeline

import (
	"context"
	"errors"

	"transcriber/internal/errs"
	"transcriber/internal/job"
)

// attempt runs step on claimed job j, and ends a failed attempt by the
// retry policy; a job whose last attempt crashed without a word
// (job.Policy.Abandoned) ends dead unrun. A wait for the request quota or
// an outage is no failure: the job is saved already.
func (p *Pipeline) attempt(ctx context.Context, j job.Job, what string, step func(context.Context, job.Job) (job.Job, error)) {
	if p.cfg.Policy.Abandoned(j) {
		p.settle(ctx, j, errAttemptsExhausted)
		return
	}
	j, err := step(ctx, j)
	if err == nil || errors.Is(err, errQuotaWait) || errors.Is(err, errOutageWait) {
		return
	}
	p.jobLog(j).WarnContext(ctx, what+" failed", "error", err.Error(), "code", errs.CodeOf(err))
	p.settle(ctx, j, err)
}

// settle ends a failed attempt by the retry policy (released for another
// try, or failed or dead), unless an outage every job met holds it.
func (p *Pipeline) settle(ctx context.Context, j job.Job, cause error) {
	if p.outage(ctx, j, cause) {
		return
	}
	log := p.jobLog(j)
	// A call stopped mid-step still records its attempt's end, so the job
	// is due again at once, not when its lease runs out.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), settleTimeout)
	defer cancel()
	got, err := job.Settle(ctx, p.Store, p.cfg.Policy, j, cause)
	switch {
	case errors.Is(err, job.ErrClaimLost):
		log.WarnContext(ctx, "claim lost; new holder carries on", "error", err.Error())
		p.purgeIfDeleted(ctx, j)
		return
	case err != nil:
		log.ErrorContext(ctx, "failure not recorded; the lease will expire", "error", err.Error())
		return
	}
	// Name the attempt that ended: a terminal save resets attempts to 0.
	logged := got
	logged.Attempts = j.Attempts
	p.jobLog(logged).InfoContext(ctx, "attempt ended", "code", got.ErrorCode, "next_run_at", got.NextRunAt)
	if got.State.Terminal() {
		p.ended(ctx, j, got)
	}
}

// ended is the one point where a job's end, saved by this step under its
// claim, is told (was: the job before the save): the admission gives back
// what it held, the notifier hears, and its recognitions are deleted at
// the recognizer, best effort (SpeechKit's retention removes the rest).
func (p *Pipeline) ended(ctx context.Context, was, j job.Job) {
	p.admission.Release(ctx, was, j)
	if j.State == job.Done {
		job.DeleteRecognitions(ctx, p.Recognizer, p.Log, j)
		p.notify(ctx, j)
		return
	}
	p.notify(ctx, j)
	if p.Recognizer != nil {
		job.DeleteRecognitions(ctx, p.Recognizer, p.Log, j)
	}
}

func (p *Pipeline) notify(ctx context.Context, j job.Job) {
	if err := p.Notifier.Finished(ctx, j); err != nil {
		p.jobLog(j).WarnContext(ctx, "not notified", "error", err.Error())
	}
}

// purgeIfDeleted removes what an attempt made for a job deleted under it
// (the deletion removed what existed then, and gave back its place among
// the unfinished).
func (p *Pipeline) purgeIfDeleted(ctx context.Context, j job.Job) {
	cur, err := p.Store.Get(ctx, j.ID)
	if err != nil || !cur.Deleted() {
		return
	}
	job.Purge(ctx, p.Objects, p.Recognizer, p.Log, j)
	p.jobLog(j).InfoContext(ctx, "deleted job's leftovers removed")
}
