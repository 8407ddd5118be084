package pipeline

import (
	"context"
	"errors"
	"io"
	"time"

	"transcriber/internal/errs"
	"transcriber/internal/job"
	"transcriber/internal/pipeline/admission"
	"transcriber/internal/speechkit"
)

// errInlineTooBig: audio over DefaultMaxInlineBytes, with InlineAudio.
var errInlineTooBig = errs.New(errs.Permanent, "too_large_for_inline", "the audio is too large to send to the recognizer from this installation")

// submit (converted → transcribe) submits j's pieces side by side. j is
// converted, or in transcribe after a synchronous try that did not answer.
func (h *held) submit(ctx context.Context, j job.Job) (job.Job, error) {
	j, err := h.submitWaiting(ctx, j)
	if err != nil {
		return j, err
	}
	j.State = job.Transcribe
	if j, err = h.save(ctx, j, job.Next{Keep: true}); err == nil {
		h.moved(ctx, j)
	}
	return j, err
}

// submitWaiting submits the pieces without a recognition (all at first,
// or one dropped after a failure), at most JobInFlight at once (the rest
// at later checks), each admitted first; each operation id is saved as
// soon as it exists, so a crash never submits a piece twice.
func (h *held) submitWaiting(ctx context.Context, j job.Job) (job.Job, error) {
	for i := range j.Segments {
		if sg := j.Segments[i]; sg.OperationID != "" || sg.Done {
			continue
		}
		if inFlight(j) >= h.cfg.JobInFlight {
			break // the rest go as these finish
		}
		req, err := h.request(ctx, j, j.Segments[i])
		if err != nil {
			return j, err
		}
		var window time.Time
		if j, window, err = h.admit(ctx, j, i); err != nil {
			return j, err
		}
		if j, err = h.recognize(ctx, j, i, req, window); err != nil {
			return j, err
		}
	}
	return j, nil
}

// request is the recognition request of segment sg of job j.
func (p *Pipeline) request(ctx context.Context, j job.Job, sg job.Segment) (speechkit.Request, error) {
	lang := p.language(j)
	req := speechkit.Request{Container: speechkit.Container(sg.Container), Language: lang}
	if j.Deferred() {
		req.Model = speechkit.DeferredModel
	}
	// SpeechKit labels speakers in mono only; in stereo each channel is one.
	req.Speakers = j.Features.Speakers && j.Features.Mono()
	if j.Features.Summary && p.cfg.SummaryModel != "" {
		req.Summary = &speechkit.SummaryRequest{ModelURI: p.cfg.SummaryModel, Instruction: speechkit.SummaryInstruction(lang)}
	}
	if !p.cfg.InlineAudio {
		req.URI = p.Objects.URI(sg.AudioKey)
		return req, nil
	}
	body, err := p.readInline(ctx, sg.AudioKey)
	if err != nil {
		return req, err
	}
	req.Content = body
	return req, nil
}

// recognize submits piece i of j, its request counted in window, and saves
// its operation id. A submission refused before it was accepted gives its
// request back.
func (h *held) recognize(ctx context.Context, j job.Job, i int, req speechkit.Request, window time.Time) (job.Job, error) {
	op, err := h.Recognizer.Submit(ctx, req)
	h.heard(ctx, admission.Recognizer, err)
	if err != nil && speechkit.NotAccepted(err) {
		h.admission.Unsent(ctx, j, window)
	}
	if errs.CodeOf(err) == speechkit.CodeRecognitionQuota {
		h.jobLog(j).InfoContext(ctx, "recognizer quota used up", "error", err.Error())
		return h.recognizerQuota(ctx, j, err)
	}
	if err != nil {
		return j, err
	}
	// Asynchronous from here, a fast job too: a synchronous try is over.
	j.Segments[i].OperationID = op
	j.Recognition = job.RecognitionAsync
	if j, err = h.save(ctx, j, job.Next{Keep: true}); err != nil {
		return j, err
	}
	h.jobLog(j).InfoContext(ctx, "submitted", "segment", j.Segments[i].Seq, "operation_id", op)
	return j, nil
}

// recognizerQuota ends an attempt the recognizer refused with
// RESOURCE_EXHAUSTED: a counted attempt, since gRPC gives that code for
// other limits too (a message too large) that waiting never passes. The
// job is due when the request window ends, or by the retry policy if
// later; the last attempt settles as any failure.
func (h *held) recognizerQuota(ctx context.Context, j job.Job, cause error) (job.Job, error) {
	if h.cfg.Policy.Exhausted(j.Attempts) {
		return j, cause
	}
	now := h.Clock.Now()
	pause := max(h.admission.RequestsFreeAt(now).Sub(now), h.cfg.Policy.Pause(j.Attempts))
	j, err := h.release(ctx, j, pause, job.FailureOf(cause), "reason", "recognizer_quota")
	if err != nil {
		return j, err
	}
	return j, errQuotaWait
}

// readInline reads the audio at key, at most DefaultMaxInlineBytes.
func (p *Pipeline) readInline(ctx context.Context, key string) ([]byte, error) {
	r, err := p.Objects.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	body, err := io.ReadAll(io.LimitReader(r, DefaultMaxInlineBytes+1))
	if err != nil {
		return nil, errStorageRead(err)
	}
	if len(body) > DefaultMaxInlineBytes {
		return nil, errInlineTooBig
	}
	return body, nil
}

// admit asks the admission for piece i of claimed job j (audio within the
// reservation, the breaker, a request in the window, all or none) and
// returns the request's window, for Unsent. At the request quota or an
// outage the job is saved due when it frees, and errQuotaWait or
// errOutageWait ends the attempt; audio beyond the reservation fails it.
func (h *held) admit(ctx context.Context, j job.Job, i int) (job.Job, time.Time, error) {
	window, err := h.admission.Take(ctx, j, i)
	var refused *admission.Refused
	if !errors.As(err, &refused) {
		return j, window, err
	}
	switch refused.Resource {
	case admission.Requests:
		j, err = h.waitUntil(ctx, j, refused.Until, errQuotaWait, "job waits", "reason", "requests",
			"requests_per_hour", h.cfg.RequestsPerHour)
	case admission.Outage:
		j, err = h.waitUntil(ctx, j, refused.Until, errOutageWait, "job waits", "reason", "outage",
			"service", string(admission.Recognizer))
	}
	return j, window, err
}
