package job

import (
	"time"

	"transcriber/internal/errs"
)

// Step is a piece of the pipeline that works on a job under a claim: the
// states it takes jobs from and how long its claim lasts. A live holder
// renews its claim while it works (Store.Renew), well within the lease, so
// it keeps it however long the step runs; a crashed one's job comes back
// when the lease ends, so the lease is short.
type Step struct {
	Name  string
	From  []State
	Lease time.Duration
}

// The steps. Lease numbers and where they come from are in docs/settings.md.
var (
	// Ingest probes, converts and submits.
	Ingest = Step{Name: "ingest", From: []State{AwaitingUpload, Created, Converted}, Lease: Lease}
	// Poll checks recognition and writes the result.
	Poll = Step{Name: "poll", From: []State{Transcribe}, Lease: Lease}
)

// Lease is how long a claim lasts unless its holder renews it: the longest
// a job held by a dead worker waits before a due selection takes it again,
// whatever its step.
const Lease = 2 * time.Minute

// RenewEvery is how often a holder renews its claim while it works: a
// quarter of the lease, so a renewal or two may fail (a blip of the store)
// before the claim is lost.
const RenewEvery = Lease / 4

func (s Step) takes(st State) bool {
	for _, f := range s.From {
		if f == st {
			return true
		}
	}
	return false
}

// Policy is how a job's transient failures are retried.
type Policy struct {
	MaxAttempts int           // claims without a successful step before the job is dead
	BasePause   time.Duration // pause after the first failure; doubles with each attempt
	MaxPause    time.Duration // the pause never grows beyond this
}

// DefaultPolicy is the service's retry policy: 5 attempts, 1 s doubling to
// 5 min (docs/settings.md says why).
var DefaultPolicy = Policy{MaxAttempts: 5, BasePause: time.Second, MaxPause: 5 * time.Minute}

// Pause returns how long a job waits after failing its attempt-th attempt:
// BasePause·2^(attempt-1), at most MaxPause.
func (p Policy) Pause(attempt int) time.Duration {
	if attempt < 1 {
		attempt = 1
	}
	d := p.BasePause
	for i := 1; i < attempt; i++ {
		if d >= p.MaxPause/2 {
			return p.MaxPause
		}
		d *= 2
	}
	if d > p.MaxPause {
		return p.MaxPause
	}
	return d
}

// Exhausted reports whether a job claimed attempts times without success
// has used up its attempts: it then goes to Dead instead of being retried.
func (p Policy) Exhausted(attempts int) bool { return attempts >= p.MaxAttempts }

// Verdict is what becomes of a job whose step failed.
type Verdict int

// The verdicts.
const (
	Retry Verdict = iota // release with a pause; the job is tried again
	Fail                 // permanent: move to Failed
	Die                  // transient, but attempts are used up: move to Dead
)

// Judge decides what a failure at the given attempt means. Invalid input, a
// permanent provider answer and a missing thing can never succeed; anything
// else may pass, so it is retried until the attempts run out.
func (p Policy) Judge(attempts int, err error) Verdict {
	switch errs.KindOf(err) {
	case errs.Permanent, errs.Invalid, errs.NotFound:
		return Fail
	}
	if p.Exhausted(attempts) {
		return Die
	}
	return Retry
}

// Failure is a failed attempt as the job records it.
type Failure struct {
	Code    string
	Message string
	// Uncounted says the failure is not the job's: an outage of a service
	// every job depends on (the pipeline's breaker found it). Release then
	// does not count the attempt; nothing records the flag itself.
	Uncounted bool
}

// FailureOf records err in words that may be shown to the job's owner: its
// code and its public message, never its cause.
func FailureOf(err error) Failure {
	return Failure{Code: errs.CodeOf(err), Message: errs.MessageOf(err)}
}
