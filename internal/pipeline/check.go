package pipeline

import (
	"context"
	"sync"
	"time"

	"transcriber/internal/errs"
	"transcriber/internal/job"
	"transcriber/internal/pipeline/admission"
	"transcriber/internal/speechkit"
)

// check checks a claimed job's recognitions (the timer's), as one
// attempt, and reports whether it is done; otherwise it is saved due at
// its next check.
func (h *held) check(ctx context.Context, j job.Job) (finished bool) {
	h.attempt(ctx, j, "check", func(ctx context.Context, j job.Job) (job.Job, error) {
		done, next, err := h.checkRound(ctx, j)
		if err != nil || done {
			finished = done && err == nil
			return next, err
		}
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), settleTimeout)
		defer cancel()
		if _, err := h.Store.Save(sctx, next, job.Next{After: h.cfg.pauseFor(next, h.Clock.Now())}); err != nil {
			h.jobLog(next).WarnContext(ctx, "check not rescheduled", "error", err.Error())
		}
		return next, nil
	})
	return finished
}

// checkSoon checks a short recording (at most InlineCheckMax, not
// deferred, something submitted) for up to InlineCheckFor when inline, so
// a voice note finishes in the call that received it; then, or otherwise,
// it saves j due at its next check.
func (h *held) checkSoon(ctx context.Context, j job.Job, inline bool) (job.Job, error) {
	if inline && !j.Deferred() && inFlight(j) > 0 && time.Duration(j.DurationMs)*time.Millisecond <= h.cfg.InlineCheckMax {
		deadline := h.Clock.Now().Add(h.cfg.InlineCheckFor)
		pause := inlineCheckFirst
		for {
			if err := h.Sleep(ctx, pause); err != nil {
				return j, err
			}
			pause = min(2*pause, inlineCheckEvery)
			finished, next, err := h.checkRound(ctx, j)
			if err != nil || finished {
				return next, err
			}
			j = next
			if !h.Clock.Now().Before(deadline) {
				break
			}
		}
	}
	return h.save(ctx, j, job.Next{After: h.cfg.pauseFor(j, h.Clock.Now())})
}

// checkRound submits the pieces that wait, checks the running ones, and
// finishes the job when all are done; otherwise it returns j, still
// claimed, its finished pieces marked.
func (h *held) checkRound(ctx context.Context, j job.Job) (bool, job.Job, error) {
	j, err := h.submitWaiting(ctx, j)
	if err != nil {
		return false, j, err
	}
	// fail ends the round with err, saving first the pieces it found over,
	// so a dropped one is submitted again.
	changed := false
	fail := func(err error) (bool, job.Job, error) {
		if changed {
			j, _ = h.save(ctx, j, job.Next{Keep: true}) // if this fails, the failure is settled on the same claim
		}
		return false, j, err
	}
	if inFlight(j) > 0 {
		if j, err = h.pass(ctx, j, admission.Recognizer); err != nil {
			return false, j, err
		}
	}
	waiting, freed := false, false
	for i, sg := range j.Segments {
		if sg.Done {
			continue
		}
		if sg.OperationID == "" {
			waiting = true
			continue
		}
		if err := h.limiter.wait(ctx); err != nil {
			return fail(err)
		}
		done, err := h.Recognizer.Check(ctx, sg.OperationID)
		h.heard(ctx, admission.Recognizer, err)
		dropped := done && errs.CodeOf(err) == speechkit.CodeRecognitionFailed
		switch {
		case errs.CodeOf(err) == speechkit.CodeCheckQuota:
			// Over the recognizer's checks a second (other instances' too):
			// only late, checked again after the job's pause.
			h.jobLog(j).InfoContext(ctx, "check refused", "reason", "check_quota")
			return false, j, nil
		case dropped:
			// A recognition failure that may pass: submitted again next attempt.
			j.Segments[i].OperationID = ""
		case err != nil:
			return fail(err)
		case !done:
			// The pieces take about as long each: the rest after this one.
			return false, j, nil
		default:
			j.Segments[i].Done = true
		}
		changed = true
		if dropped {
			return fail(err)
		}
		freed = true
	}
	if waiting {
		if freed {
			j, err = h.submitWaiting(ctx, j)
		}
		return false, j, err
	}
	if j, err = h.pass(ctx, j, admission.Storage); err != nil {
		return false, j, err
	}
	if err := h.finish(ctx, j); err != nil {
		return fail(err)
	}
	return true, j, nil
}

// checkEvery spaces an instance's checks so perSecond gaps span a second
// and a 250 ms slack (a late wake-up, a slow request): at SpeechKit's 5 a
// second, one every 250 ms. At 200 ms, 1 ms of lateness puts six checks
// in 999 ms.
func checkEvery(perSecond int) time.Duration {
	return (time.Second + 250*time.Millisecond) / time.Duration(perSecond)
}

// limiter spaces one instance's checks by checkEvery.
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
