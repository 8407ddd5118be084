// Package pipeline turns an uploaded file into a transcript: the use cases
// behind the ingest function (an object landed in sources/) and the poll
// function (the timer). Each works on a job under a claim, so a redelivered
// event or a second poller never does a step twice, and a crashed call's job
// comes back when its claim expires.
//
// Every claimed job is held while a step works on it (heartbeat.go): its
// claim is renewed, so leases are short and a lost claim stops the work.
//
// The files are the job's stages, in the order a job goes through them,
// after the two calls that start the walk:
//
//	ingest.go     the upload event (Uploaded): claims the job and walks it
//	              through accept, prepare and submit to its first checks
//	poll.go       the timer (Poll): housekeeping, then the checks that are
//	              due, and the ingest work its sweep takes back
//	accept.go     accept the upload: awaiting_upload → created
//	reuse.go      an earlier job's transcript of the same recording and
//	              options, no recognition: awaiting_upload or created → done
//	prepare.go    plan and convert (a plain mono Ogg Opus voice note for
//	              synchronous recognition goes as it is), the audio
//	              reserved: created → converted
//	recognize_sync.go
//	              a short fast job in one synchronous request, done in
//	              the call: converted → transcribe → done
//	admit.go      admit a recognition: ask the admission, or wait for it
//	submit.go     submit the pieces that wait: converted → transcribe
//	check.go      check the recognitions in flight
//	finish.go     finish: the transcript, speakers, summary: → done
//	settle.go     settle an ending: a failed attempt, a job that ended, a
//	              deletion found under a step
//	outage.go     an outage every job meets: ask the breaker before a
//	              call, hold the job (not its attempt) while it is open
//	housekeep.go  remove what is past its retention
//
// A stage goes on to the next through that stage's entry (accept,
// reuseDone, prepare, recognizeSync, admit, submit and submitWaiting, check and
// checkSoon, finish and finishWith, settle, ended and purgeIfDeleted, and
// outage's pass, heard, heardAside, waitOutage and outage), never through another
// stage's helpers; what they share is in this file, ports.go, config.go
// and heartbeat.go (stages_test.go holds that). What a recognition takes and gives back —
// the payer's audio, the recognizer's request window, a place in flight,
// a place among the payer's unfinished jobs — is counted by one type,
// admission.Admission: asked before a submission (admit.go) and before a
// synchronous request (recognize_sync.go), told when a piece's recognition
// is over (check.go) and when a job ended (settle.go).
package pipeline

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"time"

	"transcriber/internal/clock"
	"transcriber/internal/errs"
	"transcriber/internal/job"
	"transcriber/internal/pipeline/admission"
	"transcriber/internal/speechkit"
)

// Deps are the pipeline's collaborators.
type Deps struct {
	Store      job.Store
	Objects    Objects
	Media      Media
	Recognizer Recognizer
	// SyncRecognizer answers short recordings in one request (optional:
	// without it, or with Config.SyncMaxDuration 0, every job is
	// recognized asynchronously).
	SyncRecognizer SyncRecognizer
	Notifier       Notifier     // optional
	Clock          clock.Clock  // default clock.System()
	Log            *slog.Logger // default slog.Default()
	// Sleep waits for d or until ctx ends; the default waits on a timer.
	// Tests that hold the clock still pass one that moves it.
	Sleep func(ctx context.Context, d time.Duration) error
}

// Pipeline runs the ingest and poll use cases.
type Pipeline struct {
	Deps
	cfg       Config
	limiter   *limiter
	admission *admission.Admission
}

// New returns a pipeline. cfg's zero fields take their defaults.
func New(d Deps, cfg Config) *Pipeline {
	if d.Clock == nil {
		d.Clock = clock.System()
	}
	if d.Log == nil {
		d.Log = slog.Default()
	}
	if d.Sleep == nil {
		d.Sleep = clock.Sleep
	}
	if d.Notifier == nil {
		d.Notifier = noNotifier{}
	}
	cfg = cfg.withDefaults()
	p := &Pipeline{Deps: d, cfg: cfg}
	p.limiter = &limiter{every: checkEvery(cfg.ChecksPerSecond), clock: d.Clock, sleep: d.Sleep}
	p.admission = admission.New(admission.Config{
		Counters:         cfg.Counters,
		Limits:           cfg.Limits,
		RequestsPerHour:  cfg.RequestsPerHour,
		MaxInFlight:      cfg.MaxInFlight,
		CheckedWithin:    cfg.CheckedWithin(),
		OutageAfter:      cfg.OutageAfter,
		OutageProbeFirst: cfg.OutageProbeFirst,
		OutageProbeMax:   cfg.OutageProbeMax,
		Clock:            d.Clock,
		Log:              d.Log,
	})
	return p
}

// CodeOverReserved is the code of a job whose audio holds more than was
// reserved for it.
const CodeOverReserved = admission.CodeOverReserved

// errAttemptsExhausted ends a job claimed once more after its last
// attempt crashed without a word (job.Policy.Abandoned).
var errAttemptsExhausted = errs.New(errs.Unavailable, "attempts_exhausted", "the job failed too many times")

// errQuotaWait ends an attempt that met the recognizer's request quota.
// The job is saved already, due when the quota's next window opens (with
// its claim ended, and no attempt counted when the service's own count
// refused it: a quota is no fault of the job's): the caller only stops.
var errQuotaWait = errs.New(errs.Unavailable, speechkit.CodeRecognitionQuota,
	"the speech recognizer's request quota is used up for now; the job waits for it")

// errOutageWait ends an attempt held for an outage of a service every job
// needs (outage.go): the job is saved or released already, due when the
// service's breaker next lets a call through; the caller only stops.
var errOutageWait = errs.New(errs.Unavailable, "outage",
	"a service every job needs is unavailable for now; the job waits for it")

// settleTimeout bounds the recording of an attempt's end after the call's
// own context has ended.
const settleTimeout = 5 * time.Second

func (p *Pipeline) jobLog(j job.Job) *slog.Logger {
	return p.Log.With("job_id", j.ID, "state", string(j.State), "attempt", j.Attempts)
}

// save writes a step's result and returns the job as stored. On failure it
// returns j as the caller had it, claim included, so the failure can still
// be recorded on the right job.
func (p *Pipeline) save(ctx context.Context, j job.Job, n job.Next) (job.Job, error) {
	if !n.Keep || j.State.Terminal() {
		claimEnds(ctx)
	}
	saved, err := p.Store.Save(ctx, j, n)
	if err != nil {
		return j, err
	}
	return saved, nil
}

// moved tells the notifier a step saved a new state.
func (p *Pipeline) moved(ctx context.Context, j job.Job) {
	if err := p.Notifier.Moved(ctx, j); err != nil {
		p.jobLog(j).WarnContext(ctx, "could not report progress", "error", err.Error())
	}
}

// inFlight is how many of j's recognitions are in flight.
func inFlight(j job.Job) int {
	n := 0
	for _, sg := range j.Segments {
		if sg.OperationID != "" && !sg.Done {
			n++
		}
	}
	return n
}

// language is the language j is recognized in: its own, or the
// installation's default.
func (p *Pipeline) language(j job.Job) string {
	if j.Language != "" {
		return j.Language
	}
	return p.cfg.DefaultLanguage
}

// quick reports whether claimed job j, as long as j.DurationMs says, is
// one to recognize synchronously (recognize_sync.go): a fast job of at
// most SyncMaxDuration that asks for nothing the synchronous API does not
// give (speakers, a summary, language detection) and was not tried that
// way before, on an installation that has the synchronous API. prepare
// asks it to send such a job's voice note as it is, or make its audio one
// channel, in memory; the synchronous stage asks it again with the length
// the audio really has.
func (p *Pipeline) quick(j job.Job) bool {
	return p.SyncRecognizer != nil && p.cfg.SyncMaxDuration > 0 && j.Fast() &&
		!j.Features.Speakers && !j.Features.Summary && p.language(j) != speechkit.AutoLanguage &&
		j.Recognition == "" && j.DurationMs > 0 &&
		time.Duration(j.DurationMs)*time.Millisecond <= p.cfg.SyncMaxDuration
}

// syncable reports whether j, its audio made, goes to synchronous
// recognition: quick, in one piece of one channel.
func (p *Pipeline) syncable(j job.Job) bool {
	return len(j.Segments) == 1 && j.Features.Mono() && p.quick(j)
}

// waitingForSlot reports whether j has pieces not yet submitted.
func waitingForSlot(j job.Job) bool {
	for _, sg := range j.Segments {
		if sg.OperationID == "" && !sg.Done {
			return true
		}
	}
	return false
}

// readOgg reads the object at key whole, up to the synchronous API's
// size, when it starts as an Ogg file does; nil, and no error, when it
// does not, or is larger: an MP3 or a video is not read past its first
// bytes. It is how synchronous recognition's audio is read: a source that
// may go as it is (prepare.go), or the stored piece of a retried ingest
// (recognize_sync.go).
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
		return nil, errs.Wrap(err, errs.Unavailable, "storage_read", "the audio could not be read from storage")
	}
	rest, err := io.ReadAll(io.LimitReader(r, speechkit.MaxSyncBytes+1-int64(len(head))))
	if err != nil {
		return nil, errs.Wrap(err, errs.Unavailable, "storage_read", "the audio could not be read from storage")
	}
	if b := append(head, rest...); len(b) <= speechkit.MaxSyncBytes {
		return b, nil
	}
	return nil, nil
}

// waitUntil saves the claimed job due at until and returns wait (the
// quota's or an outage's), logging why with attrs. Saving, not releasing,
// is what keeps the attempt from counting: the job goes on from where it
// is (its submitted segments kept) when it comes back.
func (p *Pipeline) waitUntil(ctx context.Context, j job.Job, until time.Time, wait error, why string, attrs ...any) (job.Job, error) {
	saved, err := p.save(ctx, j, job.Next{After: max(until.Sub(p.Clock.Now()), 0)})
	if err != nil {
		return j, err
	}
	p.jobLog(saved).InfoContext(ctx, why, append(attrs, "next_run_at", saved.NextRunAt)...)
	return saved, wait
}
