// Package spend is spend control: who pays for a job, the limits on what
// a payer and the installation may spend, and the usage a payer sees.
//
// What is limited is what is billed. A payer ("tok:<token id>" or
// "tgu:<user id>") has LIMIT_AUDIO_PER_DAY billed seconds a UTC day and
// LIMIT_ACTIVE_JOBS unfinished jobs; the installation has
// LIMIT_AUDIO_PER_MONTH and LIMIT_BUDGET_PER_MONTH a UTC month. A job's
// Charge (billing.go, money.go) is reserved in quota.Counters once its
// length is known, moved to what its audio is billed before anything is
// sent, and to what was billed once done; past a limit the job fails as
// quota_exceeded or budget_exceeded. Unfinished jobs: active.go.
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

// Limits are the installation's limits and prices; zero is no limit.
type Limits struct {
	AudioPerDay       time.Duration // billed, a payer's UTC day
	AudioPerMonth     time.Duration // billed, the installation's UTC month
	BudgetPerMonth    int64         // µ₽, the installation's UTC month
	Prices            Prices
	TranslationPerDay int64 // characters, a payer's UTC day
	ActiveJobs        int   // a payer's unfinished jobs
	// JobLife is the longest a job stays unfinished (active.go); zero is
	// DefaultJobLife.
	JobLife time.Duration
	// Exempt are Telegram user ids the per-payer limits skip.
	Exempt map[int64]bool
}

// Defaults (docs/settings.md).
const (
	DefaultAudioPerDay = 6 * time.Hour // the longest recording taken fits
	DefaultActiveJobs  = 3
	// MaxActiveJobs: the most one Unfinished read returns.
	MaxActiveJobs = job.MaxListLimit
)

// API and Telegram name a job's payer.
func API(tokenID string) string { return "tok:" + tokenID }

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

func (l Limits) dayLimit(chargedTo string) int64 {
	if l.IsExempt(chargedTo) {
		return 0
	}
	return int64(l.AudioPerDay / time.Second)
}

func (l Limits) monthLimit() int64 { return int64(l.AudioPerMonth / time.Second) }

func (l Limits) activeLimit(chargedTo string) int {
	if l.IsExempt(chargedTo) || chargedTo == "" {
		return 0
	}
	return l.ActiveJobs
}

// Day and Month return the UTC day or month that holds now.
func Day(now time.Time) (start, end time.Time) {
	u := now.UTC()
	start = time.Date(u.Year(), u.Month(), u.Day(), 0, 0, 0, 0, time.UTC)
	return start, start.AddDate(0, 0, 1)
}

func Month(now time.Time) (start, end time.Time) {
	u := now.UTC()
	start = time.Date(u.Year(), u.Month(), 1, 0, 0, 0, 0, time.UTC)
	return start, start.AddDate(0, 1, 0)
}

// The counters: billed seconds a payer's day (DayKey) and the month
// (MonthKey), the month's money (BudgetKey), each limited; counted as
// jobs end, unlimited, the audio (AudioDayKey, AudioMonthKey) and money
// by kind (CostKey).
func DayKey(chargedTo string) string { return "billed_day:" + chargedTo }

func AudioDayKey(chargedTo string) string { return "audio_day:" + chargedTo }

func CostKey(kind Mode) string { return "cost_month:" + string(kind) }

const (
	MonthKey      = "billed_month"
	AudioMonthKey = "audio_month"
	BudgetKey     = "budget_month"
)

// Seconds is durationMs in whole seconds rounded up.
func Seconds(durationMs int64) int64 { return (max(durationMs, 0) + 999) / 1000 }

// The codes of a job refused by a limit.
const (
	CodeQuotaExceeded  = "quota_exceeded"
	CodeBudgetExceeded = "budget_exceeded"
)

// A take is one counter a charge is reserved in, and its refusal.
type take struct {
	key           string
	window        time.Time
	amount, limit int64
	refuse        func(used int64) error
}

// takes are the counters ch is reserved in for chargedTo on day: seconds
// on the payer's day (no payer: the month only) and the month, characters
// on the payer's day, money on the budget.
func (l Limits) takes(chargedTo string, ch Charge, day time.Time) []take {
	dayEnd := day.AddDate(0, 0, 1)
	month, monthEnd := Month(day)
	var takes []take
	if ch.Seconds > 0 {
		if chargedTo != "" {
			limit := l.dayLimit(chargedTo)
			takes = append(takes, take{DayKey(chargedTo), day, ch.Seconds, limit, func(used int64) error {
				return exceeded(ch.Seconds, limit-used, limit, "today's", "", dayEnd)
			}})
		}
		limit := l.monthLimit()
		takes = append(takes, take{MonthKey, month, ch.Seconds, limit, func(used int64) error {
			return exceeded(ch.Seconds, limit-used, limit, "this month's", " for the whole service", monthEnd)
		}})
	}
	if ch.Chars > 0 && chargedTo != "" {
		limit := l.translationLimit(chargedTo)
		takes = append(takes, take{TranslationKey(chargedTo), day, ch.Chars, limit, func(used int64) error {
			return errs.New(errs.Permanent, CodeTranslationLimit, fmt.Sprintf(
				"this translation is %d characters; %d of today's %d are left; the limit resets at %s",
				ch.Chars, max(limit-used, 0), limit, resetAt(dayEnd)))
		}})
	}
	if ch.Micros > 0 {
		takes = append(takes, take{BudgetKey, month, ch.Micros, l.BudgetPerMonth, func(used int64) error {
			return overBudget(ch.Micros, l.BudgetPerMonth-used, monthEnd)
		}})
	}
	return takes
}

// Reserve counts ch for chargedTo on now's day (takes). Past a limit it
// takes nothing and fails Permanent (quota_exceeded, budget_exceeded),
// saying what is left and when it resets; limited false refuses nothing.
// It returns the day counted in, for Release.
func Reserve(ctx context.Context, c quota.Counters, l Limits, chargedTo string, ch Charge, now time.Time, limited bool) (time.Time, error) {
	day, _ := Day(now)
	takes := l.takes(chargedTo, ch, day)
	for i, t := range takes {
		if !limited {
			t.limit = 0
		}
		used, ok, err := c.Reserve(ctx, t.key, t.window, t.amount, t.limit)
		if err == nil && ok {
			continue
		}
		if err != nil {
			err = fmt.Errorf("reserve %s: %w", t.key, err)
		} else {
			err = t.refuse(used)
		}
		return time.Time{}, errors.Join(err, release(ctx, c, takes[:i]))
	}
	return day, nil
}

// Release gives back ch reserved for chargedTo on day and its month.
func Release(ctx context.Context, c quota.Counters, chargedTo string, ch Charge, day time.Time) error {
	return release(ctx, c, Limits{}.takes(chargedTo, ch, day))
}

func release(ctx context.Context, c quota.Counters, takes []take) error {
	var all []error
	for _, t := range takes {
		if err := c.Release(ctx, t.key, t.window, t.amount); err != nil {
			all = append(all, fmt.Errorf("release %s: %w", t.key, err))
		}
	}
	return errors.Join(all...)
}

// Recognized counts, unlimited, done job j's audio (payer's day, month)
// and money by kind (its mode's, the rest as the summary's), for the usage
// and the status.
func Recognized(ctx context.Context, c quota.Counters, l Limits, j job.Job) error {
	month, _ := Month(j.ReservedDay)
	var all []error
	add := func(key string, window time.Time, n int64) {
		if n > 0 {
			_, _, err := c.Reserve(ctx, key, window, n, 0)
			all = append(all, err)
		}
	}
	audio := (j.DurationMs + 500) / 1000 // to the nearest second: a count to read, no limit's
	if j.ChargedTo != "" {
		add(AudioDayKey(j.ChargedTo), j.ReservedDay, audio)
	}
	add(AudioMonthKey, month, audio)
	rec := min(l.Prices.Recognition(ModeOf(j), JobBilled(j)), j.ReservedMicros)
	add(CostKey(ModeOf(j)), month, rec)
	add(CostKey(KindSummary), month, j.ReservedMicros-rec)
	return errors.Join(all...)
}

func exceeded(seconds, left, limit int64, which, scope string, resets time.Time) error {
	return errs.New(errs.Permanent, CodeQuotaExceeded, fmt.Sprintf(
		"this recording is billed as %s; %s of %s %s billed%s is left; the limit resets at %s",
		Human(seconds), Human(max(left, 0)), which, Human(limit), scope, resetAt(resets)))
}

func overBudget(micros, left int64, resets time.Time) error {
	return errs.New(errs.Permanent, CodeBudgetExceeded, fmt.Sprintf(
		"this recording would cost %s ₽ and %s ₽ of this month's budget for the whole service is left; "+
			"the budget resets at %s, or the owner may raise it; the file is kept until then, so it can be sent again",
		Rubles(micros), Rubles(max(left, 0)), resetAt(resets)))
}

func resetAt(t time.Time) string {
	if t.Day() == 1 {
		return t.Format("2 January 2006, 15:04 UTC")
	}
	return t.Format("15:04 UTC")
}

// Human writes seconds as "2 h 10 min", "1 min 01 s", "45 s".
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

// Window is one counter window's usage: billed seconds and their audio.
type Window struct {
	UsedSeconds  int64     `json:"used_seconds"`
	AudioSeconds int64     `json:"audio_seconds"`
	LimitSeconds int64     `json:"limit_seconds"` // 0: no limit
	ResetsAt     time.Time `json:"resets_at"`
}

// Usage is what a payer can see of its usage.
type Usage struct {
	Day         Window     `json:"day"`         // the payer's today
	Month       Window     `json:"month"`       // the installation's this month
	Translation CharWindow `json:"translation"` // the payer's today
	ActiveJobs  int        `json:"active_jobs"`
	ActiveLimit int        `json:"active_limit"` // 0: no limit
}

// CharWindow is the usage of a window counted in characters.
type CharWindow struct {
	UsedChars  int64     `json:"used_chars"`
	LimitChars int64     `json:"limit_chars"` // 0: no limit
	ResetsAt   time.Time `json:"resets_at"`
}

// Report reads chargedTo's usage at now (without counters, none used).
func Report(ctx context.Context, c quota.Counters, st job.Store, l Limits, chargedTo string, now time.Time) (Usage, error) {
	day, dayEnd := Day(now)
	month, monthEnd := Month(now)
	u := Usage{
		Day:         Window{LimitSeconds: l.dayLimit(chargedTo), ResetsAt: dayEnd},
		Month:       Window{LimitSeconds: l.monthLimit(), ResetsAt: monthEnd},
		Translation: CharWindow{LimitChars: l.translationLimit(chargedTo), ResetsAt: dayEnd},
		ActiveLimit: l.activeLimit(chargedTo),
	}
	if c != nil {
		reads := []struct {
			key    string
			window time.Time
			to     *int64
		}{
			{DayKey(chargedTo), day, &u.Day.UsedSeconds},
			{AudioDayKey(chargedTo), day, &u.Day.AudioSeconds},
			{MonthKey, month, &u.Month.UsedSeconds},
			{AudioMonthKey, month, &u.Month.AudioSeconds},
			{TranslationKey(chargedTo), day, &u.Translation.UsedChars},
		}
		for _, r := range reads {
			n, err := c.Used(ctx, r.key, r.window)
			if err != nil {
				return Usage{}, err
			}
			*r.to = n
		}
	}
	jobs, err := st.Unfinished(ctx, chargedTo, MaxActiveJobs)
	if err != nil {
		return Usage{}, err
	}
	u.ActiveJobs = len(jobs)
	return u, nil
}
