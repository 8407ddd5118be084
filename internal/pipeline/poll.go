package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"transcriber/internal/errs"
	"transcriber/internal/job"
	"transcriber/internal/quota"
	"transcriber/internal/speechkit"
	"transcriber/internal/spend"
	"transcriber/internal/transcript"
)

// sweptStates are the states a poll call looks after: the recognitions in
// flight, and ingest work whose event was lost, whose attempt failed, or
// whose claim expired with a crashed call.
var sweptStates = []job.State{job.AwaitingUpload, job.Created, job.Converted, job.Transcribe}

// SweptStates returns the states a poll call looks after.
func SweptStates() []job.State { return slices.Clone(sweptStates) }

// PollFor is how long one poll call keeps looking for due work.
func (p *Pipeline) PollFor() time.Duration { return p.cfg.PollFor }

// Housekeep removes the jobs and counters past their retention where the
// stores do not expire rows themselves (the embedded one), as every poll
// call does first, and returns how many jobs it removed.
func (p *Pipeline) Housekeep(ctx context.Context) int {
	n := p.expire(ctx)
	p.expireCounters(ctx)
	return n
}

// PollStats says what one poll call did, for its log line.
type PollStats struct {
	Checked  int // jobs whose recognitions were checked
	Finished int // jobs that reached done
	Ingested int // jobs the sweep took back into ingest
	Expired  int // rows of jobs ended longer than the retention ago, removed
}

// Poll is one call of the timer: for up to PollFor (and never past ctx's
// deadline) it claims due jobs, checks their recognitions, finishes those
// that are ready and sweeps ingest work that needs another go. When nothing
// is due within the call, it returns after one indexed read.
func (p *Pipeline) Poll(ctx context.Context) (PollStats, error) {
	var st PollStats
	st.Expired = p.Housekeep(ctx)
	deadline := p.Clock.Now().Add(p.cfg.PollFor)
	if d, ok := ctx.Deadline(); ok {
		// Leave time to finish the job in hand before the platform stops us.
		if limit := d.Add(-10 * time.Second); limit.Before(deadline) {
			deadline = limit
		}
	}
	for {
		next, ok, err := p.Store.NextDue(ctx, sweptStates)
		if err != nil {
			return st, fmt.Errorf("poll: %w", err)
		}
		now := p.Clock.Now()
		// Stop at the deadline even while work is due: a backlog is the
		// next call's, and calls must not pile up to the timeout.
		if !ok || !next.Before(deadline) || !now.Before(deadline) {
			return st, nil
		}
		if wait := next.Sub(now); wait > 0 {
			if err := p.Sleep(ctx, wait); err != nil {
				return st, nil
			}
			continue
		}
		n, err := p.pollOnce(ctx, deadline, &st)
		if err != nil {
			return st, err
		}
		if n == 0 {
			// Due but taken by another caller between the read and the claim.
			if err := p.Sleep(ctx, time.Second); err != nil {
				return st, nil
			}
		}
	}
}

// pollOnce checks a batch of due recognitions, then takes due ingest work
// one job at a time while the call has time to start more. Ingest work can
// be long (a conversion), so it is claimed only when it will be started at
// once, and it runs on the call's own context: bounded by the function's
// timeout, not by the loop's deadline.
func (p *Pipeline) pollOnce(ctx context.Context, deadline time.Time, st *PollStats) (int, error) {
	polled, err := p.Store.ClaimDue(ctx, job.Poll, p.cfg.PollBatch)
	if err != nil {
		return 0, fmt.Errorf("poll: %w", err)
	}
	for _, j := range polled {
		st.Checked++
		if p.poll(ctx, j) {
			st.Finished++
		}
	}
	n := len(polled)
	for p.Clock.Now().Before(deadline) && ctx.Err() == nil {
		swept, err := p.Store.ClaimDue(ctx, job.Ingest, 1)
		if err != nil {
			return n, fmt.Errorf("poll: sweep ingest: %w", err)
		}
		if len(swept) == 0 {
			break
		}
		n++
		st.Ingested++
		p.jobLog(swept[0]).InfoContext(ctx, "sweep takes the job back into ingest")
		p.ingest(ctx, swept[0], false)
	}
	return n, nil
}

// poll checks one claimed job's recognitions and reports whether it is done.
func (p *Pipeline) poll(ctx context.Context, j job.Job) bool {
	if p.cfg.Policy.Abandoned(j) {
		p.settle(ctx, j, errs.New(errs.Unavailable, "attempts_exhausted", "the job failed too many times"))
		return false
	}
	finished, next, err := p.checkAndFinish(ctx, j)
	if errors.Is(err, errQuotaWait) {
		return false // saved due when the quota's window frees: not a failure
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

// checkAndFinish checks the recognitions of a claimed job in transcribe.
// When all are done it writes the transcript, saves the job done (ending the
// claim) and tells the notifier; otherwise it returns the job, still
// claimed, with the finished segments marked.
func (p *Pipeline) checkAndFinish(ctx context.Context, j job.Job) (bool, job.Job, error) {
	j, err := p.submitMissing(ctx, j)
	if err != nil {
		return false, j, err
	}
	j, changed := p.renewInFlight(ctx, j)
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
		if errs.CodeOf(err) == speechkit.CodeCheckQuota {
			// The recognizer's checks a second are used up (by other
			// instances too): the check is only late, no fault of the
			// job's. It is tried again after the job's pause.
			p.jobLog(j).InfoContext(ctx, "the recognizer refused a status check over its quota; checked again later")
			return false, j, nil
		}
		if done && errs.CodeOf(err) == speechkit.CodeRecognitionFailed {
			// The recognition itself failed in a way that may pass: drop it,
			// so the next attempt submits this segment again.
			j.Segments[i].OperationID = ""
			p.leaveInFlight(ctx, &j, i)
			changed = true
			return fail(err)
		}
		if err != nil {
			return fail(err)
		}
		if !done {
			// The pieces were submitted together and take about as long
			// each: the rest are checked once this one is done.
			return false, j, nil
		}
		j.Segments[i].Done = true
		p.leaveInFlight(ctx, &j, i)
		changed, freed = true, true
	}
	if waiting {
		if freed {
			// The places this round freed go to the pieces that wait.
			j, err = p.submitMissing(ctx, j)
		}
		return false, j, err
	}
	if err := p.finish(ctx, j); err != nil {
		return fail(err)
	}
	return true, j, nil
}

func (p *Pipeline) finish(ctx context.Context, j job.Job) error {
	t := transcript.Transcript{DurationMs: j.DurationMs, Language: j.Language, BilledSeconds: spend.JobBilledSeconds(j.Segments)}
	if t.Language == "" {
		t.Language = p.cfg.DefaultLanguage
	}
	var summaries []transcript.Summary
	for _, sg := range j.Segments {
		part, err := p.Recognizer.Result(ctx, sg.OperationID)
		if err != nil {
			return err
		}
		if part.Language != "" {
			t.Language = part.Language // detected, when the job asked for auto
		}
		if part.Summary != nil {
			summaries = append(summaries, *part.Summary)
		}
		part.DurationMs = sg.DurationMs
		nameSpeakers(&part, j.Features)
		t.Append(part, sg.StartMs)
	}
	t.Summary, j.Features.SummaryMissing = p.summaryOf(j, t, summaries)
	var body bytes.Buffer
	if err := transcript.Render(&body, t, transcript.JSON); err != nil {
		return fmt.Errorf("render transcript: %w", err)
	}
	if err := p.Objects.Put(ctx, job.ResultKey(j.ID), body.Bytes(), transcript.JSON.ContentType()); err != nil {
		return err
	}
	j.State = job.Done
	j.ErrorCode, j.ErrorMessage = "", ""
	done, err := p.save(ctx, j, job.Next{})
	if err != nil {
		return err
	}
	log := p.jobLog(done)
	spend.Ended(ctx, p.cfg.Counters, p.cfg.Limits, done, log)
	log.InfoContext(ctx, "transcript written", "utterances", len(t.Utterances), "no_speech", t.Empty(),
		"summary", t.Summary != nil, "summary_missing", done.Features.SummaryMissing)
	// SpeechKit keeps results 3 days; ours are in storage now.
	job.DeleteRecognitions(ctx, p.Recognizer, p.Log, done)
	p.notify(ctx, done)
	return nil
}

// nameSpeakers sets each utterance's speaker when the job asked for them:
// in mono audio SpeechKit's label, which arrives as the channel tag ("0",
// "1"), and the utterance is on the one channel; in stereo the channel,
// each channel one speaker. Numbers start at 1. A job that did not ask is
// left as it is.
func nameSpeakers(t *transcript.Transcript, f job.Features) {
	if !f.Speakers {
		return
	}
	for i := range t.Utterances {
		u := &t.Utterances[i]
		u.Speaker = u.Channel + 1
		if f.Mono() {
			u.Channel = 0
		}
	}
}

// Why a summary asked for is missing, as the job's view says it.
const (
	summaryOff     = "summaries are not set up on this installation"
	summaryNothing = "there was no speech to summarize"
	summaryNone    = "the recognizer returned no summary"
)

// summaryOf is the summary of job j's transcript t from the summaries its
// segments' results carried: one segment's as it is; several joined in
// order by a blank line, their token usage added up. When the job asked
// for one and none came, it returns why instead: a missing summary leaves
// the job done.
func (p *Pipeline) summaryOf(j job.Job, t transcript.Transcript, parts []transcript.Summary) (*transcript.Summary, string) {
	if !j.Features.Summary {
		return nil, ""
	}
	if len(parts) == 0 {
		switch {
		case p.cfg.SummaryModel == "":
			return nil, summaryOff
		case t.Empty():
			return nil, summaryNothing
		}
		return nil, summaryNone
	}
	s := parts[0]
	for _, part := range parts[1:] {
		s.Text += "\n\n" + part.Text
		s.Usage = s.Usage.Add(part.Usage)
	}
	return &s, ""
}

// settle ends a failed attempt by the retry policy, and tells the notifier
// when the job ended.
func (p *Pipeline) settle(ctx context.Context, j job.Job, cause error) {
	log := p.jobLog(j)
	// A call stopped mid-step (shutdown, timeout) still records the end of
	// its attempt, so the job is due again at once instead of when the
	// claim's lease runs out.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), settleTimeout)
	defer cancel()
	got, err := job.Settle(ctx, p.Store, p.cfg.Policy, j, cause)
	switch {
	case errors.Is(err, job.ErrClaimLost):
		log.WarnContext(ctx, "claim lost; the new holder carries on", "error", err.Error())
		p.purgeIfDeleted(ctx, j)
		return
	case err != nil:
		log.ErrorContext(ctx, "could not record the failure; the claim will expire and the job come back", "error", err.Error())
		return
	}
	p.jobLog(got).InfoContext(ctx, "attempt ended", "code", got.ErrorCode, "next_run_at", got.NextRunAt)
	if got.State.Terminal() {
		spend.Ended(ctx, p.cfg.Counters, p.cfg.Limits, got, log)
		p.notify(ctx, got)
	}
	if got.State == job.Failed || got.State == job.Dead {
		p.dropRecognitions(ctx, got)
		p.releaseUnused(ctx, j, got)
	}
}

// releaseUnused gives back the audio reserved for a job that ended failed
// or dead before any of it was submitted: j as the attempt had it (its
// state before the failure), ended as stored. A job that reached
// recognition keeps its reservation: what was submitted is paid for. A
// failure here is logged; the counter then holds more than was used,
// never less.
func (p *Pipeline) releaseUnused(ctx context.Context, j, ended job.Job) {
	if p.cfg.Counters == nil || ended.ReservedSeconds == 0 || j.State == job.Transcribe {
		return
	}
	for _, sg := range ended.Segments {
		if sg.OperationID != "" {
			return
		}
	}
	err := spend.Release(ctx, p.cfg.Counters, ended.ChargedTo, ended.ReservedSeconds, ended.ReservedDay)
	if err != nil {
		p.jobLog(ended).WarnContext(ctx, "could not release the audio reserved for a failed job", "error", err.Error())
		return
	}
	p.jobLog(ended).InfoContext(ctx, "audio reservation released: the job ended before recognition", "seconds", ended.ReservedSeconds)
}

// dropRecognitions deletes the recognitions of a job that ended failed or
// dead: their results will never be read, and SpeechKit would keep them
// for days. Best effort: the job has ended already; a failure is logged
// and SpeechKit's own retention removes the rest.
func (p *Pipeline) dropRecognitions(ctx context.Context, j job.Job) {
	for i := range j.Segments {
		p.leaveInFlight(ctx, &j, i)
	}
	if p.Recognizer == nil {
		return
	}
	job.DeleteRecognitions(ctx, p.Recognizer, p.Log, j)
}

// One poll call's expiry sweep removes at most expireBatches batches of
// expireBatch jobs, so a backlog (a first run after a long pause, a
// shortened retention) is worked off over several calls.
const (
	expireBatch   = 50
	expireBatches = 4
)

// expireCounters removes the usage counters past their retention, where
// the counters store does it itself (the embedded one; YDB's TTL does it in
// the cloud).
func (p *Pipeline) expireCounters(ctx context.Context) {
	ex, ok := p.cfg.Counters.(quota.Expirer)
	if !ok {
		return
	}
	if _, err := ex.ExpireCounters(ctx, p.Clock.Now()); err != nil {
		p.Log.WarnContext(ctx, "could not remove expired counters", "error", err.Error())
	}
}

// expire removes the rows of jobs that ended more than JobRetention ago,
// after their files, when the store expires rows itself (job.Expirer; YDB
// does it by its TTL instead). A job whose files could not all be removed
// keeps its row for a later sweep, and the sweep stops there: the storage
// is likely down. It returns how many rows it removed; failures are logged,
// never the poll's error.
func (p *Pipeline) expire(ctx context.Context) int {
	ex, ok := p.Store.(job.Expirer)
	if !ok {
		return 0
	}
	before := p.Clock.Now().Add(-p.cfg.JobRetention)
	removed := 0
	for range expireBatches {
		if ctx.Err() != nil {
			break
		}
		jobs, err := ex.Expired(ctx, before, expireBatch)
		if err != nil {
			p.Log.WarnContext(ctx, "could not read expired jobs", "error", err.Error())
			break
		}
		ids := make([]string, 0, len(jobs))
		failed := false
		for _, j := range jobs {
			if p.removeFiles(ctx, j) {
				ids = append(ids, j.ID)
			} else {
				failed = true
			}
		}
		n := 0
		if len(ids) > 0 {
			if n, err = ex.Remove(ctx, ids, before); err != nil {
				p.Log.WarnContext(ctx, "could not remove expired jobs", "error", err.Error())
				break
			}
		}
		removed += n
		if failed || len(jobs) < expireBatch {
			break
		}
	}
	if removed > 0 {
		p.Log.InfoContext(ctx, "removed expired jobs", "jobs", removed, "ended_before", before)
	}
	return removed
}

// removeFiles removes every file j may have (a missing one is no
// failure) and reports whether all are gone.
func (p *Pipeline) removeFiles(ctx context.Context, j job.Job) bool {
	return job.RemoveFiles(ctx, p.Objects, p.Log, j) == 0
}

// moved tells the notifier a step saved a new state.
func (p *Pipeline) moved(ctx context.Context, j job.Job) {
	if err := p.Notifier.Moved(ctx, j); err != nil {
		p.jobLog(j).WarnContext(ctx, "could not report progress", "error", err.Error())
	}
}

func (p *Pipeline) notify(ctx context.Context, j job.Job) {
	if err := p.Notifier.Finished(ctx, j); err != nil {
		p.jobLog(j).WarnContext(ctx, "could not notify", "error", err.Error())
	}
}

// settleTimeout bounds the recording of a failed attempt after the call's
// own context has ended.
const settleTimeout = 5 * time.Second

// limiter spaces operation checks to stay within the recognizer's rate.
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
