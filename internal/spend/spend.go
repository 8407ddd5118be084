// Package spend is spend control: who pays for a job, the limits on what
// a payer and the whole installation may have recognized, and the usage a
// payer can see.
//
// Recognition is what the service costs, so audio is what is limited: a
// payer (an API token, "tok:<token id>", or a Telegram user, "tgu:<user
// id>") has LIMIT_AUDIO_PER_DAY of audio per UTC day and LIMIT_ACTIVE_JOBS
// unfinished jobs at once; the installation has LIMIT_AUDIO_PER_MONTH per
// UTC month. Both are counted in quota.Counters, whose conditional update
// keeps concurrent reservations within a limit. A job's seconds are
// reserved once its length is known (after the probe), before anything is
// submitted, and a job that would pass a limit fails as quota_exceeded
// without reaching the recognizer. A job takes its place among its
// payer's unfinished jobs when it is made (Admit), in the same atomic way,
// and gives it back when it ends (Ended, Deleted); active.go says how the
// count lives in day windows that expire.
package spend

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"transcriber/internal/errs"
	"transcriber/internal/job"
	"transcriber/internal/quota"
)

// Limits are the installation's limits; a zero limit is no limit.
type Limits struct {
	// AudioPerDay is the audio one payer may have recognized per UTC day.
	AudioPerDay time.Duration
	// AudioPerMonth is the audio the whole installation may have
	// recognized per UTC month.
	AudioPerMonth time.Duration
	// ActiveJobs is how many unfinished jobs one payer may have at once.
	ActiveJobs int
	// JobLife is the longest a job stays unfinished (JobLife of the
	// longest upload window); a payer's unfinished jobs are counted over
	// the days it spans (see active.go). Zero is DefaultJobLife.
	JobLife time.Duration
	// Exempt are the Telegram user ids the per-payer limits (AudioPerDay,
	// ActiveJobs) do not apply to; the month's limit still does.
	Exempt map[int64]bool
}

// Defaults; docs/settings.md says why.
const (
	// DefaultAudioPerDay lets the longest recording the service takes
	// (MAX_AUDIO_DURATION's default) fit in a day.
	DefaultAudioPerDay = 6 * time.Hour
	DefaultActiveJobs  = 3
	// MaxActiveJobs is the highest ActiveJobs taken: the most one
	// Unfinished read returns, so the usage shows every unfinished job
	// up to the limit.
	MaxActiveJobs = job.MaxListLimit
)

// API is the payer of a job asked for with the API token tokenID.
func API(tokenID string) string { return "tok:" + tokenID }

// Telegram is the payer of a job a Telegram user asked for.
func Telegram(userID int64) string { return "tgu:" + strconv.FormatInt(userID, 10) }

// IsExempt reports whether the per-payer limits skip chargedTo.
func (l Limits) IsExempt(chargedTo string) bool {
	rest, ok := strings.CutPrefix(chargedTo, "tgu:")
	if !ok {
		return false
	}
	id, err := strconv.ParseInt(rest, 10, 64)
	return err == nil && l.Exempt[id]
}

// dayLimit is chargedTo's day limit in seconds; 0 for none.
func (l Limits) dayLimit(chargedTo string) int64 {
	if l.IsExempt(chargedTo) {
		return 0
	}
	return int64(l.AudioPerDay / time.Second)
}

func (l Limits) monthLimit() int64 { return int64(l.AudioPerMonth / time.Second) }

// activeLimit is chargedTo's limit of unfinished jobs; 0 for none.
func (l Limits) activeLimit(chargedTo string) int {
	if l.IsExempt(chargedTo) || chargedTo == "" {
		return 0
	}
	return l.ActiveJobs
}

// Day returns the UTC day that holds now: its start (the counter's
// window) and end.
func Day(now time.Time) (start, end time.Time) {
	u := now.UTC()
	start = time.Date(u.Year(), u.Month(), u.Day(), 0, 0, 0, 0, time.UTC)
	return start, start.AddDate(0, 0, 1)
}

// Month returns the UTC month that holds now: its start and end.
func Month(now time.Time) (start, end time.Time) {
	u := now.UTC()
	start = time.Date(u.Year(), u.Month(), 1, 0, 0, 0, 0, time.UTC)
	return start, start.AddDate(0, 1, 0)
}

// DayKey is the counter of a payer's audio per day; MonthKey the
// installation's per month.
func DayKey(chargedTo string) string { return "audio_day:" + chargedTo }

// MonthKey: see DayKey.
const MonthKey = "audio_month"

// Seconds is the audio of a job durationMs long, in whole seconds rounded
// up: what is reserved for it.
func Seconds(durationMs int64) int64 {
	if durationMs <= 0 {
		return 0
	}
	return (durationMs + 999) / 1000
}

// CodeQuotaExceeded is the code of a job refused by an audio limit.
const CodeQuotaExceeded = "quota_exceeded"

// Reserve counts seconds of audio for chargedTo at now: on the payer's
// day (unless exempt, when it is counted with no limit) and on the
// installation's month. If either would pass its limit, what was reserved
// is released and the error is a Permanent quota_exceeded saying how much
// is left and when the limit resets. It returns the day counted in (the
// job records it, and Release takes it back). A job with no payer is
// counted on the month only.
func Reserve(ctx context.Context, c quota.Counters, l Limits, chargedTo string, seconds int64, now time.Time) (time.Time, error) {
	day, dayEnd := Day(now)
	month, monthEnd := Month(now)
	if chargedTo != "" {
		limit := l.dayLimit(chargedTo)
		used, ok, err := c.Reserve(ctx, DayKey(chargedTo), day, seconds, limit)
		if err != nil {
			return time.Time{}, fmt.Errorf("reserve the day's audio: %w", err)
		}
		if !ok {
			return time.Time{}, exceeded(seconds, limit-used, limit, "today's", dayEnd)
		}
	}
	limit := l.monthLimit()
	used, ok, err := c.Reserve(ctx, MonthKey, month, seconds, limit)
	if err == nil && ok {
		return day, nil
	}
	if chargedTo != "" {
		if rerr := c.Release(ctx, DayKey(chargedTo), day, seconds); rerr != nil {
			err = errors.Join(err, fmt.Errorf("release the day's audio: %w", rerr))
		}
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("reserve the month's audio: %w", err)
	}
	return time.Time{}, exceeded(seconds, limit-used, limit, "this month's", monthEnd)
}

// Release gives back seconds reserved for chargedTo on day (and its
// month): a job that ended before it was recognized.
func Release(ctx context.Context, c quota.Counters, chargedTo string, seconds int64, day time.Time) error {
	if seconds <= 0 {
		return nil
	}
	var all []error
	if chargedTo != "" {
		all = append(all, c.Release(ctx, DayKey(chargedTo), day, seconds))
	}
	month, _ := Month(day)
	all = append(all, c.Release(ctx, MonthKey, month, seconds))
	return errors.Join(all...)
}

func exceeded(seconds, left, limit int64, which string, resets time.Time) error {
	if left < 0 {
		left = 0
	}
	reset := resets.Format("15:04 UTC")
	if resets.Day() == 1 {
		reset = resets.Format("2 January 2006, 15:04 UTC")
	}
	scope := ""
	if which == "this month's" {
		scope = " for the whole service"
	}
	return errs.New(errs.Permanent, CodeQuotaExceeded, fmt.Sprintf(
		"this recording is %s; %s of %s %s%s is left; the limit resets at %s",
		Human(seconds), Human(left), which, Human(limit), scope, reset))
}

// Human writes seconds the way people read a length: "2 h 10 min",
// "1 h 05 min", "1 min 01 s", "45 s".
func Human(seconds int64) string {
	h, m, s := seconds/3600, seconds%3600/60, seconds%60
	switch {
	case h > 0 && s > 0:
		return fmt.Sprintf("%d h %02d min %02d s", h, m, s)
	case h > 0 && m > 0:
		return fmt.Sprintf("%d h %02d min", h, m)
	case h > 0:
		return fmt.Sprintf("%d h", h)
	case m > 0 && s > 0:
		return fmt.Sprintf("%d min %02d s", m, s)
	case m > 0:
		return fmt.Sprintf("%d min", m)
	}
	return fmt.Sprintf("%d s", s)
}

// Window is the usage of one counter's window.
type Window struct {
	UsedSeconds  int64     `json:"used_seconds"`
	LimitSeconds int64     `json:"limit_seconds"` // 0: no limit
	ResetsAt     time.Time `json:"resets_at"`
}

// Usage is what a payer can see of its usage.
type Usage struct {
	Day         Window `json:"day"`   // the payer's audio today
	Month       Window `json:"month"` // the installation's audio this month
	ActiveJobs  int    `json:"active_jobs"`
	ActiveLimit int    `json:"active_limit"` // 0: no limit
}

// Report reads chargedTo's usage at now. Without counters (c nil) the
// audio used reads 0.
func Report(ctx context.Context, c quota.Counters, st job.Store, l Limits, chargedTo string, now time.Time) (Usage, error) {
	day, dayEnd := Day(now)
	month, monthEnd := Month(now)
	u := Usage{
		Day:         Window{LimitSeconds: l.dayLimit(chargedTo), ResetsAt: dayEnd},
		Month:       Window{LimitSeconds: l.monthLimit(), ResetsAt: monthEnd},
		ActiveLimit: l.activeLimit(chargedTo),
	}
	if c != nil {
		var err error
		if u.Day.UsedSeconds, err = c.Used(ctx, DayKey(chargedTo), day); err != nil {
			return Usage{}, err
		}
		if u.Month.UsedSeconds, err = c.Used(ctx, MonthKey, month); err != nil {
			return Usage{}, err
		}
	}
	jobs, err := st.Unfinished(ctx, chargedTo, MaxActiveJobs)
	if err != nil {
		return Usage{}, err
	}
	u.ActiveJobs = len(jobs)
	return u, nil
}
