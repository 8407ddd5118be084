package pipeline

import (
	"context"
	"errors"
	"sync"
	"time"

	"transcriber/internal/errs"
	"transcriber/internal/job"
	"transcriber/internal/pipeline/admission"
	"transcriber/internal/speechkit"
)

// Check the recognitions in flight (a job in transcribe): a round submits
// the pieces that wait for a place (submit.go), counts the running ones in
// the in-flight count's current window, checks them, gives back the place
// of each that is over, and finishes the job when all are done
// (finish.go). A short recording is checked soon after its submission
// (checkSoon, in the call that took its upload); the rest when the timer
// finds them due (check).

// check checks one claimed job's recognitions and reports whether it is
// done; a job not done yet is saved due at its next check.
func (p *Pipeline) check(ctx context.Context, j job.Job) bool {
	if p.cfg.Policy.Abandoned(j) {
		p.settle(ctx, j, errAttemptsExhausted)
		return false
	}
	finished, next, err := p.checkRound(ctx, j)
	if errors.Is(err, errQuotaWait) || errors.Is(err, errOutageWait) {
		return false // saved due when the quota's window frees or an outage may be over: not a failure
	}
	if err != nil {
		p.jobLog(j).WarnContext(ctx, "poll failed", "error", err.Error(), "code", errs.CodeOf(err))
		p.settle(ctx, next, err)
		return false
	}
	if finished {
		return true
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), settleTimeout)
	defer cancel()
	if _, err := p.Store.Save(sctx, next, job.Next{After: p.cfg.pauseFor(next, p.Clock.Now())}); err != nil {
		p.jobLog(j).WarnContext(ctx, "could not reschedule the check", "error", err.Error())
	}
	return false
}

// checkSoon checks a short recording's recognition for a few seconds, so
// a voice note finishes in the call that received it: first after
// InlineCheckFirst, then at pauses doubling up to InlineCheckEvery;
// anything longer, or not ready in time, goes to the poll function. A
// deferred job is never checked here: its queue is not meant to answer in
// seconds.
//
// inline says whether the caller waits for it: the upload's own event,
// whose sender waits for the answer, does; the poll function's sweep does
// not, whose call would otherwise wait up to InlineCheckFor for each job
// it takes.
func (p *Pipeline) checkSoon(ctx context.Context, j job.Job, inline bool) (job.Job, error) {
	// Checked here only when something was submitted: a piece that found
	// no place in flight is not waited for.
	if inline && !j.Deferred() && inFlight(j) > 0 && time.Duration(j.DurationMs)*time.Millisecond <= p.cfg.InlineCheckMax {
		deadline := p.Clock.Now().Add(p.cfg.InlineCheckFor)
		pause := p.cfg.InlineCheckFirst
		for {
			if err := p.Sleep(ctx, pause); err != nil {
				return j, err
			}
			pause = min(2*pause, p.cfg.InlineCheckEvery)
			finished, next, err := p.checkRound(ctx, j)
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

// checkRound checks the recognitions of a claimed job in transcribe.
// When all are done it writes the transcript, saves the job done (ending the
// claim) and tells the notifier; otherwise it returns the job, still
// claimed, with the finished segments marked.
func (p *Pipeline) checkRound(ctx context.Context, j job.Job) (bool, job.Job, error) {
	j, err := p.submitWaiting(ctx, j)
	if err != nil {
		return false, j, err
	}
	changed := p.admission.Renew(ctx, &j)
	// fail ends the round with err. When the round changed the count in
	// flight (a recognition counted in a new window, or one taken out),
	// the segments are saved first, so the failed attempt's release does
	// not forget what the counters already hold, and the next attempt
	// does not count them again.
	fail := func(err error) (bool, job.Job, error) {
		if changed {
			j, _ = p.save(ctx, j, job.Next{Keep: true}) // if this fails, the failure is settled on the same claim
		}
		return false, j, err
	}
	if inFlight(j) > 0 {
		// No check goes to a recognizer out for every job but its probe.
		if j, err = p.pass(ctx, j, admission.Recognizer); err != nil {
			return false, j, err
		}
	}
	waiting, freed := false, false
	for i, sg := range j.Segments {
		if sg.Done {
			continue
		}
		if sg.OperationID == "" {
			waiting = true // for a place in flight
			continue
		}
		if err := p.limiter.wait(ctx); err != nil {
			return fail(err)
		}
		done, err := p.Recognizer.Check(ctx, sg.OperationID)
		p.heard(ctx, admission.Recognizer, err)
		dropped := done && errs.CodeOf(err) == speechkit.CodeRecognitionFailed
		switch {
		case errs.CodeOf(err) == speechkit.CodeCheckQuota:
			// The recognizer's checks a second are used up (by other
			// instances too): the check is only late, no fault of the
			// job's. It is tried again after the job's pause.
			p.jobLog(j).InfoContext(ctx, "the recognizer refused a status check over its quota; checked again later")
			return false, j, nil
		case dropped:
			// The recognition itself failed in a way that may pass: drop it,
			// so the next attempt submits this segment again.
			j.Segments[i].OperationID = ""
		case err != nil:
			return fail(err)
		case !done:
			// The pieces were submitted together and take about as long
			// each: the rest are checked once this one is done.
			return false, j, nil
		default:
			j.Segments[i].Done = true
		}
		// The piece's recognition is over: its place in flight goes back.
		p.admission.Release(ctx, j, &j)
		changed = true
		if dropped {
			return fail(err)
		}
		freed = true
	}
	if waiting {
		if freed {
			// The places this round freed go to the pieces that wait.
			j, err = p.submitWaiting(ctx, j)
		}
		return false, j, err
	}
	if j, err = p.pass(ctx, j, admission.Storage); err != nil {
		return false, j, err // the transcript goes to storage
	}
	if err := p.finish(ctx, j); err != nil {
		return fail(err)
	}
	return true, j, nil
}

// checkSlack is how much lateness the checks' pacing absorbs: a sleep
// that wakes late, a request slower than the one before it.
const checkSlack = 250 * time.Millisecond

// checkEvery is the spacing of operation checks for a rate of perSecond:
// perSecond gaps span a second and checkSlack, so perSecond + 1 checks
// land within one second, wherever it starts, only when the first is
// late by checkSlack more than the last. At SpeechKit's 5 a second a check
// every 250 ms, 4 a second; spaced at 200 ms, six checks 1 s apart make
// six in a closed second, and 1 ms of lateness six in 999 ms.
func checkEvery(perSecond int) time.Duration {
	return (time.Second + checkSlack) / time.Duration(perSecond)
}

// limiter spaces operation checks to stay within the recognizer's rate
// (checkEvery), for the checks of one instance.
type limiter struct {
	mu    sync.Mutex
	every time.Duration
	next  time.Time
	clock interface{ Now() time.Time }
	sleep func(context.Context, time.Duration) error
}

func (l *limiter) wait(ctx context.Context) error {
	l.mu.Lock()
	now := l.clock.Now()
	at := l.next
	if at.Before(now) {
		at = now
	}
	l.next = at.Add(l.every)
	l.mu.Unlock()
	return l.sleep(ctx, at.Sub(now))
}
