package pipeline

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"transcriber/internal/errs"
	"transcriber/internal/ident"
	"transcriber/internal/job"
	"transcriber/internal/pipeline/admission"
)

// The upload event: Uploaded claims the object's job and walks it forward
// through the stages that follow an upload — accept, prepare, for a short
// fast job synchronous recognition (which ends it done in the call),
// submit (each piece admitted first), and, for a short recording, its
// first checks — saving after each while it keeps its claim. The timer's sweep walks the
// ingest work it takes back the same way (ingest).

// Uploaded handles an object created under sources/: it claims the object's
// job and takes it as far as it goes. An object that names no job, or a job
// another call holds or already took further, is not an error: redelivered
// events land here and do nothing. An error is returned only when the event
// should be delivered again (the store failed before a claim was made).
func (p *Pipeline) Uploaded(ctx context.Context, key string) error {
	id, ok := p.uploadOf(ctx, key)
	if !ok {
		return nil
	}
	j, err := p.Store.Claim(ctx, id, job.Ingest)
	switch {
	case errors.Is(err, job.ErrNotFound):
		p.Log.WarnContext(ctx, "upload event for an unknown job; ignored", "job_id", id)
		return nil
	case errors.Is(err, job.ErrNotClaimable):
		p.Log.InfoContext(ctx, "upload event for a job that is taken or past ingest; nothing to do", "job_id", id)
		// A file uploaded to a deleted job's URL is not kept.
		p.purgeIfDeleted(ctx, job.Job{ID: id})
		return nil
	case err != nil:
		return fmt.Errorf("upload event for job %s: %w", id, err)
	}
	work, stop := p.hold(ctx, j, job.Ingest)
	defer stop()
	p.ingest(work, j, true)
	return nil
}

// uploadOf is the id of the job an object created at key is the upload
// of; false (logged) for an object outside the job layout.
func (p *Pipeline) uploadOf(ctx context.Context, key string) (string, bool) {
	idPart, ok := strings.CutPrefix(key, "sources/")
	id, err := ident.Parse(idPart)
	if !ok || err != nil {
		p.Log.WarnContext(ctx, "upload event for an object outside the job layout; ignored", "object_key", key)
		return "", false
	}
	return id, true
}

// acceptOnly is the claim Accept makes: of a job waiting for its upload
// only, for as long as accepting it takes.
var acceptOnly = job.Step{Name: "accept", From: []job.State{job.AwaitingUpload}, Lease: job.Lease}

// Accept takes the job of an object created under sources/ only as far as
// accepting its file (awaiting_upload → created), and lets it go for
// Uploaded to take on from there, by the same event. It is for a host
// that runs its uploads through a few workers (the local stack): a job
// whose file arrived says so at once, while the workers are busy with the
// conversions and recognitions before it. The job is due at once: the
// timer's sweep may take it first (oldest first), and the worker its
// event goes to then finds it taken, as a redelivered event does; a job
// whose event was lost (a stop) is the sweep's. A job past
// awaiting_upload, held, deleted or unknown is left to Uploaded, which
// says why; as there, an error is returned only when the store failed
// before a claim was made.
func (p *Pipeline) Accept(ctx context.Context, key string) error {
	id, ok := p.uploadOf(ctx, key)
	if !ok {
		return nil
	}
	j, err := p.Store.Claim(ctx, id, acceptOnly)
	switch {
	case errors.Is(err, job.ErrNotFound), errors.Is(err, job.ErrNotClaimable):
		return nil
	case err != nil:
		return fmt.Errorf("upload event for job %s: %w", id, err)
	}
	work, stop := p.hold(ctx, j, acceptOnly)
	defer stop()
	if j, err = p.pass(work, j, admission.Storage); err == nil {
		j, err = p.accept(work, j)
	}
	if err == nil && j.State == job.Created {
		_, err = p.save(work, j, job.Next{})
	}
	switch {
	case errors.Is(err, errOutageWait):
	case err != nil:
		p.jobLog(j).WarnContext(ctx, "accepting the upload failed", "error", err.Error(), "code", errs.CodeOf(err))
		p.settle(work, j, err)
	}
	return nil
}

// ingest runs the ingest step on a claimed job. A failure ends the attempt
// by the retry policy; nothing is returned because the job records it.
//
// inline says whether a short recording is checked in this call after its
// submission (checkSoon): so for the upload's own event, whose sender
// waits for the answer; not for the poll function's sweep, whose call
// would otherwise wait up to InlineCheckFor for each job it takes.
func (p *Pipeline) ingest(ctx context.Context, j job.Job, inline bool) {
	if p.cfg.Policy.Abandoned(j) {
		p.settle(ctx, j, errAttemptsExhausted)
		return
	}
	j, err := p.runIngest(ctx, j, inline)
	if errors.Is(err, errQuotaWait) || errors.Is(err, errOutageWait) {
		return // the job waits for the quota's next window or out an outage, saved and logged
	}
	if err != nil {
		p.jobLog(j).WarnContext(ctx, "ingest failed", "error", err.Error(), "code", errs.CodeOf(err))
		p.settle(ctx, j, err)
	}
}

func (p *Pipeline) runIngest(ctx context.Context, j job.Job, inline bool) (job.Job, error) {
	j, err := p.pass(ctx, j, admission.Storage)
	if err != nil {
		return j, err
	}
	if j.State == job.AwaitingUpload {
		if j, err = p.accept(ctx, j); err != nil || j.State == job.AwaitingUpload {
			return j, err
		}
	}
	var audio []byte // a short fast job's audio, made in this call
	if j.State == job.Created {
		if j, audio, err = p.prepare(ctx, j); err != nil || j.State == job.Done {
			return j, err
		}
	}
	if j.State == job.Converted {
		if j, err = p.recognizeSync(ctx, j, audio); err != nil || j.State == job.Done {
			return j, err
		}
		if j, err = p.submit(ctx, j); err != nil {
			return j, err
		}
	}
	if j.State != job.Transcribe {
		return j, fmt.Errorf("ingest ended in state %s", j.State)
	}
	return p.checkSoon(ctx, j, inline)
}
