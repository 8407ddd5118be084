// Package admission owns what a recognition takes and gives back, in
// counters (quota.Counters) every instance shares: the payer's audio
// reservation (package spend), a request in the recognizer's window, a
// synchronous place, an ended job's place among the payer's unfinished
// ones; and the breakers (outage.go). The pipeline asks before it spends
// (Reserve, Take, TakeSync) and tells when something is over (Release,
// Unsent).
//
// A job records its reservation (ReservedSeconds, ReservedDay): a retry
// takes nothing twice, and the step that no longer needs something gives
// it back, once. A crash between a take and its record errs towards too
// much, never too little, and not for ever (windows and days end). A
// request that may have reached the recognizer is never given back.
package admission

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"time"

	"transcriber/internal/clock"
	"transcriber/internal/errs"
	"transcriber/internal/job"
	"transcriber/internal/quota"
	"transcriber/internal/spend"
)

// Config is what the admission counts with; without Counters nothing is
// counted, reserved or refused.
type Config struct {
	Counters        quota.Counters
	Limits          spend.Limits // the audio limits and unfinished jobs
	RequestsPerHour int          // 0: not paced (SubmissionWindows)
	// The breaker's probe interval: from OutageProbeFirst, doubling to
	// OutageProbeMax; zero takes the defaults.
	OutageProbeFirst time.Duration
	OutageProbeMax   time.Duration
	Clock            clock.Clock  // required
	Log              *slog.Logger // default slog.Default()
}

// Admission takes and gives back what recognitions need. The counts are
// in Counters, what a job holds is on the job.
type Admission struct {
	cfg      Config
	breakers breakers
}

// New returns the admission of cfg.
func New(cfg Config) *Admission {
	cfg.Log = cmp.Or(cfg.Log, slog.Default())
	cfg.OutageProbeFirst = cmp.Or(cfg.OutageProbeFirst, DefaultOutageProbeFirst)
	cfg.OutageProbeMax = cmp.Or(cfg.OutageProbeMax, DefaultOutageProbeMax)
	cfg.OutageProbeMax = max(cfg.OutageProbeMax, cfg.OutageProbeFirst)
	return &Admission{cfg: cfg}
}

// Resource names what refused a recognition.
type Resource string

const (
	// Audio: the job's audio passes its reservation (for good).
	Audio Resource = "audio"
	// Requests: the request window is full until Until.
	Requests Resource = "requests"
	// Outage: the recognizer's breaker lets no call through until Until.
	Outage Resource = "outage"
	// SyncRequests: the synchronous places are taken until Until (TakeSync).
	SyncRequests Resource = "sync_requests"
)

// Refused is a refusal: which resource, and until when (zero: never).
type Refused struct {
	Resource Resource
	Until    time.Time
	cause    error
}

func (r *Refused) Error() string {
	switch {
	case r.cause != nil:
		return r.cause.Error()
	case r.Resource == Requests:
		return "the recognizer's request window is full until " + r.Until.UTC().Format(time.RFC3339)
	}
	return "the recognizer is unavailable to every job until at least " + r.Until.UTC().Format(time.RFC3339)
}

func (r *Refused) Unwrap() error { return r.cause }

// ErrTaken: Take was asked for a piece already submitted or done.
var ErrTaken = errs.New(errs.Internal, "admission_taken", "a piece was admitted twice")

// Take takes what piece i of j needs to be submitted, all or none: its
// audio within the reservation (the one check before audio leaves), the
// recognizer's breaker (Pass), a request in the window. It returns the
// window the request was counted in, for Unsent. A refusal is a *Refused;
// a counter that failed another error; either way nothing is kept.
func (a *Admission) Take(ctx context.Context, j job.Job, i int) (time.Time, error) {
	if sg := j.Segments[i]; sg.OperationID != "" || sg.Done {
		return time.Time{}, fmt.Errorf("%w: segment %d of job %s", ErrTaken, i, j.ID)
	}
	if err := a.covers(j, false); err != nil {
		return time.Time{}, &Refused{Resource: Audio, cause: err}
	}
	if until, ok := a.Pass(ctx, Recognizer); !ok {
		return time.Time{}, &Refused{Resource: Outage, Until: until}
	}
	return a.takeRequest(ctx)
}

// Unsent gives back the request Take counted in window, once the
// recognizer refused the submission before accepting it
// (speechkit.NotAccepted); one that may have been accepted stays counted.
func (a *Admission) Unsent(ctx context.Context, j job.Job, window time.Time) {
	if window.IsZero() || a.cfg.Counters == nil {
		return
	}
	if err := a.cfg.Counters.Release(ctx, RequestsKey, window, 1); err != nil {
		a.jobLog(j).WarnContext(ctx, "request not given back", "error", err.Error())
	}
}

// Release gives back what j, as saved, holds less than was, as the step
// had it: the reservation a save lowered; for a job this save ended, its
// payer's place among the unfinished, and its whole reservation when it
// failed or died before any audio reached the recognizer (what was
// submitted is paid for); a done job's bill is counted as recognized. A
// failure is logged: the counters then hold more, never less.
func (a *Admission) Release(ctx context.Context, was, j job.Job) {
	if a.cfg.Counters == nil {
		return
	}
	ended := j.State.Terminal() && !was.State.Terminal()
	switch {
	case ended && (j.State == job.Failed || j.State == job.Dead) && !reached(was, j):
		a.giveBack(ctx, j, spend.Reserved(j), "reservation released")
	default:
		a.giveBack(ctx, j, spend.Reserved(was).Less(spend.Reserved(j)), "reservation lowered")
	}
	if ended && j.State == job.Done && j.ReservedSeconds > 0 {
		if err := spend.Recognized(ctx, a.cfg.Counters, a.cfg.Limits, j); err != nil {
			a.jobLog(j).WarnContext(ctx, "usage not counted", "error", err.Error())
		}
	}
	if ended {
		spend.Ended(ctx, a.cfg.Counters, a.cfg.Limits, j, a.jobLog(j))
	}
}

func (a *Admission) jobLog(j job.Job) *slog.Logger {
	return a.cfg.Log.With("job_id", j.ID, "state", string(j.State), "attempt", j.Attempts)
}
