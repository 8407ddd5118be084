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

// Reuse (awaiting_upload or created → done): a job whose recording and
// options match a done job's within REUSE_SCOPE (job.ReuseKeyOf) ends done
// at once with a copy of that job's transcript, with no request to
// SpeechKit, nothing reserved or billed, and ReusedFrom naming the source.
// The copy lives and expires with the new job. An upload's recording is
// its bytes' SHA-256, read once from the accepted copy before anything
// else; a Telegram file's is its file_unique_id, known before it is
// downloaded (Reuse). Two identical jobs at once may both be recognized:
// neither waits for the other; one made after the first is done is not.

// reuseDone ends claimed job j done with the transcript of an earlier done
// job of its reuse key, when there is one; ok is false, with j carrying
// its key for the next save, when there is none. A job without a key gets
// one here from its accepted upload's bytes.
func (p *Pipeline) reuseDone(ctx context.Context, j job.Job) (_ job.Job, ok bool, _ error) {
	if p.cfg.ReuseScope == "" || p.cfg.ReuseScope == job.ReuseOff || j.Features.NoReuse {
		return j, false, nil
	}
	if j.ReuseKey == "" {
		sum, err := p.sha256Of(ctx, job.AcceptedKey(j.ID))
		if err != nil {
			return j, false, err
		}
		j.ReuseKey = job.ReuseKeyOf(p.cfg.ReuseScope, j, job.MediaOfBytes(sum), p.language(j))
	}
	src, err := p.Store.Reusable(ctx, j.ReuseKey, p.Clock.Now().Add(-p.cfg.JobRetention))
	switch {
	case errors.Is(err, job.ErrNotFound) || (err == nil && src.ID == j.ID):
		return j, false, nil
	case err != nil:
		return j, false, err
	}
	err = p.Objects.Copy(ctx, job.ResultKey(src.ID), job.ResultKey(j.ID), "")
	p.heard(ctx, admission.Storage, err)
	switch {
	case errs.Is(err, errs.NotFound):
		// The source's transcript went first (a deletion or expiry under
		// way): recognized anew.
		p.jobLog(j).InfoContext(ctx, "reuse source gone", "reused_from", src.ID)
		return j, false, nil
	case err != nil:
		return j, false, err
	}
	was := j
	j.State = job.Done
	j.DurationMs, j.Language = src.DurationMs, src.Language
	j.Features.Channels, j.Features.SummaryMissing, j.Features.ReusedFrom = src.Features.Channels, src.Features.SummaryMissing, src.ID
	j.ErrorCode, j.ErrorMessage = "", ""
	done, err := p.save(ctx, j, job.Next{})
	if err != nil {
		return was, false, err
	}
	p.jobLog(done).InfoContext(ctx, "transcript reused", "reused_from", src.ID, "duration_ms", done.DurationMs)
	p.ended(ctx, was, done)
	return done, true, nil
}

// sha256Of is the SHA-256 of the object at key, read through once.
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

// reuseOnly is the claim Reuse makes: of a job waiting for its file, for
// as long as copying a transcript takes.
var reuseOnly = job.Step{Name: "reuse", From: []job.State{job.AwaitingUpload}, Lease: job.Lease}

// Reuse ends job j, waiting for its file and carrying a reuse key from
// its draft (a Telegram file's), done with an earlier job's transcript
// when there is one, before its file is fetched: reused reports whether
// it did, and then the notifier was told as for any end. A job that is
// held, past awaiting_upload or has no match is left as it is (reused
// false, no error): the caller fetches its file. j is the job as the
// caller has it; no match is found without a claim, as most jobs have
// none.
func (p *Pipeline) Reuse(ctx context.Context, j job.Job) (reused bool, err error) {
	if j.ReuseKey == "" || j.State != job.AwaitingUpload {
		return false, nil
	}
	if _, err := p.Store.Reusable(ctx, j.ReuseKey, p.Clock.Now().Add(-p.cfg.JobRetention)); err != nil {
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
	work, stop := p.hold(ctx, j, reuseOnly)
	defer stop()
	done, ok, err := p.reuseDone(work, j)
	if ok {
		return true, nil
	}
	// Let go as it was, due when its upload window closes, so the upload
	// event that follows the fetch claims it at once.
	if _, serr := p.save(work, done, job.Next{After: max(done.UploadBy.Sub(p.Clock.Now()), 0)}); serr != nil {
		err = errors.Join(err, serr)
	}
	return false, err
}
