// Package spend is spend control: who pays for a job, the limits on what
// a payer and the whole installation may spend, and the usage a payer can
// see.
//
// What is limited is what is billed. A payer (an API token, "tok:<token
// id>", or a Telegram user, "tgu:<user id>") has LIMIT_AUDIO_PER_DAY of
// billed seconds per UTC day and LIMIT_ACTIVE_JOBS unfinished jobs at
// once; the installation has LIMIT_AUDIO_PER_MONTH of billed seconds and
// LIMIT_BUDGET_PER_MONTH of money per UTC month. A job's Charge (its
// planned requests' billed seconds, by SpeechKit's rules in billing.go,
// and their price and any summary's, money.go) is reserved once its length
// is known, before any request, in quota.Counters, whose conditional
// update keeps concurrent reservations within a limit; it is moved to what
// the audio made is billed before anything is sent, and to what the
// answers billed once done. A job that would pass a limit fails as
// quota_exceeded or budget_exceeded without reaching the recognizer. A job
// takes its place among its payer's unfinished jobs when it is made
// (Admit), in the same atomic way, and gives it back when it ends (Ended,
// Deleted); active.go says how the count lives in day windows that
// expire.
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

// Limits are the installation's limits and prices; a zero limit is no
// limit.
type Limits struct {
	// AudioPerDay is the billed seconds one payer may have per UTC day.
	AudioPerDay time.Duration
	// AudioPerMonth is the billed seconds the whole installation may have
	// per UTC month.
	AudioPerMonth time.Duration
	// BudgetPerMonth is the money, in µ₽, the installation may spend per
	// UTC month on paid calls.
	BudgetPerMonth int64
	// Prices are what each paid call costs.
	Prices Prices
	// TranslationPerDay is the characters one payer may have translated
	// per UTC day (translation.go).
	TranslationPerDay int64
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

// The counters of spend: a payer's billed seconds per day (DayKey) and
// the installation's per month (MonthKey), the month's money (BudgetKey),
// each with its limit; and, counted as jobs end, with no limit, for the
// usage and the status, the audio recognized (AudioDayKey, AudioMonthKey)
// and the month's money by kind (CostKey).
func DayKey(chargedTo string) string { return "billed_day:" + chargedTo }

// AudioDayKey: see DayKey.
func AudioDayKey(chargedTo string) string { return "audio_day:" + chargedTo }

// CostKey: see DayKey.
func CostKey(kind Mode) string { return "cost_month:" + string(kind) }

// MonthKey, AudioMonthKey and BudgetKey: see DayKey.
const (
	MonthKey      = "billed_month"
	AudioMonthKey = "audio_month"
	BudgetKey     = "budget_month"
)

// Seconds is durationMs in whole seconds rounded up.
func Seconds(durationMs int64) int64 {
	if durationMs <= 0 {
		return 0
	}
	return (durationMs + 999) / 1000
}

// The codes of a job refused by a limit: billed seconds, or money.
const (
	CodeQuotaExceeded  = "quota_exceeded"
	CodeBudgetExceeded = "budget_exceeded"
)

// Reserve counts charge c for chargedTo in the day that holds now: its
// seconds on the payer's day (unless exempt, when they are counted with no
// limit) and the installation's month, its money on the month's budget.
// If any would pass its limit, what was reserved is released and the
// error is a Permanent quota_exceeded or budget_exceeded saying how much
// is left and when the limit resets. It returns the day counted in (the
// job records it, and Release takes it back). A job with no payer is
// counted on the month only. With limited false nothing is refused: what
// was billed past a reservation is counted so.
func Reserve(ctx context.Context, c quota.Counters, l Limits, chargedTo string, ch Charge, now time.Time, limited bool) (time.Time, error) {
	day, dayEnd := Day(now)
	month, monthEnd := Month(now)
	type take struct {
		key    string
		window time.Time
		amount int64
		limit  int64
		refuse func(used int64) error
	}
	var takes []take
	if ch.Seconds > 0 {
		if chargedTo != "" {
			limit := l.dayLimit(chargedTo)
			takes = append(takes, take{DayKey(chargedTo), day, ch.Seconds, limit, func(used int64) error {
				return exceeded(ch.Seconds, limit-used, limit, "today's", dayEnd)
			}})
		}
		limit := l.monthLimit()
		takes = append(takes, take{MonthKey, month, ch.Seconds, limit, func(used int64) error {
			return exceeded(ch.Seconds, limit-used, limit, "this month's", monthEnd)
		}})
	}
	if ch.Micros > 0 {
		takes = append(takes, take{BudgetKey, month, ch.Micros, l.BudgetPerMonth, func(used int64) error {
			return overBudget(ch.Micros, l.BudgetPerMonth-used, monthEnd)
		}})
	}
	for i, t := range takes {
		limit := t.limit
		if !limited {
			limit = 0
		}
		used, ok, err := c.Reserve(ctx, t.key, t.window, t.amount, limit)
		if err == nil && ok {
			continue
		}
		if err != nil {
			err = fmt.Errorf("reserve %s: %w", t.key, err)
		} else {
			err = t.refuse(used)
		}
		for _, done := range takes[:i] {
			if rerr := c.Release(ctx, done.key, done.window, done.amount); rerr != nil {
				err = errors.Join(err, fmt.Errorf("release %s: %w", done.key, rerr))
			}
		}
		return time.Time{}, err
	}
	return day, nil
}

// Release gives back charge c reserved for chargedTo on day (and its
// month): a job that ended before it was recognized, or was billed less.
func Release(ctx context.Context, c quota.Counters, chargedTo string, ch Charge, day time.Time) error {
	month, _ := Month(day)
	var all []error
	if ch.Seconds > 0 {
		if chargedTo != "" {
			all = append(all, c.Release(ctx, DayKey(chargedTo), day, ch.Seconds))
		}
		all = append(all, c.Release(ctx, MonthKey, month, ch.Seconds))
	}
	if ch.Micros > 0 {
		all = append(all, c.Release(ctx, BudgetKey, month, ch.Micros))
	}
	return errors.Join(all...)
}

// Recognized counts, with no limit, what done job j took for the usage
// and the status: its audio on its payer's day and the month, its money
// on the month by kind (the recognition in its mode, and the rest of
// ReservedMicros, its cost, as the summary's). A failure only leaves those
// counts short; the limits are the reservations'.
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

func exceeded(seconds, left, limit int64, which string, resets time.Time) error {
	left = max(left, 0)
	scope := ""
	if which == "this month's" {
		scope = " for the whole service"
	}
	return errs.New(errs.Permanent, CodeQuotaExceeded, fmt.Sprintf(
		"this recording is billed as %s; %s of %s %s billed%s is left; the limit resets at %s",
		Human(seconds), Human(left), which, Human(limit), scope, resetAt(resets)))
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

// Window is the usage of one counter's window: the billed seconds that
// count against the limit, and the audio they were for.
type Window struct {
	UsedSeconds  int64     `json:"used_seconds"`
	AudioSeconds int64     `json:"audio_seconds"`
	LimitSeconds int64     `json:"limit_seconds"` // 0: no limit
	ResetsAt     time.Time `json:"resets_at"`
}

// Usage is what a payer can see of its usage.
type Usage struct {
	Day   Window `json:"day"`   // the payer's today
	Month Window `json:"month"` // the installation's this month
	// Translation is the payer's characters translated today.
	Translation CharWindow `json:"translation"`
	ActiveJobs  int        `json:"active_jobs"`
	ActiveLimit int        `json:"active_limit"` // 0: no limit
}

// CharWindow is the usage of a window counted in characters.
type CharWindow struct {
	UsedChars  int64     `json:"used_chars"`
	LimitChars int64     `json:"limit_chars"` // 0: no limit
	ResetsAt   time.Time `json:"resets_at"`
}

// Report reads chargedTo's usage at now. Without counters (c nil) the
// seconds used read 0.
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
