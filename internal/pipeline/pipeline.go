// Package pipeline turns an uploaded file into a transcript: the ingest
// function (an object landed in sources/) and the poll function (the
// timer). Each step works on a job under a claim (heartbeat.go), so a
// redelivered event or a second poller never does a step twice, and a
// crashed call's job comes back when its lease expires.
//
// The stages, one a file, in the order a job meets them, each with its
// entries: the only names another stage may use (stages_test.go reads this
// list). What they share is in pipeline.go, ports.go, config.go and
// heartbeat.go.
//
//	ingest.go          ingest          the upload event: claim, then accept … first checks
//	poll.go            -               the timer: housekeep, due checks, swept ingest work
//	accept.go          accept          awaiting_upload → created
//	reuse.go           reuseDone       an earlier job's transcript: → done, no recognition
//	prepare.go         prepare         probe, reserve, convert: created → converted
//	recognize_sync.go  recognizeSync   a short fast job in one request: → done
//	submit.go          submit,submitWaiting  each piece admitted, then submitted: converted → transcribe
//	check.go           check,checkSoon       the recognitions in flight
//	finish.go          finish,finishWith     the transcript: → done
//	settle.go          attempt,settle,ended,purgeIfDeleted  a failed attempt, a job's end, a deletion
//	outage.go          outage,pass,heard  the breakers
//	housekeep.go       -               rows, files and counters past retention
//
// What a recognition takes and gives back (audio, a request, a place among
// the payer's unfinished jobs) is counted by admission.Admission.
package pipeline

import (
	"cmp"
	"context"
	"errors"
	"io"
	"log/slog"
	"time"

	"transcriber/internal/clock"
	"transcriber/internal/errs"
	"transcriber/internal/job"
	"transcriber/internal/media/ffmpeg"
	"transcriber/internal/pipeline/admission"
	"transcriber/internal/speechkit"
	"transcriber/internal/storage/s3"
)

// Deps are the pipeline's collaborators.
type Deps struct {
	Store      job.Store
	Objects    Objects
	Media      Media
	Recognizer Recognizer
	// SyncRecognizer is optional: without it every job is asynchronous.
	SyncRecognizer SyncRecognizer
	Notifier       Notifier     // optional
	Clock          clock.Clock  // default clock.System()
	Log            *slog.Logger // default slog.Default()
	// Sleep waits for d or until ctx ends; tests pass one that moves a
	// fake clock.
	Sleep func(ctx context.Context, d time.Duration) error
}

// Pipeline runs the ingest and poll use cases.
type Pipeline struct {
	Deps
	cfg       Config
	limiter   *limiter
	admission *admission.Admission
}

// New returns a pipeline; cfg's zero fields take their defaults.
func New(d Deps, cfg Config) *Pipeline {
	d.Clock = cmp.Or(d.Clock, clock.System())
	d.Log = cmp.Or(d.Log, slog.Default())
	d.Notifier = cmp.Or(d.Notifier, Notifier(noNotifier{}))
	if d.Sleep == nil {
		d.Sleep = clock.Sleep
	}
	cfg = cfg.withDefaults()
	p := &Pipeline{Deps: d, cfg: cfg}
	p.limiter = &limiter{every: checkEvery(cfg.ChecksPerSecond), clock: d.Clock, sleep: d.Sleep}
	p.admission = admission.New(admission.Config{
		Counters:         cfg.Counters,
		Limits:           cfg.Limits,
		RequestsPerHour:  cfg.RequestsPerHour,
		OutageProbeFirst: cfg.OutageProbeFirst,
		OutageProbeMax:   cfg.OutageProbeMax,
		Clock:            d.Clock,
		Log:              d.Log,
	})
	return p
}

// errAttemptsExhausted ends a job claimed again after its last attempt
// crashed without a word (job.Policy.Abandoned).
var errAttemptsExhausted = errs.New(errs.Unavailable, "attempts_exhausted", "the job failed too many times")

// errQuotaWait and errOutageWait end an attempt whose job is saved
// already, due when the quota's window or the breaker frees; the caller
// only stops.
var (
	errQuotaWait = errs.New(errs.Unavailable, speechkit.CodeRecognitionQuota,
		"the speech recognizer's request quota is used up for now; the job waits for it")
	errOutageWait = errs.New(errs.Unavailable, "outage",
		"a service every job needs is unavailable for now; the job waits for it")
)

// settleTimeout bounds recording an attempt's end after its call's context ended.
const settleTimeout = 5 * time.Second

func (p *Pipeline) jobLog(j job.Job) *slog.Logger {
	return p.Log.With("job_id", j.ID, "state", string(j.State), "attempt", j.Attempts)
}

// moved tells the notifier a step saved a new state.
func (p *Pipeline) moved(ctx context.Context, j job.Job) {
	if err := p.Notifier.Moved(ctx, j); err != nil {
		p.jobLog(j).WarnContext(ctx, "progress not reported", "error", err.Error())
	}
}

// inFlight is how many of j's recognitions are running.
func inFlight(j job.Job) int {
	n := 0
	for _, sg := range j.Segments {
		if sg.OperationID != "" && !sg.Done {
			n++
		}
	}
	return n
}

// language is j's recognition language: its own or the default.
func (p *Pipeline) language(j job.Job) string { return cmp.Or(j.Language, p.cfg.DefaultLanguage) }

// quick reports whether j qualifies for synchronous recognition: fast, at
// most SyncMaxDuration, no speakers, summary or auto language, not tried
// before, with a synchronous recognizer.
func (p *Pipeline) quick(j job.Job) bool {
	return p.SyncRecognizer != nil && p.cfg.SyncMaxDuration > 0 && j.Fast() &&
		!j.Features.Speakers && !j.Features.Summary && p.language(j) != speechkit.AutoLanguage &&
		j.Recognition == "" && j.DurationMs > 0 &&
		time.Duration(j.DurationMs)*time.Millisecond <= p.cfg.SyncMaxDuration
}

// syncable reports whether j, its audio made, goes synchronously: quick,
// one piece of one channel.
func (p *Pipeline) syncable(j job.Job) bool {
	return len(j.Segments) == 1 && j.Features.Mono() && p.quick(j)
}

// readOgg reads the object at key whole when it starts as Ogg and fits the
// synchronous API's size; nil, no error, otherwise (an MP3 or a video is
// not read past its first bytes).
func (p *Pipeline) readOgg(ctx context.Context, key string) ([]byte, error) {
	r, err := p.Objects.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	head := make([]byte, 4)
	switch _, err := io.ReadFull(r, head); {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), err == nil && string(head) != "OggS":
		return nil, nil
	case err != nil:
		return nil, errStorageRead(err)
	}
	rest, err := io.ReadAll(io.LimitReader(r, speechkit.MaxSyncBytes+1-int64(len(head))))
	if err != nil {
		return nil, errStorageRead(err)
	}
	if b := append(head, rest...); len(b) <= speechkit.MaxSyncBytes {
		return b, nil
	}
	return nil, nil
}

// outageOf names the service whose outage err says, if any. A call
// stopped by its own context (shutdown, lost claim, deadline) is none.
func outageOf(ctx context.Context, err error) (admission.Service, bool) {
	switch {
	case err == nil || ctx.Err() != nil:
		return "", false
	case speechkit.Outage(err):
		return admission.Recognizer, true
	case s3.Outage(err), errors.Is(err, ffmpeg.ErrSourceUnavailable):
		return admission.Storage, true
	}
	return "", false
}

func errStorageRead(err error) error {
	return errs.Wrap(err, errs.Unavailable, "storage_read", "the audio could not be read from storage")
}

// release lets claimed job j go, due after pause with its failure f
// recorded, even when ctx ended, and logs why it waits (attrs).
func (p *Pipeline) release(ctx context.Context, j job.Job, pause time.Duration, f job.Failure, attrs ...any) (job.Job, error) {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), settleTimeout)
	defer cancel()
	released, err := p.Store.Release(sctx, j.Claim(), pause, f)
	if err != nil {
		return j, err
	}
	p.jobLog(released).InfoContext(ctx, "job waits", append(attrs, "code", released.ErrorCode,
		"next_run_at", released.NextRunAt, "attempts", released.Attempts)...)
	return released, nil
}

// waitUntil saves the claimed job due at until and returns wait (the
// quota's or an outage's). Saving, not releasing, keeps the attempt from
// counting and the job's submitted pieces.
func (h *held) waitUntil(ctx context.Context, j job.Job, until time.Time, wait error, msg string, attrs ...any) (job.Job, error) {
	saved, err := h.save(ctx, j, job.Next{After: max(until.Sub(h.Clock.Now()), 0)})
	if err != nil {
		return j, err
	}
	h.jobLog(saved).InfoContext(ctx, msg, append(attrs, "next_run_at", saved.NextRunAt)...)
	return saved, wait
}
