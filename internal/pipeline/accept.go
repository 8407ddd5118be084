package pipeline

import (
	"context"

	"transcriber/internal/errs"
	"transcriber/internal/job"
	"transcriber/internal/pipeline/admission"
	"transcriber/internal/storage/s3"
)

// Failures of accepting an upload.
var (
	errUploadMissing = errs.New(errs.Permanent, "upload_missing", "the file was never uploaded")
	errEmptyFile     = errs.New(errs.Permanent, "empty_file", "the file is empty")
	errSizeMismatch  = errs.New(errs.Permanent, "size_mismatch", "the uploaded file is not the size that was announced")
	errTooLarge      = errs.New(errs.Permanent, "too_large", "the file is larger than the service takes")
	// errSourceChanged: the upload was written again meanwhile; looked at anew.
	errSourceChanged = errs.New(errs.Unavailable, s3.CodeChanged, s3.MsgChanged)
)

// accept checks the uploaded source against the job and the limits, and
// pins it as the accepted copy. No source yet is no failure while the
// upload window is open (an event may come early or twice).
func (h *held) accept(ctx context.Context, j job.Job) (job.Job, error) {
	info, err := h.Objects.Head(ctx, job.SourceKey(j.ID))
	h.heard(ctx, admission.Storage, err)
	switch {
	case errs.Is(err, errs.NotFound):
		if wait := j.UploadBy.Sub(h.Clock.Now()); wait > 0 {
			h.jobLog(j).InfoContext(ctx, "upload awaited", "upload_by", j.UploadBy)
			return h.save(ctx, j, job.Next{After: wait})
		}
		return j, errUploadMissing
	case err != nil:
		return j, err
	case info.Size == 0:
		return j, errEmptyFile
	case info.Size > DefaultMaxSourceBytes:
		return j, errTooLarge
	case j.SizeBytes > 0 && info.Size != j.SizeBytes:
		return j, errSizeMismatch
	}
	// The presigned PUT stays valid for its TTL, so the upload may be
	// written again: copy it only if it still has the ETag checked, and
	// read only the copy from here on, which no client can write.
	if err := h.Objects.Copy(ctx, job.SourceKey(j.ID), job.AcceptedKey(j.ID), info.ETag); err != nil {
		return j, err
	}
	// A store that ignored the precondition cannot slip in another size.
	// (The ETag is not compared: a copy of a multipart upload may get a new one.)
	copied, err := h.Objects.Head(ctx, job.AcceptedKey(j.ID))
	switch {
	case err != nil:
		return j, err
	case copied.Size != info.Size:
		return j, errSourceChanged
	}
	j.State = job.Created
	if j, err = h.save(ctx, j, job.Next{Keep: true}); err != nil {
		return j, err
	}
	// Not read again; a failure leaves it to the bucket's lifecycle rule.
	if err := h.Objects.Delete(ctx, job.SourceKey(j.ID)); err != nil {
		h.jobLog(j).WarnContext(ctx, "upload original not removed", "error", err.Error())
	}
	h.moved(ctx, j)
	return j, nil
}
