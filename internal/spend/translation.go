package spend

import (
	"context"
	"errors"
	"fmt"
	"time"

	"transcriber/internal/errs"
	"transcriber/internal/quota"
)

// Translation is paid by the character: a payer has
// LIMIT_TRANSLATION_PER_DAY a UTC day, and the price counts against the
// month's budget. The characters are known before the request, so what is
// reserved is what is billed.
const (
	KindTranslation Mode = "translation"
	// DefaultTranslationPerDay: about five hours of speech's transcripts.
	DefaultTranslationPerDay = 250_000
	CodeTranslationLimit     = "translation_limit"
)

// TranslationKey counts a payer's characters translated a day.
func TranslationKey(chargedTo string) string { return "translated_day:" + chargedTo }

// Translation is the price of chars characters, rounded up.
func (p Prices) Translation(chars int64) int64 {
	return ceilDiv(max(chars, 0)*p.TranslationPerMillion, 1_000_000)
}

func (l Limits) translationLimit(chargedTo string) int64 {
	if l.IsExempt(chargedTo) {
		return 0
	}
	return l.TranslationPerDay
}

// Translating is a translation's reservation.
type Translating struct {
	ChargedTo string
	Chars     int64
	Micros    int64
	At        time.Time
}

// ReserveTranslation counts chars on chargedTo's day and their price on
// the month's budget before the request; a refusal is Permanent
// (translation_limit, budget_exceeded).
func ReserveTranslation(ctx context.Context, c quota.Counters, l Limits, chargedTo string, chars int64, now time.Time) (Translating, error) {
	if c == nil || chars <= 0 {
		return Translating{}, nil
	}
	day, dayEnd := Day(now)
	if chargedTo != "" {
		limit := l.translationLimit(chargedTo)
		used, ok, err := c.Reserve(ctx, TranslationKey(chargedTo), day, chars, limit)
		if err != nil {
			return Translating{}, fmt.Errorf("reserve the day's translation: %w", err)
		}
		if !ok {
			return Translating{}, errs.New(errs.Permanent, CodeTranslationLimit, fmt.Sprintf(
				"this translation is %d characters; %d of today's %d are left; the limit resets at %s",
				chars, max(limit-used, 0), limit, resetAt(dayEnd)))
		}
	}
	micros := l.Prices.Translation(chars)
	if _, err := Reserve(ctx, c, l, "", Charge{Micros: micros}, now, true); err != nil {
		if chargedTo != "" {
			if rerr := c.Release(ctx, TranslationKey(chargedTo), day, chars); rerr != nil {
				err = errors.Join(err, rerr)
			}
		}
		return Translating{}, err
	}
	return Translating{ChargedTo: chargedTo, Chars: chars, Micros: micros, At: now}, nil
}

// Release gives back t: its request was not accepted.
func (t Translating) Release(ctx context.Context, c quota.Counters) error {
	if c == nil || t.Chars <= 0 {
		return nil
	}
	day, _ := Day(t.At)
	var all []error
	if t.ChargedTo != "" {
		all = append(all, c.Release(ctx, TranslationKey(t.ChargedTo), day, t.Chars))
	}
	return errors.Join(append(all, Release(ctx, c, "", Charge{Micros: t.Micros}, day))...)
}

// Billed counts t's money for the status, with no limit.
func (t Translating) Billed(ctx context.Context, c quota.Counters) error {
	if c == nil || t.Micros <= 0 {
		return nil
	}
	month, _ := Month(t.At)
	_, _, err := c.Reserve(ctx, CostKey(KindTranslation), month, t.Micros, 0)
	return err
}
