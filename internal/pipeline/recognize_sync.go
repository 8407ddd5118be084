package pipeline

import (
	"context"
	"errors"
	"time"

	"transcriber/internal/errs"
	"transcriber/internal/job"
	"transcriber/internal/pipeline/admission"
	"transcriber/internal/speechkit"
)

// recognizeSync sends claimed job j, converted, to SpeechKit's synchronous
// API in one request when it is syncable, and ends it done with the
// answer: no submission, no poll, nothing left running. audio is the piece
// prepare made in this call, or nil (a retried ingest: read from storage).
// The admission holds it to the reservation and the synchronous quota
// (TakeSync; the wait for a place is syncPlaceWait). Anything that stops
// it (no place, the breaker of admission.SyncRecognizer open, a refusal,
// a time-out) returns j not done, for submit, and no failure. The try is
// saved before the request, so a crash after it leaves a job the poll
// function submits asynchronously: never two transcripts. Errors end the
// attempt: audio beyond the reservation, a failed save, the call's end.
func (h *held) recognizeSync(ctx context.Context, j job.Job, audio []byte) (job.Job, error) {
	if !h.syncable(j) {
		return j, nil
	}
	log := h.jobLog(j)
	if audio == nil {
		var err error
		switch audio, err = h.readOgg(ctx, j.Segments[0].AudioKey); {
		case err != nil:
			log.WarnContext(ctx, "goes async", "reason", "audio_unread", "error", err.Error(), "code", errs.CodeOf(err))
			return j, nil
		case audio == nil:
			log.WarnContext(ctx, "goes async", "reason", "audio_not_ogg")
			return j, nil
		}
	}
	err := h.takeSyncPlace(ctx, j)
	var refused *admission.Refused
	switch {
	case errors.As(err, &refused) && refused.Resource == admission.SyncRequests:
		log.InfoContext(ctx, "goes async", "reason", "no_sync_place", "wait_ms", syncPlaceWait.Milliseconds())
		return j, nil
	case errors.As(err, &refused):
		return j, err // audio beyond the reservation: the job fails
	case err != nil && ctx.Err() != nil:
		return j, ctx.Err()
	case err != nil:
		log.WarnContext(ctx, "goes async", "reason", "sync_quota_unread", "error", err.Error())
		return j, nil
	}
	// With the synchronous API out, no try (it would wait out its
	// time-out): the asynchronous way at once. A call that passes may be
	// the probe.
	if _, ok := h.admission.Pass(ctx, admission.SyncRecognizer); !ok {
		log.InfoContext(ctx, "goes async", "reason", "outage")
		return j, nil
	}
	j.State, j.Recognition = job.Transcribe, job.RecognitionSync
	if j, err = h.save(ctx, j, job.Next{Keep: true}); err != nil {
		return j, err
	}
	lang := h.language(j)
	res, err := h.SyncRecognizer.RecognizeSync(ctx, speechkit.SyncRequest{
		Audio: audio, DurationMs: j.DurationMs, Language: lang,
	})
	// No settling tells the breaker of this failure: it is told here. A
	// fault of ours (errs.Internal) says nothing of the service.
	switch _, down := outageOf(ctx, err); {
	case errs.Is(err, errs.Internal):
	case down:
		h.admission.Failed(ctx, admission.SyncRecognizer)
	default:
		h.heard(ctx, admission.SyncRecognizer, err)
	}
	if err != nil {
		if ctx.Err() != nil {
			return j, ctx.Err() // the next attempt goes asynchronous
		}
		h.jobLog(j).InfoContext(ctx, "goes async", "reason", "no_answer", "code", errs.CodeOf(err), "error", err.Error())
		j.Recognition = job.RecognitionAsync
		return j, nil
	}
	j.Segments[0].Done = true
	j.BilledSeconds = res.BilledSeconds
	t := res.Transcript()
	t.Language = lang
	return h.finishWith(ctx, j, t)
}

// syncPlaceWait is how long a job waits in the call for a synchronous
// place (a refusal names one at most 2 s on); the asynchronous way may
// take minutes once its window is spent. maxSyncPlaceTries: a place may
// come at each of the windows counted, and one more for a place taken too
// late to use.
const (
	syncPlaceWait     = 2 * time.Second
	maxSyncPlaceTries = speechkit.SyncWindowsCounted + 2
)

// takeSyncPlace asks admission.TakeSync again at each time a refusal
// names, within syncPlaceWait, sleeping on the pipeline's clock.
func (p *Pipeline) takeSyncPlace(ctx context.Context, j job.Job) error {
	first := p.Clock.Now()
	deadline := first.Add(syncPlaceWait)
	for try := 1; ; try++ {
		err := p.admission.TakeSync(ctx, j)
		var refused *admission.Refused
		if !errors.As(err, &refused) || refused.Resource != admission.SyncRequests ||
			refused.Until.After(deadline) || try == maxSyncPlaceTries {
			if err == nil && try > 1 {
				p.jobLog(j).InfoContext(ctx, "sync place after wait", "wait_ms", p.Clock.Now().Sub(first).Milliseconds())
			}
			return err
		}
		if err := p.Sleep(ctx, refused.Until.Sub(p.Clock.Now())); err != nil {
			return err
		}
	}
}
