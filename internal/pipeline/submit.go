package pipeline

import (
	"context"
	"io"

	"transcriber/internal/errs"
	"transcriber/internal/job"
	"transcriber/internal/pipeline/admission"
	"transcriber/internal/speechkit"
)

// Submit (converted → transcribe): one recognition per piece, side by
// side, each admitted first (admit.go) and its operation id saved as soon
// as it exists. Pieces that find no place wait in transcribe, and the
// job's checks submit them as places come free (check.go).

// errInlineTooBig: audio sent inside the request is over what this
// installation sends that way.
var errInlineTooBig = errs.New(errs.Permanent, "too_large_for_inline", "the audio is too large to send to the recognizer from this installation")

// submit starts a recognition for each segment not yet submitted, saving
// each operation id as soon as it exists, so a crash after a submission does
// not submit that segment again. j is converted, or in transcribe after a
// synchronous try that did not answer (recognize_sync.go).
func (p *Pipeline) submit(ctx context.Context, j job.Job) (job.Job, error) {
	j, err := p.submitWaiting(ctx, j)
	if err != nil {
		return j, err
	}
	j.State = job.Transcribe
	if j, err = p.save(ctx, j, job.Next{Keep: true}); err == nil {
		p.moved(ctx, j)
	}
	return j, err
}

// submitWaiting submits the segments that have no recognition (all of
// them on the first go, or one whose recognition failed and was dropped)
// while the bounds on recognitions in flight allow: at most JobInFlight of
// the job's at once, and for each what the admission gives. The pieces
// that find no place wait, the job in transcribe, and are submitted at a
// later check, as places come free.
func (p *Pipeline) submitWaiting(ctx context.Context, j job.Job) (job.Job, error) {
	var round admission.Round
	for i := range j.Segments {
		if sg := j.Segments[i]; sg.OperationID != "" || sg.Done {
			continue
		}
		if inFlight(j) >= p.cfg.JobInFlight {
			break // the rest go as these finish
		}
		req, err := p.request(ctx, j, j.Segments[i])
		if err != nil {
			return j, err
		}
		var admitted bool
		if j, admitted, err = p.admit(ctx, j, i, &round); err != nil || !admitted {
			return j, err
		}
		if j, err = p.recognize(ctx, j, i, req, &round); err != nil {
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
	// SpeechKit labels speakers in mono audio only; stereo keeps its
	// channels apart, each channel a speaker (finish).
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

// recognize submits piece i of j, admitted in round, and saves its
// operation id. A submission that fails gives the piece's place in flight
// back, and its request when the recognizer refused it before accepting it
// (one that may have reached the recognizer stays counted).
func (p *Pipeline) recognize(ctx context.Context, j job.Job, i int, req speechkit.Request, round *admission.Round) (job.Job, error) {
	op, err := p.Recognizer.Submit(ctx, req)
	p.heard(ctx, admission.Recognizer, err)
	if err != nil {
		p.admission.Unsent(ctx, &j, round, speechkit.NotAccepted(err))
	}
	if errs.CodeOf(err) == speechkit.CodeRecognitionQuota {
		p.jobLog(j).InfoContext(ctx, "the recognizer answered that its request quota is used up", "error", err.Error())
		return p.recognizerQuota(ctx, j, err)
	}
	if err != nil {
		return j, err
	}
	// The job is recognized asynchronously from here, a fast one too: a
	// synchronous try recorded before is over, and the store keeps async.
	j.Segments[i].OperationID = op
	j.Recognition = job.RecognitionAsync
	if j, err = p.save(ctx, j, job.Next{Keep: true}); err != nil {
		return j, err
	}
	p.jobLog(j).InfoContext(ctx, "recognition submitted", "segment", j.Segments[i].Seq, "operation_id", op)
	return j, nil
}

// recognizerQuota ends an attempt the recognizer refused with
// RESOURCE_EXHAUSTED. Unlike the service's own count, that answer is
// transient and counts as a failed attempt: gRPC gives the same code for
// other limits (a message too large), which waiting would never pass, so
// such a job still ends dead after its attempts. The pause is the quota's:
// the job is due when its window ends, or by the retry policy when that is
// later; at the last attempt the answer settles as any other failure.
func (p *Pipeline) recognizerQuota(ctx context.Context, j job.Job, cause error) (job.Job, error) {
	if p.cfg.Policy.Exhausted(j.Attempts) {
		return j, cause
	}
	now := p.Clock.Now()
	pause := max(p.admission.RequestsFreeAt(now).Sub(now), p.cfg.Policy.Pause(j.Attempts))
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), settleTimeout)
	defer cancel()
	released, err := p.Store.Release(sctx, j.Claim(), pause, job.FailureOf(cause))
	if err != nil {
		return j, err
	}
	p.jobLog(released).InfoContext(ctx, "the job waits for the recognizer's quota", "next_run_at", released.NextRunAt,
		"attempts", released.Attempts)
	return released, errQuotaWait
}

func (p *Pipeline) readInline(ctx context.Context, key string) ([]byte, error) {
	info, err := p.Objects.Head(ctx, key)
	if err != nil {
		return nil, err
	}
	if info.Size > p.cfg.MaxInlineBytes {
		return nil, errInlineTooBig
	}
	r, err := p.Objects.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	body, err := io.ReadAll(io.LimitReader(r, p.cfg.MaxInlineBytes+1))
	if err != nil {
		return nil, errs.Wrap(err, errs.Unavailable, "storage_read", "the audio could not be read from storage")
	}
	if int64(len(body)) > p.cfg.MaxInlineBytes {
		return nil, errInlineTooBig
	}
	return body, nil
}
