// Package admission owns what a recognition takes and gives back: the
// payer's audio reservation (package spend), a request in the recognizer's
// quota window, and a place among the installation's recognitions in
// flight; and, when a job ends, its payer's place among the unfinished
// jobs. All of them are usage counters (quota.Counters) shared by every
// instance, so the pipeline asks one type before it spends (Reserve once
// a job's length is known, Take before a submission, TakeSync before a
// synchronous request) and tells it when a piece or a job is over
// (Release, Unsent), and the rules of each resource live here, not in the
// steps.
//
// What a job holds is recorded on the job: its audio reservation
// (ReservedSeconds, ReservedDay) once the job's length is known (Reserve),
// and each piece's place in flight (Segment.CountedIn) from its admission
// to the end of its recognition. A job keeps what it recorded from one
// attempt to the next, so nothing it recorded is taken twice, and what it
// no longer needs is given back once, by the step that records that it no
// longer needs it. Requests are never given back: a request that failed
// may still have reached the recognizer.
//
// What a crash loses between a take and its record errs towards too much,
// never too little, and not for ever: a place in flight leaves the count
// within two of its windows (inflight.go), a request with its window, and
// audio reserved again by a retried probe with its day. A job deleted
// under a step is told nothing more: its places in flight leave the same
// way, and its place among the unfinished goes back with the deletion
// (spend.Deleted).
//
// It also keeps the breakers of the services every job needs (outage.go):
// whether a call to the recognizer or the object store may go, counted in
// the same shared counters, so one outage is seen once by every instance.
//
// The contract is the suite in admission_test.go (and outage_test.go).
package admission

import (
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

// Config is what the admission counts with. Without Counters nothing is
// counted, reserved or refused.
type Config struct {
	// Counters keeps every count; nil turns the admission off.
	Counters quota.Counters
	// Limits are the audio limits and the limit of unfinished jobs.
	Limits spend.Limits
	// RequestsPerHour is the recognizer's quota of requests; 0 does not
	// pace them (see SubmissionWindows).
	RequestsPerHour int
	// MaxInFlight is the most recognitions the installation has in
	// flight; 0 does not bound them.
	MaxInFlight int
	// CheckedWithin is the longest pause between two checks of a job in
	// transcribe (besides a wait for the request window, which the
	// admission knows): the in-flight count's windows are twice the
	// longer of the two, so every running recognition is counted again in
	// each window (inflight.go).
	CheckedWithin time.Duration
	// OutageAfter failures in a row of a service open its breaker, which
	// lets a probe through after OutageProbeFirst, then at intervals
	// doubling to OutageProbeMax (outage.go). Zero takes the defaults.
	OutageAfter      int
	OutageProbeFirst time.Duration
	OutageProbeMax   time.Duration
	Clock            clock.Clock  // default clock.System()
	Log              *slog.Logger // default slog.Default()
}

// Admission takes and gives back what recognitions need. It keeps no
// state of its own beyond Config: the counts are in Counters, what a job
// holds is on the job.
type Admission struct {
	cfg      Config
	breakers breakers
}

// New returns the admission of cfg.
func New(cfg Config) *Admission {
	if cfg.Clock == nil {
		cfg.Clock = clock.System()
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.OutageAfter <= 0 {
		cfg.OutageAfter = DefaultOutageAfter
	}
	if cfg.OutageProbeFirst <= 0 {
		cfg.OutageProbeFirst = DefaultOutageProbeFirst
	}
	if cfg.OutageProbeMax <= 0 {
		cfg.OutageProbeMax = DefaultOutageProbeMax
	}
	cfg.OutageProbeMax = max(cfg.OutageProbeMax, cfg.OutageProbeFirst)
	return &Admission{cfg: cfg}
}

// Resource names what a recognition takes.
type Resource string

// The resources Take takes for a piece.
const (
	// Audio: the job's audio reservation, taken by Reserve when its
	// length is known, must hold all of its pieces.
	Audio Resource = "audio"
	// InFlight: a place among the installation's recognitions in flight.
	InFlight Resource = "in_flight"
	// Requests: a request in the recognizer's quota window.
	Requests Resource = "requests"
	// Outage: the recognizer is unavailable to every job, and its breaker
	// lets no call through until Until (outage.go).
	Outage Resource = "outage"
)

// Refused is Take's answer when a resource has nothing for a piece: which
// one, and until when, where that is known. Audio is refused for good
// (Until zero: the job's audio passes its reservation, a permanent error
// with CodeOverReserved); a place in flight comes free when a running
// recognition is found finished, which only its job's check finds (Until
// zero); requests come free when the window ends (Until); a recognizer
// out for everyone is asked again when its breaker's interval ends
// (Until).
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
	case r.Resource == Outage:
		return "the recognizer is unavailable to every job until at least " + r.Until.UTC().Format(time.RFC3339)
	}
	return "the installation has its most recognitions in flight"
}

func (r *Refused) Unwrap() error { return r.cause }

// ErrTaken: Take was asked for a piece that holds its place already, or
// was submitted or done. A caller's mistake: nothing is taken twice.
var ErrTaken = errs.New(errs.Internal, "admission_taken", "a piece was admitted twice")

// Round is one submission round of a job: the pieces Take admits one
// after another, which share one read of the in-flight count's previous
// window. The zero Round is ready; a Round serves one round.
type Round struct {
	read   bool
	window time.Time
	held   int64
	// requested is the window of the request quota the last Take counted
	// its request in; zero when it counted none.
	requested time.Time
}

// Take takes what piece i of j needs to be submitted, all or none, and
// records its place in flight on the piece (CountedIn): the job's audio
// must hold all its pieces (the reservation Reserve took, checked here
// before any audio leaves), the recognizer's breaker must let the call
// through (Pass), then a place in flight, then a request. A
// refusal is a *Refused, with nothing taken; a counter that failed is
// another error, with nothing kept either. Once the piece's submission is
// known to have failed, Unsent gives its place back, and its request
// when the recognizer refused it before accepting it.
func (a *Admission) Take(ctx context.Context, j *job.Job, i int, r *Round) error {
	if sg := j.Segments[i]; sg.OperationID != "" || sg.Done || !sg.CountedIn.IsZero() {
		return fmt.Errorf("%w: segment %d of job %s", ErrTaken, i, j.ID)
	}
	if err := a.covers(*j, false); err != nil {
		return &Refused{Resource: Audio, cause: err}
	}
	if until, ok := a.Pass(ctx, Recognizer); !ok {
		return &Refused{Resource: Outage, Until: until}
	}
	window, err := a.takeInFlight(ctx, r)
	if err != nil {
		return err
	}
	requested, err := a.takeRequest(ctx)
	if err != nil {
		a.giveBackInFlight(ctx, *j, window)
		return err
	}
	j.Segments[i].CountedIn = window
	r.requested = requested
	return nil
}

// Unsent gives back what the last piece Take admitted in round r took,
// once its submission failed: its place in flight, as Release does, and,
// when notAccepted (the recognizer refused the request before accepting
// it, speechkit.NotAccepted), its request, to the window Take counted it
// in. A request that may have been accepted stays counted.
func (a *Admission) Unsent(ctx context.Context, j *job.Job, r *Round, notAccepted bool) {
	a.Release(ctx, *j, j)
	window := r.requested
	r.requested = time.Time{}
	if !notAccepted || window.IsZero() || a.cfg.Counters == nil {
		return
	}
	if err := a.cfg.Counters.Release(ctx, RequestsKey, window, 1); err != nil {
		a.jobLog(*j).WarnContext(ctx, "could not give back a request the recognizer refused", "error", err.Error())
	}
}

// Release gives back what j no longer needs: j as the caller has it now,
// was as the step had it before (only its state and reservation are
// read). The caller calls it when a piece's recognition is over, when a
// piece's submission failed, and once the save that lowered a job's
// reservation or ended the job has been made:
//
//   - the place in flight of every piece whose recognition is not running
//     (done, dropped to be submitted again, never submitted), or of every
//     piece once the job ended; CountedIn is cleared on j, so a second
//     Release gives nothing back twice;
//   - the audio a save took off the reservation (j, as saved, holds less
//     than was);
//   - for a job that ended with this save (j ended, was not): its payer's
//     place among the unfinished jobs, and, when it failed or died before
//     any of its audio reached the recognizer, its audio reservation.
//     What was submitted is paid for and stays counted.
//
// A failure is logged: what was not given back leaves with its window.
func (a *Admission) Release(ctx context.Context, was job.Job, j *job.Job) {
	for i, sg := range j.Segments {
		running := sg.OperationID != "" && !sg.Done && !j.State.Terminal()
		if sg.CountedIn.IsZero() || running {
			continue
		}
		j.Segments[i].CountedIn = time.Time{}
		a.giveBackInFlight(ctx, *j, sg.CountedIn)
	}
	if a.cfg.Counters == nil {
		return
	}
	ended := j.State.Terminal() && !was.State.Terminal()
	switch {
	case ended && (j.State == job.Failed || j.State == job.Dead) && !reached(was, *j):
		a.giveBack(ctx, *j, spend.Reserved(*j), "reservation released: the job ended before recognition")
	default:
		a.giveBack(ctx, *j, spend.Reserved(was).Less(spend.Reserved(*j)), "reservation lowered to what is billed")
	}
	if ended && j.State == job.Done && j.ReservedSeconds > 0 {
		if err := spend.Recognized(ctx, a.cfg.Counters, a.cfg.Limits, *j); err != nil {
			a.jobLog(*j).WarnContext(ctx, "usage not counted", "error", err.Error())
		}
	}
	if ended {
		spend.Ended(ctx, a.cfg.Counters, a.cfg.Limits, *j, a.jobLog(*j))
	}
}

func (a *Admission) jobLog(j job.Job) *slog.Logger {
	return a.cfg.Log.With("job_id", j.ID, "state", string(j.State), "attempt", j.Attempts)
}
