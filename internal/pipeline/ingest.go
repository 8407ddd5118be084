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

// Uploaded handles an object created under sources/: it claims the job and
// takes it as far as it goes. An unknown object, or a job held or past
// ingest, is no error (redelivered events land here); an error means the
// event should come again (the store failed before a claim).
func (p *Pipeline) Uploaded(ctx context.Context, key string) error {
	id, ok := p.uploadOf(ctx, key)
	if !ok {
		return nil
	}
	j, err := p.Store.Claim(ctx, id, job.Ingest)
	switch {
	case errors.Is(err, job.ErrNotFound):
		p.Log.WarnContext(ctx, "upload event ignored", "reason", "unknown_job", "job_id", id)
		return nil
	case errors.Is(err, job.ErrNotClaimable):
		p.Log.InfoContext(ctx, "upload event ignored", "reason", "taken_or_past_ingest", "job_id", id)
		p.purgeIfDeleted(ctx, job.Job{ID: id}) // a file uploaded to a deleted job's URL
		return nil
	case err != nil:
		return fmt.Errorf("upload event for job %s: %w", id, err)
	}
	h, work := p.hold(ctx, j, job.Ingest)
	defer h.stop()
	h.ingest(work, j, true)
	return nil
}

// uploadOf is the id of the job whose upload key is; false (logged) for
// an object outside the job layout.
func (p *Pipeline) uploadOf(ctx context.Context, key string) (string, bool) {
	idPart, ok := strings.CutPrefix(key, "sources/")
	id, err := ident.Parse(idPart)
	if !ok || err != nil {
		p.Log.WarnContext(ctx, "upload event ignored", "reason", "outside_layout", "object_key", key)
		return "", false
	}
	return id, true
}

// acceptOnly is the claim Accept makes.
var acceptOnly = job.Step{Name: "accept", From: []job.State{job.AwaitingUpload}, Lease: job.Lease}

// Accept takes an upload's job only through accept (awaiting_upload →
// created) and lets it go due at once, for Uploaded to go on by the same
// event. The local stack calls it as each event comes, so a burst of
// uploads says created while its few ingest workers are busy. Anything
// else (held, past awaiting_upload, unknown) is left to Uploaded.
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
	h, work := p.hold(ctx, j, acceptOnly)
	defer h.stop()
	if j, err = h.pass(work, j, admission.Storage); err == nil {
		j, err = h.accept(work, j)
	}
	if err == nil && j.State == job.Created {
		_, err = h.save(work, j, job.Next{})
	}
	switch {
	case errors.Is(err, errOutageWait):
	case err != nil:
		p.jobLog(j).WarnContext(ctx, "accept failed", "error", err.Error(), "code", errs.CodeOf(err))
		p.settle(work, j, err)
	}
	return nil
}

// ingest walks a claimed job through the stages as far as it goes, as one
// attempt. inline: the upload's own event, whose sender waits, checks a
// short recording in this call (checkSoon); the sweep does not.
func (h *held) ingest(ctx context.Context, j job.Job, inline bool) {
	h.attempt(ctx, j, "ingest", func(ctx context.Context, j job.Job) (job.Job, error) { return h.runIngest(ctx, j, inline) })
}

func (h *held) runIngest(ctx context.Context, j job.Job, inline bool) (job.Job, error) {
	j, err := h.pass(ctx, j, admission.Storage)
	if err != nil {
		return j, err
	}
	if j.State == job.AwaitingUpload {
		if j, err = h.accept(ctx, j); err != nil || j.State == job.AwaitingUpload {
			return j, err
		}
	}
	var audio []byte // a short fast job's audio, made in this call
	if j.State == job.Created {
		if j, audio, err = h.prepare(ctx, j); err != nil || j.State == job.Done {
			return j, err
		}
	}
	if j.State == job.Converted {
		if j, err = h.recognizeSync(ctx, j, audio); err != nil || j.State == job.Done {
			return j, err
		}
		if j, err = h.submit(ctx, j); err != nil {
			return j, err
		}
	}
	if j.State != job.Transcribe {
		return j, fmt.Errorf("ingest ended in state %s", j.State)
	}
	return h.checkSoon(ctx, j, inline)
}
