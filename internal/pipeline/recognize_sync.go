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

// Recognize synchronously (converted → transcribe → done, in the call
// that made the audio): a fast job's short recording goes to SpeechKit's
// synchronous API in one request, and the text it answers is the
// transcript, with no submission, no poll and no place in flight. What is
// sent is the piece prepare made and counted: the voice note as it is, or
// the recording converted to one channel;
// the admission checks its audio against the reservation and takes a
// place in the synchronous quota (admission.TakeSync: at most 20 in any
// second), never a request of the asynchronous quota. A job that finds
// no place waits for the next within the call (syncPlaceWait): the
// synchronous door is free again within a second or two, where the
// asynchronous way may wait out its hour's window. Anything that stops
// it — no place within the wait, a refusal, a time-out, a transport
// error, a file the API does not take — sends the job the asynchronous
// way (submit.go), once, and no failure is reported. The synchronous API has a breaker of its own
// (outage.go, admission.SyncRecognizer), asked before the try and told
// what the request came back with: while that API is out for every job no
// try is made, and the job goes the asynchronous way at once, where
// SpeechKit's own breaker holds it if SpeechKit is out altogether.
//
// The try is recorded on the job before the request (transcribe,
// recognition sync), so a call that crashes after it, or whose save of
// the answer fails, leaves a job that the poll function's checks submit
// asynchronously: a redelivered event finds the job past ingest and does
// nothing, so no job gets two transcripts, and at most one recognition
// more than it needed.

// recognizeSync recognizes claimed job j, converted, synchronously when it
// is one to (quick, one piece of one channel) and returns it done. audio is
// the piece as prepare made it in this call, or nil (a retried ingest),
// when it is read from storage. A job that is not one to, or whose try
// did not answer, comes back not done (converted, or transcribe after a
// try) for submit; the only errors are those that end the attempt: audio
// beyond the reservation, a save that failed, and the call's own end.
func (p *Pipeline) recognizeSync(ctx context.Context, j job.Job, audio []byte) (job.Job, error) {
	if !p.syncable(j) {
		return j, nil
	}
	log := p.jobLog(j)
	if audio == nil {
		var err error
		switch audio, err = p.readOgg(ctx, j.Segments[0].AudioKey); {
		case err != nil:
			log.WarnContext(ctx, "the audio could not be read for synchronous recognition; the job goes the asynchronous way",
				"error", err.Error(), "code", errs.CodeOf(err))
			return j, nil
		case audio == nil:
			log.WarnContext(ctx, "the stored audio is no Ogg within the synchronous API's size; the job goes the asynchronous way")
			return j, nil
		}
	}
	err := p.takeSyncPlace(ctx, j)
	var refused *admission.Refused
	switch {
	case errors.As(err, &refused) && refused.Resource == admission.SyncRequests:
		log.InfoContext(ctx, "no synchronous place within the wait; the job goes the asynchronous way",
			"per_second", speechkit.SyncRequestsPerSecond, "wait_ms", syncPlaceWait.Milliseconds())
		return j, nil
	case errors.As(err, &refused):
		return j, err // audio beyond the reservation: the job fails
	case err != nil && ctx.Err() != nil:
		return j, ctx.Err() // the call is ending while it waits
	case err != nil:
		log.WarnContext(ctx, "the synchronous quota could not be counted; the job goes the asynchronous way", "error", err.Error())
		return j, nil
	}
	// The synchronous API out for every job: no try, which would only
	// wait out its time-out; the job goes the asynchronous way at once
	// (and is held there if SpeechKit is out for that too). A call that
	// passes may be the breaker's probe: what the request comes back with
	// is told to the breaker (heardAside).
	if _, ok := p.admission.Pass(ctx, admission.SyncRecognizer); !ok {
		log.InfoContext(ctx, "SpeechKit's synchronous API is unavailable; the job goes the asynchronous way")
		return j, nil
	}
	// The try, recorded before the request: if this call ends without
	// saving the answer, the job comes back in transcribe, tried, and is
	// submitted asynchronously.
	j.State, j.Recognition = job.Transcribe, job.RecognitionSync
	if j, err = p.save(ctx, j, job.Next{Keep: true}); err != nil {
		return j, err
	}
	lang := p.language(j)
	res, err := p.SyncRecognizer.RecognizeSync(ctx, speechkit.SyncRequest{
		Audio: audio, DurationMs: j.DurationMs, Language: lang,
	})
	p.heardAside(ctx, admission.SyncRecognizer, err)
	if err != nil {
		if ctx.Err() != nil {
			return j, ctx.Err() // the call is ending; the next attempt goes asynchronous
		}
		p.jobLog(j).InfoContext(ctx, "synchronous recognition did not answer; the job goes the asynchronous way",
			"code", errs.CodeOf(err), "error", err.Error())
		j.Recognition = job.RecognitionAsync
		return j, nil
	}
	j.Segments[0].Done = true
	j.BilledSeconds = res.BilledSeconds
	t := res.Transcript()
	t.Language = lang
	return p.finishWith(ctx, j, t)
}

// syncPlaceWait is how long a job waits within the call for a place in
// the synchronous quota: a refusal names the earliest a place may come,
// at most 2 s on (speechkit.TakeSyncPlace), and the wait takes the first
// that comes by then. A voice note's answer takes about as long again;
// the asynchronous way takes minutes once its hour's window is spent.
const syncPlaceWait = 2 * time.Second

// maxSyncPlaceTries bounds the asks within the wait: a place may come at
// each of the four windows after a refusal, and one more for a place
// taken too late to use.
const maxSyncPlaceTries = speechkit.SyncWindowsCounted + 2

// takeSyncPlace is admission.TakeSync, asked again at the time each
// refusal of a place names while that is within syncPlaceWait of the
// first ask, sleeping on the pipeline's clock in between. It returns the
// last refusal, or the sleep's error when the call ends.
func (p *Pipeline) takeSyncPlace(ctx context.Context, j job.Job) error {
	first := p.Clock.Now()
	deadline := first.Add(syncPlaceWait)
	for try := 1; ; try++ {
		err := p.admission.TakeSync(ctx, j)
		var refused *admission.Refused
		if !errors.As(err, &refused) || refused.Resource != admission.SyncRequests ||
			refused.Until.After(deadline) || try == maxSyncPlaceTries {
			if err == nil && try > 1 {
				p.jobLog(j).InfoContext(ctx, "a synchronous place after a wait", "wait_ms", p.Clock.Now().Sub(first).Milliseconds())
			}
			return err
		}
		if err := p.Sleep(ctx, refused.Until.Sub(p.Clock.Now())); err != nil {
			return err
		}
	}
}
