package pipeline

import (
	"context"
	"crypto/sha256"
	"errors"
	"io"

	"transcriber/internal/errs"
	"transcriber/internal/job"
	"transcriber/internal/pipeline/admission"
)

// reuseDone ends claimed job j done with a copy of an earlier done job's
// transcript of the same recording and options within REUSE_SCOPE
// (job.ReuseKeyOf): no recognition, nothing reserved or billed. ok is
// false, with j carrying its key, when there is none. An upload's key is
// its bytes' SHA-256; a Telegram file's is its file_unique_id (Reuse).
// Two identical jobs at once may both be recognized. src, when not nil,
// is the earlier job already found by j's key (Reuse).
func (h *held) reuseDone(ctx context.Context, j job.Job, src *job.Job) (_ job.Job, ok bool, _ error) {
	if h.cfg.ReuseScope == "" || h.cfg.ReuseScope == job.ReuseOff || j.Features.NoReuse {
		return j, false, nil
	}
	if j.ReuseKey == "" {
		sum, err := h.sha256Of(ctx, job.AcceptedKey(j.ID))
		if err != nil {
			return j, false, err
		}
		j.ReuseKey = job.ReuseKeyOf(h.cfg.ReuseScope, j, job.MediaOfBytes(sum), h.language(j))
	}
	if src == nil {
		found, err := h.Store.Reusable(ctx, j.ReuseKey, h.Clock.Now().Add(-h.cfg.JobRetention))
		switch {
		case errors.Is(err, job.ErrNotFound):
			return j, false, nil
		case err != nil:
			return j, false, err
		}
		src = &found
	}
	if src.ID == j.ID {
		return j, false, nil
	}
	err := h.Objects.Copy(ctx, job.ResultKey(src.ID), job.ResultKey(j.ID), "")
	h.heard(ctx, admission.Storage, err)
	switch {
	case errs.Is(err, errs.NotFound):
		// The source went first (a deletion or expiry): recognized anew.
		h.jobLog(j).InfoContext(ctx, "reuse source gone", "reused_from", src.ID)
		return j, false, nil
	case err != nil:
		return j, false, err
	}
	was := j
	j.DurationMs, j.Language = src.DurationMs, src.Language
	j.Features.Channels, j.Features.SummaryMissing, j.Features.ReusedFrom = src.Features.Channels, src.Features.SummaryMissing, src.ID
	j, err = h.endDone(ctx, was, j, "transcript reused", "reused_from", src.ID, "duration_ms", j.DurationMs)
	return j, err == nil, err
}

func (p *Pipeline) sha256Of(ctx context.Context, key string) ([sha256.Size]byte, error) {
	var sum [sha256.Size]byte
	r, err := p.Objects.Get(ctx, key)
	p.heard(ctx, admission.Storage, err)
	if err != nil {
		return sum, err
	}
	defer r.Close()
	h := sha256.New()
	if _, err := io.Copy(h, r); err != nil {
		return sum, errs.Wrap(err, errs.Unavailable, "storage_read", "the upload could not be read from storage")
	}
	copy(sum[:], h.Sum(nil))
	return sum, nil
}

// reuseOnly is the claim Reuse makes: of a job waiting for its file.
var reuseOnly = job.Step{Name: "reuse", From: []job.State{job.AwaitingUpload}, Lease: job.Lease}

// Reuse ends j, waiting for its file with a reuse key from its draft (a
// Telegram file's), done with an earlier transcript before the file is
// fetched; reused says whether it did (the notifier was told). Otherwise
// j is left as it was and the caller fetches the file. No claim is made
// without a match.
func (p *Pipeline) Reuse(ctx context.Context, j job.Job) (reused bool, err error) {
	if j.ReuseKey == "" || j.State != job.AwaitingUpload {
		return false, nil
	}
	src, err := p.Store.Reusable(ctx, j.ReuseKey, p.Clock.Now().Add(-p.cfg.JobRetention))
	if err != nil {
		if errors.Is(err, job.ErrNotFound) {
			err = nil
		}
		return false, err
	}
	j, err = p.Store.Claim(ctx, j.ID, reuseOnly)
	switch {
	case errors.Is(err, job.ErrNotClaimable):
		return false, nil
	case err != nil:
		return false, err
	}
	h, work := p.hold(ctx, j, reuseOnly)
	defer h.stop()
	done, ok, err := h.reuseDone(work, j, &src)
	if ok {
		return true, nil
	}
	// Let go due when its upload window closes: the upload event that
	// follows the fetch claims it at once.
	if _, serr := h.save(work, done, job.Next{After: max(done.UploadBy.Sub(p.Clock.Now()), 0)}); serr != nil {
		err = errors.Join(err, serr)
	}
	return false, err
}
