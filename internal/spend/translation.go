package spend

import (
	"context"
	"time"

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
	t := Translating{ChargedTo: chargedTo, Chars: chars, Micros: l.Prices.Translation(chars), At: now}
	if _, err := Reserve(ctx, c, l, chargedTo, t.charge(), now, true); err != nil {
		return Translating{}, err
	}
	return t, nil
}

func (t Translating) charge() Charge { return Charge{Chars: t.Chars, Micros: t.Micros} }

// Release gives back t: its request was not accepted.
func (t Translating) Release(ctx context.Context, c quota.Counters) error {
	if c == nil || t.Chars <= 0 {
		return nil
	}
	day, _ := Day(t.At)
	return Release(ctx, c, t.ChargedTo, t.charge(), day)
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
