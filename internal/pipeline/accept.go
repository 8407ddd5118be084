package pipeline

import (
	"context"

	"transcriber/internal/errs"
	"transcriber/internal/job"
	"transcriber/internal/pipeline/admission"
	"transcriber/internal/storage/s3"
)

// Failures of accepting an upload that are the input's fault.
var (
	errUploadMissing = errs.New(errs.Permanent, "upload_missing", "the file was never uploaded")
	errEmptyFile     = errs.New(errs.Permanent, "empty_file", "the file is empty")
	errSizeMismatch  = errs.New(errs.Permanent, "size_mismatch", "the uploaded file is not the size that was announced")
	errTooLarge      = errs.New(errs.Permanent, "too_large", "the file is larger than the service takes")
	// errSourceChanged: the accepted copy is not what was checked; the
	// upload was written again meanwhile, and is looked at anew.
	errSourceChanged = errs.New(errs.Unavailable, s3.CodeChanged, s3.MsgChanged)
)

// accept checks the uploaded source against the job and the limits. A
// source not there yet is no failure while the upload window is open: the
// job goes back to waiting until the window closes (an event may come early
// or twice); after that it is upload_missing.
func (p *Pipeline) accept(ctx context.Context, j job.Job) (job.Job, error) {
	info, err := p.Objects.Head(ctx, job.SourceKey(j.ID))
	p.heard(ctx, admission.Storage, err)
	switch {
	case errs.Is(err, errs.NotFound):
		if wait := j.UploadBy.Sub(p.Clock.Now()); wait > 0 {
			p.jobLog(j).InfoContext(ctx, "no file yet; waiting for the upload", "upload_by", j.UploadBy)
			return p.save(ctx, j, job.Next{After: wait})
		}
		return j, errUploadMissing // the upload window closed with nothing in it
	case err != nil:
		return j, err
	case info.Size == 0:
		return j, errEmptyFile
	case info.Size > p.cfg.MaxSourceBytes:
		return j, errTooLarge
	case j.SizeBytes > 0 && info.Size != j.SizeBytes:
		return j, errSizeMismatch
	}
	// Pin what was checked: the presigned PUT stays valid for its whole
	// TTL, so the upload's key can be written again after this point. The
	// copy is made only if the source still has the ETag just read, and
	// everything after reads the copy, which no client can write.
	if err := p.Objects.Copy(ctx, job.SourceKey(j.ID), job.AcceptedKey(j.ID), info.ETag); err != nil {
		return j, err
	}
	// The copy is checked as the upload was: a store that ignored the
	// precondition, or gave no ETag to hold it to, cannot slip in a file
	// of another size. (Its ETag is not compared: a copy of an object
	// uploaded in parts may get a new one.)
	copied, err := p.Objects.Head(ctx, job.AcceptedKey(j.ID))
	switch {
	case err != nil:
		return j, err
	case copied.Size != info.Size:
		return j, errSourceChanged
	}
	j.State = job.Created
	if j, err = p.save(ctx, j, job.Next{Keep: true}); err != nil {
		return j, err
	}
	// The upload's key is not read again; a failure here leaves it to the
	// bucket's lifecycle rule.
	if err := p.Objects.Delete(ctx, job.SourceKey(j.ID)); err != nil {
		p.jobLog(j).WarnContext(ctx, "could not remove the accepted upload's original", "error", err.Error())
	}
	p.moved(ctx, j)
	return j, nil
}
