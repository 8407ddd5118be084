// Package pipeline turns an uploaded file into a transcript: the use cases
// behind the ingest function (an object landed in sources/) and the poll
// function (the timer). Each works on a job under a claim, so a redelivered
// event or a second poller never does a step twice, and a crashed call's job
// comes back when its claim expires.
package pipeline

import (
	"context"
	"io"
	"log/slog"
	"time"

	"transcriber/internal/clock"
	"transcriber/internal/job"
	"transcriber/internal/media/ffmpeg"
	"transcriber/internal/speechkit"
	"transcriber/internal/storage/s3"
	"transcriber/internal/transcript"
)

// Objects is the object storage the pipeline reads sources from and writes
// audio and results to. Missing objects are errs.NotFound.
type Objects interface {
	PresignGet(ctx context.Context, key string, ttl time.Duration) (string, error)
	Head(ctx context.Context, key string) (s3.ObjectInfo, error)
	Copy(ctx context.Context, src, dst, ifMatch string) error
	Upload(ctx context.Context, key string, r io.Reader, contentType string) (int64, error)
	Put(ctx context.Context, key string, body []byte, contentType string) error
	Get(ctx context.Context, key string) (io.ReadCloser, error)
	Delete(ctx context.Context, key string) error
	URI(key string) string
}

// Media probes and converts audio. Its errors for bad input are
// errs.Permanent with a code and a message a person understands.
type Media interface {
	Probe(ctx context.Context, input string) (ffmpeg.Probe, error)
	// PlanFor plans what to submit; parallel false keeps the pieces as
	// long as SpeechKit takes (ffmpeg.Media.PlanFor).
	PlanFor(p ffmpeg.Probe, parallel bool) (ffmpeg.Plan, error)
	Convert(ctx context.Context, input string, seg ffmpeg.Segment, w io.Writer) error
	// Split converts a plan of several pieces in one pass, cutting each
	// near its planned place where nobody speaks, and hands over each
	// piece, in order, with where it really starts and how long it is.
	Split(ctx context.Context, input string, plan ffmpeg.Plan, piece func(seg ffmpeg.Segment, audio io.Reader) error) error
}

// Recognizer is the speech recognizer's asynchronous API.
type Recognizer interface {
	Submit(ctx context.Context, r speechkit.Request) (operationID string, err error)
	Check(ctx context.Context, operationID string) (done bool, err error)
	Result(ctx context.Context, operationID string) (transcript.Transcript, error)
	Delete(ctx context.Context, operationID string) error
}

// Notifier hears about jobs that move and end: the Telegram bot edits its
// status message and delivers the result. Moved is called after a step
// saved a new state (created: the file is accepted; transcribe: it is being
// recognized), Finished once a job ended (done, failed or dead). An error is
// logged, and the job stays as it is: delivery keeps its own record and
// retries (internal/telegram).
type Notifier interface {
	Moved(ctx context.Context, j job.Job) error
	Finished(ctx context.Context, j job.Job) error
}

// Deps are the pipeline's collaborators.
type Deps struct {
	Store      job.Store
	Objects    Objects
	Media      Media
	Recognizer Recognizer
	Notifier   Notifier     // optional
	Clock      clock.Clock  // default clock.System()
	Log        *slog.Logger // default slog.Default()
	// Sleep waits for d or until ctx ends; the default waits on a timer.
	// Tests that hold the clock still pass one that moves it.
	Sleep func(ctx context.Context, d time.Duration) error
}

// Pipeline runs the ingest and poll use cases.
type Pipeline struct {
	Deps
	cfg     Config
	limiter *limiter
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
	p.limiter = &limiter{every: time.Second / time.Duration(cfg.ChecksPerSecond), clock: d.Clock, sleep: d.Sleep}
	return p
}

type noNotifier struct{}

func (noNotifier) Moved(context.Context, job.Job) error    { return nil }
func (noNotifier) Finished(context.Context, job.Job) error { return nil }

func (p *Pipeline) jobLog(j job.Job) *slog.Logger {
	return p.Log.With("job_id", j.ID, "state", string(j.State), "attempt", j.Attempts)
}

// save writes a step's result and returns the job as stored. On failure it
// returns j as the caller had it, claim included, so the failure can still
// be recorded on the right job.
func (p *Pipeline) save(ctx context.Context, j job.Job, n job.Next) (job.Job, error) {
	saved, err := p.Store.Save(ctx, j, n)
	if err != nil {
		return j, err
	}
	return saved, nil
}

// purgeIfDeleted removes what an attempt made for a job that was deleted
// under it (its claim was taken away): the source, converted audio, the
// transcript and recognitions it knows of. Deletion removed what existed
// then; this removes what the attempt added since.
func (p *Pipeline) purgeIfDeleted(ctx context.Context, j job.Job) {
	cur, err := p.Store.Get(ctx, j.ID)
	if err != nil || !cur.Deleted() {
		return
	}
	log := p.jobLog(j)
	job.Purge(ctx, p.Objects, p.Recognizer, p.Log, j)
	log.InfoContext(ctx, "removed what an attempt made for a deleted job")
}
