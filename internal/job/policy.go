package job

import (
	"slices"
	"time"

	"transcriber/internal/errs"
)

// Step works on a job under a claim, renewed while it works, so the lease
// is short: a crashed holder's job comes back soon.
type Step struct {
	Name  string
	From  []State
	Lease time.Duration
}

// The steps (docs/settings.md).
var (
	Ingest = Step{Name: "ingest", From: []State{AwaitingUpload, Created, Converted}, Lease: Lease} // probe, convert, submit
	Poll   = Step{Name: "poll", From: []State{Transcribe}, Lease: Lease}                           // check, write the result
)

// Lease is the longest a dead holder's job waits.
const Lease = 2 * time.Minute

// RenewEvery lets a renewal or two fail before the claim is lost.
const RenewEvery = Lease / 4

func (s Step) takes(st State) bool { return slices.Contains(s.From, st) }

// Policy is how a job's transient failures are retried.
type Policy struct {
	MaxAttempts int           // claims without a successful step before Dead
	BasePause   time.Duration // doubles with each attempt
	MaxPause    time.Duration
}

// DefaultPolicy: docs/settings.md says why.
var DefaultPolicy = Policy{MaxAttempts: 5, BasePause: time.Second, MaxPause: 5 * time.Minute}

// Pause is BasePause·2^(attempt-1), at most MaxPause.
func (p Policy) Pause(attempt int) time.Duration {
	d := p.BasePause
	for i := 1; i < attempt; i++ {
		if d >= p.MaxPause/2 {
			return p.MaxPause
		}
		d *= 2
	}
	return min(d, p.MaxPause)
}

// Exhausted reports whether the attempts are used up.
func (p Policy) Exhausted(attempts int) bool { return attempts >= p.MaxAttempts }

// Verdict is what becomes of a job whose step failed.
type Verdict int

const (
	Retry Verdict = iota
	Fail          // can never succeed: Failed
	Die           // attempts used up: Dead
)

// Judge fails what can never succeed and retries the rest while attempts last.
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
	// Uncounted: an outage every job met (the breaker's), not counted as
	// an attempt; not stored.
	Uncounted bool
}

// FailureOf is err's code and public message, never its cause.
func FailureOf(err error) Failure {
	return Failure{Code: errs.CodeOf(err), Message: errs.MessageOf(err)}
}
