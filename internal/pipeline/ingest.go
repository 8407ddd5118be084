package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"transcriber/internal/errs"
	"transcriber/internal/ident"
	"transcriber/internal/job"
	"transcriber/internal/media/ffmpeg"
	"transcriber/internal/media/oggopus"
	"transcriber/internal/speechkit"
	"transcriber/internal/spend"
	"transcriber/internal/storage/s3"
)

// Failures of the ingest step that are the input's fault.
var (
	errUploadMissing = errs.New(errs.Permanent, "upload_missing", "the file was never uploaded")
	errEmptyFile     = errs.New(errs.Permanent, "empty_file", "the file is empty")
	errSizeMismatch  = errs.New(errs.Permanent, "size_mismatch", "the uploaded file is not the size that was announced")
	errTooLarge      = errs.New(errs.Permanent, "too_large", "the file is larger than the service takes")
	errInlineTooBig  = errs.New(errs.Permanent, "too_large_for_inline", "the audio is too large to send to the recognizer from this installation")
	// errOverReserved: the audio made from a file holds more than its
	// length as probed, which is what was reserved for it. Only a file
	// made to mislead does that; nothing of it is recognized.
	errOverReserved = errs.New(errs.Permanent, CodeOverReserved,
		"the file holds more audio than its length as read from it; it was not sent for recognition")
	// errSourceChanged: the accepted copy is not what was checked; the
	// upload was written again meanwhile, and is looked at anew.
	errSourceChanged = errs.New(errs.Unavailable, s3.CodeChanged, s3.MsgChanged)
)

// Uploaded handles an object created under sources/: it claims the object's
// job and takes it as far as it goes. An object that names no job, or a job
// another call holds or already took further, is not an error: redelivered
// events land here and do nothing. An error is returned only when the event
// should be delivered again (the store failed before a claim was made).
func (p *Pipeline) Uploaded(ctx context.Context, key string) error {
	idPart, ok := strings.CutPrefix(key, "sources/")
	id, err := ident.Parse(idPart)
	if !ok || err != nil {
		p.Log.WarnContext(ctx, "upload event for an object outside the job layout; ignored", "object_key", key)
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
	p.ingest(ctx, j, true)
	return nil
}

// ingest runs the ingest step on a claimed job. A failure ends the attempt
// by the retry policy; nothing is returned because the job records it.
//
// inline says whether a short recording is checked in this call after its
// submission (afterSubmit): so for the upload's own event, whose sender
// waits for the answer; not for the poll function's sweep, whose call
// would otherwise wait up to InlineCheckFor for each job it takes.
func (p *Pipeline) ingest(ctx context.Context, j job.Job, inline bool) {
	if p.cfg.Policy.Abandoned(j) {
		p.settle(ctx, j, errs.New(errs.Unavailable, "attempts_exhausted", "the job failed too many times"))
		return
	}
	j, err := p.runIngest(ctx, j, inline)
	if errors.Is(err, errQuotaWait) {
		return // the job waits for the quota's next window, saved and logged
	}
	if err != nil {
		p.jobLog(j).WarnContext(ctx, "ingest failed", "error", err.Error(), "code", errs.CodeOf(err))
		p.settle(ctx, j, err)
	}
}

func (p *Pipeline) runIngest(ctx context.Context, j job.Job, inline bool) (job.Job, error) {
	var err error
	if j.State == job.AwaitingUpload {
		if j, err = p.accept(ctx, j); err != nil || j.State == job.AwaitingUpload {
			return j, err
		}
	}
	if j.State == job.Created {
		if j, err = p.prepare(ctx, j); err != nil {
			return j, err
		}
	}
	if j.State == job.Converted {
		if j, err = p.submit(ctx, j); err != nil {
			return j, err
		}
	}
	if j.State != job.Transcribe {
		return j, fmt.Errorf("ingest ended in state %s", j.State)
	}
	return p.afterSubmit(ctx, j, inline)
}

// accept checks the uploaded source against the job and the limits. A
// source not there yet is no failure while the upload window is open: the
// job goes back to waiting until the window closes (an event may come early
// or twice); after that it is upload_missing.
func (p *Pipeline) accept(ctx context.Context, j job.Job) (job.Job, error) {
	info, err := p.Objects.Head(ctx, job.SourceKey(j.ID))
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

// prepare probes the source and makes the audio the recognizer takes:
// the source itself, or converted pieces streamed from ffmpeg to storage.
func (p *Pipeline) prepare(ctx context.Context, j job.Job) (job.Job, error) {
	src, err := p.Objects.PresignGet(ctx, job.AcceptedKey(j.ID), p.cfg.SourceURLTTL)
	if err != nil {
		return j, err
	}
	probe, err := p.Media.Probe(ctx, src)
	if err != nil {
		return j, err
	}
	// SpeechKit labels speakers and summarizes file by file: a job that
	// asks for either is not cut into short pieces.
	parallel := !j.Features.Speakers && !j.Features.Summary
	plan, err := p.Media.PlanFor(probe, parallel)
	if err != nil {
		return j, err
	}
	if parallel && len(plan.Segments) > 1 && !p.roomForPieces(ctx, len(plan.Segments)) {
		if plan, err = p.Media.PlanFor(probe, false); err != nil {
			return j, err
		}
		p.jobLog(j).InfoContext(ctx, "the request quota's window is over half used; the recording goes in as few pieces as it can",
			"segments", len(plan.Segments))
	}
	j.DurationMs = probe.DurationMs
	// What is submitted is the first audio stream, converted with mono
	// kept mono and more than two channels made stereo.
	if len(probe.Audio) > 0 {
		j.Features.Channels = min(probe.Audio[0].Channels, 2)
	}
	if j, err = p.reserve(ctx, j); err != nil {
		return j, err
	}
	if j.Segments, err = p.makeAudio(ctx, j, src, plan); err != nil {
		return j, err
	}
	// From here the job's length is what its audio holds, as counted on
	// its way to storage: what is shown, billed and submitted.
	j.DurationMs = audioMs(j.Segments)
	excess := p.trimReservation(&j)
	p.jobLog(j).InfoContext(ctx, "audio ready", "duration_ms", j.DurationMs, "probed_ms", probe.DurationMs,
		"segments", len(j.Segments), "container", plan.Container, "probe_container", probe.Container)
	j.State = job.Converted
	if j, err = p.save(ctx, j, job.Next{Keep: true}); err != nil {
		return j, err
	}
	p.releaseExcess(ctx, j, excess)
	return j, nil
}

// audioMs is the audio of segs, in milliseconds.
func audioMs(segs []job.Segment) int64 {
	var total int64
	for _, sg := range segs {
		total += sg.DurationMs
	}
	return total
}

// trimReservation lowers the seconds reserved for j to what its audio
// holds, when that is less (a header that overstated its length), and
// returns the seconds to give back. They are given back only once the job
// is saved with its new reservation (releaseExcess): a crash in between
// leaves the counter too high, never too low.
func (p *Pipeline) trimReservation(j *job.Job) int64 {
	held := spend.Seconds(j.DurationMs)
	if p.cfg.Counters == nil || j.ReservedSeconds <= held {
		return 0
	}
	excess := j.ReservedSeconds - held
	j.ReservedSeconds = held
	return excess
}

// releaseExcess gives back what trimReservation took off j's reservation.
// A failure is logged: the counter then holds more than was used.
func (p *Pipeline) releaseExcess(ctx context.Context, j job.Job, seconds int64) {
	if seconds <= 0 {
		return
	}
	if err := spend.Release(ctx, p.cfg.Counters, j.ChargedTo, seconds, j.ReservedDay); err != nil {
		p.jobLog(j).WarnContext(ctx, "could not give back the audio reserved beyond what the file holds", "error", err.Error())
		return
	}
	p.jobLog(j).InfoContext(ctx, "audio reservation trimmed to what the file holds", "released_seconds", seconds)
}

// roomForPieces reports whether the installation is quiet enough for n
// pieces: the request quota's previous window used at most half of its
// requests, and the n fit in the first half of the current one with what
// it holds already. Each piece is a request: under load, pieces would
// spend the quota that other jobs wait for, so a recording is then sent
// as few files as SEGMENT_LENGTH allows. Speed when the installation is
// quiet, the most audio per request when it is busy. The previous window
// says whether the load goes on: at the start of a window the current
// one holds little whatever the load. Without pacing there is always
// room; a counter that cannot be read leaves the pieces as planned.
func (p *Pipeline) roomForPieces(ctx context.Context, n int) bool {
	if !p.cfg.pacing() {
		return true
	}
	start, end, limit := p.cfg.submissionWindow(p.Clock.Now())
	before := start.Add(-end.Sub(start))
	for _, w := range []struct {
		start time.Time
		n     int64
	}{{before, 0}, {start, int64(n)}} {
		used, err := p.cfg.Counters.Used(ctx, submissionsKey, w.start)
		if err != nil {
			p.Log.WarnContext(ctx, "could not read the request quota's window; cutting as planned", "error", err.Error())
			return true
		}
		if used+w.n > limit/2 {
			return false
		}
	}
	return true
}

// reserve counts the job's audio against its payer's day and the
// installation's month (spend.Reserve) once its length is known, before
// it is converted or submitted, and records the reservation on the job in
// the same save: a job that has one (a retried ingest) is not counted
// again. A job that would pass a limit gets spend's quota_exceeded, a
// permanent failure, with nothing counted. A crash between the reservation
// and its save counts the job's audio once more than it uses (the retry
// reserves again): too much, never too little. Without counters nothing
// is counted.
func (p *Pipeline) reserve(ctx context.Context, j job.Job) (job.Job, error) {
	secs := spend.Seconds(j.DurationMs)
	if p.cfg.Counters == nil || j.ReservedSeconds > 0 || secs == 0 {
		return j, nil
	}
	day, err := spend.Reserve(ctx, p.cfg.Counters, p.cfg.Limits, j.ChargedTo, secs, p.Clock.Now())
	if err != nil {
		return j, err
	}
	j.ReservedSeconds, j.ReservedDay = secs, day
	saved, err := p.save(ctx, j, job.Next{Keep: true})
	if err != nil {
		return j, err
	}
	p.jobLog(saved).InfoContext(ctx, "audio reserved", "seconds", secs, "day", day)
	return saved, nil
}

// makeAudio converts the audio plan says for job j from the source at
// src, uploads it, and returns its segments: one converted piece, or, for a
// plan of several pieces, the pieces Split cuts (each at a quiet moment near
// its planned place, so its real start is Split's), each uploaded as soon
// as it is made. Every byte goes through a meter (package oggopus) that
// counts the audio packet by packet, whatever the file's header or
// timestamps say: a segment's length is what the meter counted, and the
// upload stops with errOverReserved once the audio passes what j may
// submit (allowanceMs).
func (p *Pipeline) makeAudio(ctx context.Context, j job.Job, src string, plan ffmpeg.Plan) ([]job.Segment, error) {
	if len(plan.Segments) == 0 {
		return nil, fmt.Errorf("the media plan has no segments")
	}
	left := p.allowanceMs(j, len(plan.Segments))
	segment := func(i int, sg ffmpeg.Segment, m *oggopus.Meter) job.Segment {
		left -= m.Ms()
		return job.Segment{Seq: i, StartMs: sg.StartMs, DurationMs: m.Ms(), Container: plan.Container, AudioKey: job.AudioKey(j.ID, i)}
	}
	if len(plan.Segments) == 1 {
		m := &oggopus.Meter{LimitMs: left}
		if err := metered(p.convert(ctx, src, plan.Segments[0], job.AudioKey(j.ID, 0), m), m); err != nil {
			return nil, err
		}
		return []job.Segment{segment(0, plan.Segments[0], m)}, nil
	}
	var segs []job.Segment
	err := p.Media.Split(ctx, src, plan, func(sg ffmpeg.Segment, audio io.Reader) error {
		i := len(segs)
		m := &oggopus.Meter{LimitMs: max(left, 1)}
		_, err := p.Objects.Upload(ctx, job.AudioKey(j.ID, i), &meterReader{r: audio, m: m}, "audio/ogg")
		if err = metered(err, m); err != nil {
			return err
		}
		segs = append(segs, segment(i, sg, m))
		return nil
	})
	if err != nil {
		return nil, metered(err, nil)
	}
	if len(segs) == 0 {
		return nil, fmt.Errorf("the recording was split into no pieces")
	}
	return segs, nil
}

// allowanceMs is the most audio, in milliseconds, job j may hand to the
// recognizer in pieces pieces: its length as probed, or what is reserved
// for it when that is more, and a second a piece for the frame a cut may
// end in.
func (p *Pipeline) allowanceMs(j job.Job, pieces int) int64 {
	return max(j.DurationMs, j.ReservedSeconds*1000) + int64(pieces)*1000
}

// metered is err from a conversion or upload through m, with the meter's
// verdict: errOverReserved when the audio passed the allowance; an
// internal error when what ffmpeg wrote is not Ogg Opus the meter can
// count (ffmpeg's output, not the sender's: a fault of ours).
func metered(err error, m *oggopus.Meter) error {
	if err == nil && m != nil {
		err = m.Close()
	}
	switch {
	case errors.Is(err, oggopus.ErrOverLimit):
		return errOverReserved
	case errors.Is(err, oggopus.ErrMalformed):
		return errs.Wrap(err, errs.Internal, "audio_unmeasured", "the converted audio could not be measured")
	}
	return err
}

// meterReader passes what it reads through a meter, and fails as the
// meter does.
type meterReader struct {
	r io.Reader
	m *oggopus.Meter
}

func (r *meterReader) Read(b []byte) (int, error) {
	n, err := r.r.Read(b)
	if n > 0 {
		if _, merr := r.m.Write(b[:n]); merr != nil {
			return 0, merr
		}
	}
	return n, err
}

// convert streams ffmpeg's output through the meter m into a multipart
// upload: no temp file, memory bounded by the upload's parts whatever the
// input's length. The meter sits between ffmpeg and the upload, so a
// write it refuses stops ffmpeg before that audio is stored.
func (p *Pipeline) convert(ctx context.Context, src string, sg ffmpeg.Segment, key string, m *oggopus.Meter) error {
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pr, pw := io.Pipe()
	var (
		wg         sync.WaitGroup
		convertErr error
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		convertErr = p.Media.Convert(cctx, src, sg, io.MultiWriter(m, pw))
		_ = pw.CloseWithError(convertErr) // nil closes cleanly and ends the upload
	}()
	_, uploadErr := p.Objects.Upload(cctx, key, pr, "audio/ogg")
	if uploadErr != nil {
		cancel() // stop ffmpeg
		_ = pr.CloseWithError(uploadErr)
	}
	wg.Wait()
	switch {
	case uploadErr != nil && (convertErr == nil || errors.Is(convertErr, context.Canceled)) && ctx.Err() == nil:
		return uploadErr // ffmpeg only stopped because the upload did
	case convertErr != nil:
		return convertErr // the input's fault is the truer cause
	}
	return uploadErr
}

// submit starts a recognition for each segment not yet submitted, saving
// each operation id as soon as it exists, so a crash after a submission does
// not submit that segment again.
func (p *Pipeline) submit(ctx context.Context, j job.Job) (job.Job, error) {
	j, err := p.submitMissing(ctx, j)
	if err != nil {
		return j, err
	}
	j.State = job.Transcribe
	if j, err = p.save(ctx, j, job.Next{Keep: true}); err == nil {
		p.moved(ctx, j)
	}
	return j, err
}

// submitMissing submits the segments that have no recognition (all of them
// on the first go, or one whose recognition failed and was dropped) while
// the bounds on recognitions in flight allow: at most JobInFlight of the
// job's at once, and a place among the installation's MaxInFlight for
// each. The pieces that find no place wait, the job in transcribe, and
// are submitted at a later check, as places come free.
func (p *Pipeline) submitMissing(ctx context.Context, j job.Job) (job.Job, error) {
	lang := j.Language
	if lang == "" {
		lang = p.cfg.DefaultLanguage
	}
	if err := p.withinReservation(j); err != nil {
		return j, err
	}
	var held heldBefore
	for i := range j.Segments {
		sg := j.Segments[i]
		if sg.OperationID != "" || sg.Done {
			continue
		}
		if inFlight(j) >= p.cfg.JobInFlight {
			break // the rest go as these finish
		}
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
		if p.cfg.InlineAudio {
			body, err := p.readInline(ctx, sg.AudioKey)
			if err != nil {
				return j, err
			}
			req.Content = body
		} else {
			req.URI = p.Objects.URI(sg.AudioKey)
		}
		window, admitted, err := p.admitRecognition(ctx, &held)
		if err != nil {
			return j, err
		}
		if !admitted {
			p.jobLog(j).InfoContext(ctx, "the installation has its most recognitions in flight; the piece waits for a place",
				"segment", sg.Seq, "max_in_flight", p.cfg.MaxInFlight)
			break
		}
		ok, err := p.reserveSubmission(ctx)
		if err != nil || !ok {
			p.unadmit(ctx, window)
		}
		if err != nil {
			return j, err
		}
		if !ok {
			return p.waitForQuota(ctx, j, "counted")
		}
		op, err := p.Recognizer.Submit(ctx, req)
		if err != nil {
			p.unadmit(ctx, window)
		}
		if errs.CodeOf(err) == speechkit.CodeRecognitionQuota {
			p.jobLog(j).InfoContext(ctx, "the recognizer answered that its request quota is used up", "error", err.Error())
			return p.recognizerQuota(ctx, j, err)
		}
		if err != nil {
			return j, err
		}
		j.Segments[i].OperationID = op
		j.Segments[i].CountedIn = window
		if j, err = p.save(ctx, j, job.Next{Keep: true}); err != nil {
			return j, err
		}
		p.jobLog(j).InfoContext(ctx, "recognition submitted", "segment", sg.Seq, "operation_id", op)
	}
	return j, nil
}

// CodeOverReserved is the code of a job whose audio holds more than was
// reserved for it.
const CodeOverReserved = "audio_over_reservation"

// withinReservation is the one check before any of j's audio goes to the
// recognizer: the audio of all its segments, as counted when it was made,
// is at most what was reserved for it and a second a piece. makeAudio's
// meter already stopped any conversion that passed it; this holds the
// invariant for whatever else may have set the segments (a job converted
// before the meter existed, a bug). Without counters nothing is reserved
// and no limit is kept.
func (p *Pipeline) withinReservation(j job.Job) error {
	if p.cfg.Counters == nil {
		return nil
	}
	allowed := (j.ReservedSeconds + int64(len(j.Segments))) * 1000
	if total := audioMs(j.Segments); total > allowed {
		return fmt.Errorf("%d ms of audio against %d ms reserved and allowed: %w", total, allowed, errOverReserved)
	}
	return nil
}

// errQuotaWait ends an attempt that met the recognizer's request quota.
// The job is saved already, due when the quota's next window opens, with
// its claim ended and no attempt counted against it (a quota is no fault
// of the job's): the caller only stops.
var errQuotaWait = errs.New(errs.Unavailable, speechkit.CodeRecognitionQuota,
	"the speech recognizer's request quota is used up for now; the job waits for it")

// reserveSubmission counts one recognition request against the quota's
// current window, and reports false when the window is full. Without
// pacing it takes nothing and reports true. A reservation is kept even
// when the request then fails: it may have reached the recognizer.
func (p *Pipeline) reserveSubmission(ctx context.Context) (bool, error) {
	if !p.cfg.pacing() {
		return true, nil
	}
	start, _, limit := p.cfg.submissionWindow(p.Clock.Now())
	_, ok, err := p.cfg.Counters.Reserve(ctx, submissionsKey, start, 1, limit)
	if err != nil {
		return false, fmt.Errorf("count a recognition request: %w", err)
	}
	return ok, nil
}

// waitForQuota saves the claimed job due when the quota's next window
// opens and returns errQuotaWait. Saving, not releasing, is what keeps the
// attempt from counting: the job goes on from where it is (its submitted
// segments kept) when it comes back. by says who found the quota used up:
// the counter, or the recognizer's answer.
func (p *Pipeline) waitForQuota(ctx context.Context, j job.Job, by string) (job.Job, error) {
	now := p.Clock.Now()
	_, end, _ := p.cfg.submissionWindow(now)
	saved, err := p.save(ctx, j, job.Next{After: end.Sub(now)})
	if err != nil {
		return j, err
	}
	p.jobLog(saved).InfoContext(ctx, "recognition request quota used up; the job waits for the next window",
		"by", by, "requests_per_hour", p.cfg.RequestsPerHour, "next_run_at", saved.NextRunAt)
	return saved, errQuotaWait
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
	_, end, _ := p.cfg.submissionWindow(now)
	pause := max(end.Sub(now), p.cfg.Policy.Pause(j.Attempts))
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

// afterSubmit checks a short recording's recognition for a few seconds, so
// a voice note finishes in the call that received it: first after
// InlineCheckFirst, then at pauses doubling up to InlineCheckEvery; anything longer, or
// not ready in time, goes to the poll function. A deferred job is never
// checked here: its queue is not meant to answer in seconds.
func (p *Pipeline) afterSubmit(ctx context.Context, j job.Job, inline bool) (job.Job, error) {
	// Checked here only when the caller waits for it, and when something
	// was submitted: a piece that found no place in flight is not waited
	// for.
	if inline && !j.Deferred() && inFlight(j) > 0 && time.Duration(j.DurationMs)*time.Millisecond <= p.cfg.InlineCheckMax {
		deadline := p.Clock.Now().Add(p.cfg.InlineCheckFor)
		pause := p.cfg.InlineCheckFirst
		for {
			if err := p.Sleep(ctx, pause); err != nil {
				return j, err
			}
			pause = min(2*pause, p.cfg.InlineCheckEvery)
			finished, next, err := p.checkAndFinish(ctx, j)
			if err != nil || finished {
				return next, err
			}
			j = next
			if !p.Clock.Now().Before(deadline) {
				break
			}
		}
	}
	return p.save(ctx, j, job.Next{After: p.cfg.pauseFor(j, p.Clock.Now())})
}
