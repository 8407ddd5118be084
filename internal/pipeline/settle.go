package pipeline

import (
	"context"
	"errors"

	"transcriber/internal/job"
)

// Settle an ending: a failed attempt ends by the retry policy (settle),
// unless an outage every job met holds it (outage.go); a
// job that ended (done, failed, dead) is told once, at one point, to the
// admission, the recognizer and the notifier (ended); and a step that
// finds its claim taken by a deletion removes what it made (purgeIfDeleted).

// settle ends a failed attempt by the retry policy: released to be tried
// again after the policy's pause, or ended failed or dead.
func (p *Pipeline) settle(ctx context.Context, j job.Job, cause error) {
	if p.outage(ctx, j, cause) {
		return // held for an outage of a service every job needs
	}
	log := p.jobLog(j)
	// A call stopped mid-step (shutdown, timeout) still records the end of
	// its attempt, so the job is due again at once instead of when the
	// claim's lease runs out.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), settleTimeout)
	defer cancel()
	got, err := job.Settle(ctx, p.Store, p.cfg.Policy, j, cause)
	switch {
	case errors.Is(err, job.ErrClaimLost):
		log.WarnContext(ctx, "claim lost; the new holder carries on", "error", err.Error())
		p.purgeIfDeleted(ctx, j)
		return
	case err != nil:
		log.ErrorContext(ctx, "could not record the failure; the claim will expire and the job come back", "error", err.Error())
		return
	}
	// The line names the attempt that ended: an ending saved as failed or
	// dead returns the job's attempts to 0.
	logged := got
	logged.Attempts = j.Attempts
	p.jobLog(logged).InfoContext(ctx, "attempt ended", "code", got.ErrorCode, "next_run_at", got.NextRunAt)
	if got.State.Terminal() {
		p.ended(ctx, j, got)
	}
}

// ended is the one point where a job's end, saved by this step under its
// claim (so by no one else), is told: j is the job as saved, was as the
// step had it before. The admission gives back what the job held (its
// places in flight, its place among its payer's unfinished jobs, and its
// audio reservation if none of it reached the recognizer); the notifier
// hears of it; and its recognitions are deleted at the recognizer: a done
// job's results are in storage (SpeechKit would keep them 3 days), a
// failed or dead job's will never be read. Deleting is best effort: a
// failure is logged and SpeechKit's own retention removes the rest.
func (p *Pipeline) ended(ctx context.Context, was, j job.Job) {
	p.admission.Release(ctx, was, &j)
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
		p.jobLog(j).WarnContext(ctx, "could not notify", "error", err.Error())
	}
}

// purgeIfDeleted removes what an attempt made for a job that was deleted
// under it (its claim was taken away): the source, converted audio, the
// transcript and recognitions it knows of. Deletion removed what existed
// then; this removes what the attempt added since. The deletion ended the
// job and gave back its place among the unfinished (spend.Deleted); the
// step tells the admission nothing more, and the job's places in flight
// leave the count with their windows.
func (p *Pipeline) purgeIfDeleted(ctx context.Context, j job.Job) {
	cur, err := p.Store.Get(ctx, j.ID)
	if err != nil || !cur.Deleted() {
		return
	}
	log := p.jobLog(j)
	job.Purge(ctx, p.Objects, p.Recognizer, p.Log, j)
	log.InfoContext(ctx, "removed what an attempt made for a deleted job")
}
