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

// A payer's unfinished jobs are counted in quota.Counters, not read from
// the job store: fifty requests at once would all pass a read before any
// job exists. Counters expire, so no count taken for a job never made (a
// crash) holds a place for ever. Each job is counted in its creation's UTC
// day under ActiveKey(payer), and a payer's unfinished jobs are the sum of
// today and the activeDays before it (Limits.JobLife). Admit reads the
// earlier days, which only go down meanwhile, and reserves in today's
// with what the limit leaves: two creators never pass it together. Whoever
// saved a job's end gives its count back, once: the step under its claim
// (Ended) or the deletion (Deleted). A lost count leaves with its window;
// only a stuck job outlives JobLife. Jobs made with no limit count nothing.

// The numbers (docs/settings.md).
const (
	// AfterUpload is how long a job may run once its upload window closes:
	// a day for a deferred recognition, a day for attempts and waits.
	AfterUpload = 48 * time.Hour
	// DefaultJobLife: the Telegram upload link's 24 h window, and after.
	DefaultJobLife = 24*time.Hour + AfterUpload
	maxActiveDays  = int(quota.Retention/(24*time.Hour)) - 1 // within a counter's life
)

// JobLife is the longest a job stays unfinished for an upload window.
func JobLife(upload time.Duration) time.Duration { return upload + AfterUpload }

// activeDays is how many days before today may count a job still
// unfinished: JobLife in whole days, rounded up.
func (l Limits) activeDays() int {
	life := l.JobLife
	if life <= 0 {
		life = DefaultJobLife
	}
	days := int((life + 24*time.Hour - 1) / (24 * time.Hour))
	return min(max(days, 1), maxActiveDays)
}

// ActiveKey counts chargedTo's unfinished jobs by creation day.
func ActiveKey(chargedTo string) string { return "active_jobs:" + chargedTo }

// givenBackKey marks that a deletion gave job id's count back.
func givenBackKey(id string) string { return "active_jobs_given_back:" + id }

// CodeTooManyActive refuses a job at LIMIT_ACTIVE_JOBS; RetryAfter is the
// wait suggested, about what a short recording takes.
const (
	CodeTooManyActive = "too_many_active_jobs"
	RetryAfter        = time.Minute
)

// Place is the count Admit took for a job about to be made; nil took nothing.
type Place struct {
	c   quota.Counters
	key string
	day time.Time
}

// Admit counts one more unfinished job for chargedTo, or refuses with a
// Conflict too_many_active_jobs at the limit. Without a limit or counters
// it returns a nil Place. The caller makes its job, then Settles the place.
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

// earlierCount sums key's windows of the days before today, read at once.
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

// Settle ends the place with the create's answer: a job made now keeps the
// count, on its creation day; none made (a retry found its job, or the
// create failed) gives it back.
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
	// Crossed midnight: the count moves to the creation day, added there
	// first so a creator reading both never misses it.
	if _, _, err := p.c.Reserve(ctx, p.key, day, 1, 0); err != nil {
		return err
	}
	return p.c.Release(ctx, p.key, p.day, 1)
}

// Create makes a job for chargedTo within its limit of unfinished jobs:
// Admit, create (the job, and whether made now), Settle. At the limit, a
// retried request whose earlier run made a job (made says which; nil: no
// retries) gets that job, made false, instead of the refusal.
func Create(ctx context.Context, c quota.Counters, st job.Store, l Limits, chargedTo string, now time.Time,
	made func(job.Job) bool, create func() (job.Job, bool, error), log *slog.Logger,
) (job.Job, bool, error) {
	place, err := Admit(ctx, c, l, chargedTo, now)
	if err == nil {
		j, created, err := create()
		if serr := place.Settle(ctx, j, created); serr != nil {
			log.WarnContext(ctx, "unfinished count not settled", "error", serr.Error())
		}
		return j, created, err
	}
	if made == nil || errs.CodeOf(err) != CodeTooManyActive {
		return job.Job{}, false, err
	}
	jobs, rerr := st.Unfinished(ctx, chargedTo, MaxActiveJobs)
	for _, prior := range jobs {
		if made(prior) {
			if prior, rerr = st.Get(ctx, prior.ID); rerr == nil {
				return prior, false, nil
			}
			break
		}
	}
	if rerr != nil {
		return job.Job{}, false, rerr
	}
	return job.Job{}, false, err
}

// Ended gives back the count of job j, just ended, called only by the step
// whose save (under its claim) ended it: once.
func Ended(ctx context.Context, c quota.Counters, l Limits, j job.Job, log *slog.Logger) {
	if c == nil || !j.State.Terminal() || l.activeLimit(j.ChargedTo) <= 0 {
		return
	}
	day, _ := Day(j.CreatedAt)
	if err := c.Release(ctx, ActiveKey(j.ChargedTo), day, 1); err != nil {
		log.WarnContext(ctx, "unfinished count not given back", "job_id", j.ID, "error", err.Error())
	}
}

// Deleted gives back the count of a job a deletion ended (before: as the
// deleter read it, since deletion blanks a Telegram job's payer). Two
// deletions at once both see it ended by deletion, so each first marks
// the give-back in the job's own counter, limit one: only the first gives.
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
		log.WarnContext(ctx, "unfinished count not given back", "job_id", deleted.ID, "error", err.Error())
	}
}
