package spend

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"transcriber/internal/errs"
	"transcriber/internal/job"
	"transcriber/internal/quota"
)

// A payer's unfinished jobs are counted in quota.Counters, so the limit
// holds under concurrent requests: a count read from the job store and
// a job made after it are two steps, and fifty requests at once all pass
// the read before any job exists. A counter is a (key, window) row that
// expires quota.Retention after its window starts; there is no row that
// lives for ever, and none should: a count taken for a job that was then
// never made (a crash between the two), or never given back (a crash
// after a job's end was saved), would hold a place for ever.
//
// So each job is counted in the window of its creation's UTC day, under
// ActiveKey(payer), and a payer's unfinished jobs are the sum of the
// windows a job still unfinished can be in: today and the activeDays
// before it, as many as a job lives (Limits.JobLife). Admit reads the
// earlier windows, then reserves one in today's with what the limit
// leaves: one conditional update. Concurrent creators count only in
// today's window, so the earlier ones only ever go down while Admit runs,
// and reading them before the reservation errs only on the side of too
// many: two creators can never pass the limit together. A job ends once,
// and whoever saved its end gives its count back to its creation day's
// window: the step that saved it under its claim (Ended), or the deletion
// that ended it (Deleted). A count lost on the way stops counting when
// its window leaves the span, at most JobLife and a day later.
//
// A job still unfinished after JobLife is no longer counted: JobLife
// covers every wait the service has, so only a stuck job outlives it.
// Jobs made while the payer had no limit (none set, exempt) take no
// count and give none back.

// Unfinished jobs, their counter and their span; docs/settings.md says
// where each number comes from.
const (
	// AfterUpload is how long a job may still run once its upload window
	// closes: a day for a deferred recognition (SpeechKit's "within 24
	// hours"), and a day for the rest: ingest's and the poll's attempts
	// (5 each, a lost one waiting out its 2-minute lease), waits
	// for the recognizer's request quota and for a place in flight.
	AfterUpload = 48 * time.Hour
	// DefaultJobLife is JobLife of the longest default upload window, the
	// Telegram upload link's 24 h: counted over today and 3 days before.
	DefaultJobLife = 24*time.Hour + AfterUpload
	// maxActiveDays keeps the span within the days a counter is kept.
	maxActiveDays = int(quota.Retention/(24*time.Hour)) - 1
)

// JobLife is the longest a job stays unfinished when its upload window
// (the longest a job waits for its file) is upload.
func JobLife(upload time.Duration) time.Duration { return upload + AfterUpload }

// activeDays is how many windows before today may hold the count of a
// job still unfinished: a job made at the last moment of a day lives
// into the day JobLife later, so whole days of JobLife, rounded up.
func (l Limits) activeDays() int {
	life := l.JobLife
	if life <= 0 {
		life = DefaultJobLife
	}
	days := int((life + 24*time.Hour - 1) / (24 * time.Hour))
	return min(max(days, 1), maxActiveDays)
}

// ActiveKey is the counter of chargedTo's unfinished jobs; its windows are
// the UTC days the jobs were made.
func ActiveKey(chargedTo string) string { return "active_jobs:" + chargedTo }

// givenBackKey marks that the count of job id was given back by its
// deletion, in the window of its creation day.
func givenBackKey(id string) string { return "active_jobs_given_back:" + id }

// CodeTooManyActive is the code of a job refused because its payer has
// LIMIT_ACTIVE_JOBS unfinished.
const CodeTooManyActive = "too_many_active_jobs"

// RetryAfter is the wait suggested to a payer at its limit of unfinished
// jobs: about what a short recording takes.
const RetryAfter = time.Minute

// Place is the count Admit took for a job about to be made. A nil Place
// took nothing, and its methods do nothing.
type Place struct {
	c   quota.Counters
	key string
	day time.Time
}

// Admit counts one more unfinished job for chargedTo at now, or returns a
// Conflict too_many_active_jobs error when chargedTo has as many as its
// limit allows. Without a limit (none set, an exempt or unknown payer) or
// without counters it counts nothing and returns a nil Place. The caller
// makes its job next and settles the place with the outcome (Settle).
func Admit(ctx context.Context, c quota.Counters, l Limits, chargedTo string, now time.Time) (*Place, error) {
	limit := int64(l.activeLimit(chargedTo))
	if limit <= 0 || c == nil {
		return nil, nil
	}
	key := ActiveKey(chargedTo)
	today, _ := Day(now)
	older, err := earlierCount(ctx, c, key, today, l.activeDays())
	if err != nil {
		return nil, fmt.Errorf("count unfinished jobs: %w", err)
	}
	// Reserve takes a limit of 0 as none: with nothing left, refuse here.
	if older < limit {
		_, ok, err := c.Reserve(ctx, key, today, 1, limit-older)
		if err != nil {
			return nil, fmt.Errorf("count an unfinished job: %w", err)
		}
		if ok {
			return &Place{c: c, key: key, day: today}, nil
		}
	}
	return nil, errs.New(errs.Conflict, CodeTooManyActive, fmt.Sprintf(
		"%d jobs are unfinished, the most allowed at once; send more when one has finished", limit))
}

// earlierCount sums key's windows of the days days before today. The
// reads go at once: each is a round trip to the store.
func earlierCount(ctx context.Context, c quota.Counters, key string, today time.Time, days int) (int64, error) {
	counts := make([]int64, days)
	fails := make([]error, days)
	var wg sync.WaitGroup
	for i := range days {
		wg.Add(1)
		go func() {
			defer wg.Done()
			counts[i], fails[i] = c.Used(ctx, key, today.AddDate(0, 0, -(i+1)))
		}()
	}
	wg.Wait()
	var sum int64
	for _, n := range counts {
		sum += n
	}
	return sum, errors.Join(fails...)
}

// Settle ends the place with what the store's create answered: j, and
// whether it was made now. A job made now keeps the count, in the window
// of its creation day; a job that existed already (a retried request
// found the job it made) or none (the create failed: j zero, created
// false) gives it back. An error leaves the count where it was: at worst
// it is counted until its window leaves the span.
func (p *Place) Settle(ctx context.Context, j job.Job, created bool) error {
	if p == nil {
		return nil
	}
	if !created {
		return p.c.Release(ctx, p.key, p.day, 1)
	}
	day, _ := Day(j.CreatedAt)
	if day.Equal(p.day) {
		return nil
	}
	// The request crossed midnight: the job's end gives the count back to
	// its creation day, so the count moves there. It is added there before
	// it leaves the other window, so a creator reading both never misses
	// it; the sum never passes what was admitted.
	if _, _, err := p.c.Reserve(ctx, p.key, day, 1, 0); err != nil {
		return err
	}
	return p.c.Release(ctx, p.key, p.day, 1)
}

// Create makes a job for chargedTo within its limit of unfinished jobs:
// it takes the place (Admit), runs create, which answers the job and
// whether it made it now, and settles the place with that (Settle; a
// failure there is logged: the count leaves with its window). At the
// limit, a request whose earlier run made a job (made reports which; nil
// when a request cannot be retried so) gets that job, made false, as any
// retry does, instead of the refusal.
func Create(ctx context.Context, c quota.Counters, st job.Store, l Limits, chargedTo string, now time.Time,
	made func(job.Job) bool, create func() (job.Job, bool, error), log *slog.Logger,
) (job.Job, bool, error) {
	place, err := Admit(ctx, c, l, chargedTo, now)
	if err != nil {
		if made == nil || errs.CodeOf(err) != CodeTooManyActive {
			return job.Job{}, false, err
		}
		prior, ok, rerr := Retried(ctx, st, l, chargedTo, made)
		switch {
		case rerr != nil:
			return job.Job{}, false, rerr
		case !ok:
			return job.Job{}, false, err
		}
		return prior, false, nil
	}
	j, created, err := create()
	if serr := place.Settle(ctx, j, created); serr != nil {
		log.WarnContext(ctx, "could not settle the count of unfinished jobs; it leaves with its window", "error", serr.Error())
	}
	return j, created, err
}

// Retried returns chargedTo's unfinished job that made reports was made
// by the request being retried, read whole, and whether there is one: a
// request refused by Admit gets the job it made, as any retry does, and
// is not refused for the place that job holds.
func Retried(ctx context.Context, st job.Store, l Limits, chargedTo string, made func(job.Job) bool) (job.Job, bool, error) {
	if l.activeLimit(chargedTo) <= 0 {
		return job.Job{}, false, nil
	}
	jobs, err := st.Unfinished(ctx, chargedTo, MaxActiveJobs)
	if err != nil {
		return job.Job{}, false, err
	}
	for _, j := range jobs {
		if made(j) {
			whole, err := st.Get(ctx, j.ID)
			return whole, err == nil, err
		}
	}
	return job.Job{}, false, nil
}

// Ended gives back the count of job j, which has just ended (j as its end
// was saved). Only the step whose save ended it calls it: a step saves
// under its claim, and an ended job is never claimed again, so the count
// goes back once. A failure is logged: the count then leaves with its
// window.
func Ended(ctx context.Context, c quota.Counters, l Limits, j job.Job, log *slog.Logger) {
	if c == nil || !j.State.Terminal() || l.activeLimit(j.ChargedTo) <= 0 {
		return
	}
	day, _ := Day(j.CreatedAt)
	if err := c.Release(ctx, ActiveKey(j.ChargedTo), day, 1); err != nil {
		log.WarnContext(ctx, "could not give back an ended job's place among the unfinished; it leaves with its window",
			"job_id", j.ID, "error", err.Error())
	}
}

// Deleted gives back the count of a job a deletion ended: before is the
// job as the deleter read it (deletion blanks a Telegram job's payer),
// deleted as Store.Delete returned it. A deletion ends only a job that
// had not ended (job.ApplyDelete); one that ended before keeps what its
// end did. Deleting is not exclusive as a step's save is: two deletions
// of one job at once each see it ended by deletion. So a deletion first
// marks the give-back in a counter of the job's own, with a limit of
// one, and only the one that marks it gives the count back.
func Deleted(ctx context.Context, c quota.Counters, l Limits, before, deleted job.Job, log *slog.Logger) {
	payer := before.ChargedTo
	if c == nil || l.activeLimit(payer) <= 0 || !deleted.Deleted() ||
		deleted.State != job.Failed || deleted.ErrorCode != job.ErrDeleted.Code {
		return
	}
	day, _ := Day(deleted.CreatedAt)
	_, first, err := c.Reserve(ctx, givenBackKey(deleted.ID), day, 1, 1)
	if err == nil && first {
		err = c.Release(ctx, ActiveKey(payer), day, 1)
	}
	if err != nil {
		log.WarnContext(ctx, "could not give back a deleted job's place among the unfinished; it leaves with its window",
			"job_id", deleted.ID, "error", err.Error())
	}
}
