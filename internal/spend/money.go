package spend

import (
	"fmt"
	"strconv"
	"strings"

	"transcriber/internal/job"
)

// Money is counted in µ₽: a billed second (0.1515 ₽ / 15 s = 10,100 µ₽)
// and a token (1,200 µ₽) are whole numbers in it.
const microsPerRuble = 1_000_000

// Prices are what each paid call costs, in µ₽ (docs/configuration.md).
type Prices struct {
	Async         int64 // PRICE_RECOGNITION_ASYNC, per 15 s
	Deferred      int64 // PRICE_RECOGNITION_DEFERRED, per 15 s
	Sync          int64 // PRICE_RECOGNITION_SYNC, per 15 s
	SummaryTokens int64 // PRICE_SUMMARY_PER_1000_TOKENS

	TranslationPerMillion int64 // PRICE_TRANSLATION_PER_MILLION_CHARS
}

// DefaultPrices: docs/deploy.md, "What it costs" (read 2026-12-01, VAT
// included), YandexGPT Pro for summaries, Yandex Translate's 2019 figure
// (docs/platform.md).
var DefaultPrices = Prices{Async: 151_500, Deferred: 38_100, Sync: 162_600, SummaryTokens: 1_200_000,
	TranslationPerMillion: 447_457_600}

// Mode is how a recognition is billed; with summaries and translations,
// the kinds of spend the status shows (Kinds, in order).
type Mode string

const (
	ModeAsync    Mode = "async"
	ModeDeferred Mode = "deferred"
	ModeSync     Mode = "sync"
	KindSummary  Mode = "summary"
)

var Kinds = []Mode{ModeAsync, ModeDeferred, ModeSync, KindSummary, KindTranslation}

func (p Prices) perUnit(m Mode) int64 {
	switch m {
	case ModeSync:
		return p.Sync
	case ModeDeferred:
		return p.Deferred
	}
	return p.Async
}

// Recognition is the price of seconds billed in mode m, rounded up.
func (p Prices) Recognition(m Mode, seconds int64) int64 {
	return ceilDiv(max(seconds, 0)*p.perUnit(m), SyncUnitSeconds)
}

// Summary is the price of tokens of a language model, rounded up.
func (p Prices) Summary(tokens int64) int64 { return ceilDiv(max(tokens, 0)*p.SummaryTokens, 1000) }

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

// A summary's tokens are unknown before its answer: reserved as a bound
// from the audio's length (speech is 2–3 words a second, 2–3 tokens a
// word; those seen were 4–7 tokens a second), trimmed to what was billed.
// Estimates (docs/configuration.md): more is counted past the reservation.
const (
	SummaryTokensPerSecond = 12
	SummaryPromptTokens    = 200
	SummaryAnswerTokens    = 2000
)

// SummaryTokensFor is the bound of a summary of durationMs of audio.
func SummaryTokensFor(durationMs int64) int64 {
	return Seconds(durationMs)*SummaryTokensPerSecond + SummaryPromptTokens + SummaryAnswerTokens
}

// Charge is what paid calls are reserved and counted as: billed seconds
// (the payer's day, the month), money (the month's budget) and translated
// characters (the payer's day).
type Charge struct {
	Seconds int64
	Micros  int64
	Chars   int64
}

// Less is c less o, each part never below 0.
func (c Charge) Less(o Charge) Charge {
	return Charge{Seconds: max(c.Seconds-o.Seconds, 0), Micros: max(c.Micros-o.Micros, 0)}
}

func (c Charge) Covers(o Charge) bool { return o.Seconds <= c.Seconds && o.Micros <= c.Micros }

func (c Charge) Zero() bool { return c.Seconds <= 0 && c.Micros <= 0 }

// Reserved is the charge recorded on j.
func Reserved(j job.Job) Charge { return Charge{Seconds: j.ReservedSeconds, Micros: j.ReservedMicros} }

// SetReserved records c on j.
func SetReserved(j *job.Job, c Charge) { j.ReservedSeconds, j.ReservedMicros = c.Seconds, c.Micros }

// ModeOf is how j is (or would be) billed.
func ModeOf(j job.Job) Mode {
	switch {
	case j.Recognition == job.RecognitionSync:
		return ModeSync
	case j.Priority == job.PriorityDeferred:
		return ModeDeferred
	}
	return ModeAsync
}

// Plan is the most recognizing j's pieces (ms) is billed: each a file of
// its own; with sync, the larger of that and a synchronous try (which may
// fall back); and a summary's bound.
func (l Limits) Plan(j job.Job, pieces []int64, sync bool) Charge {
	var audio, async int64
	for _, ms := range pieces {
		audio, async = audio+ms, async+BilledSeconds(ms, SubmittedChannels)
	}
	c := Charge{Seconds: async, Micros: l.Prices.Recognition(ModeOf(j), async)}
	if sync {
		s := SyncBilledSeconds(audio, 1)
		c.Seconds = max(c.Seconds, s)
		c.Micros = max(c.Micros, l.Prices.Recognition(ModeSync, s))
	}
	if j.Features.Summary {
		c.Micros += l.Prices.Summary(SummaryTokensFor(audio))
	}
	return c
}

// Cost is what done job j was billed, with summaryTokens of a summary.
func (l Limits) Cost(j job.Job, summaryTokens int64) Charge {
	secs := JobBilled(j)
	return Charge{Seconds: secs, Micros: l.Prices.Recognition(ModeOf(j), secs) + l.Prices.Summary(summaryTokens)}
}

// ParseRubles reads rubles ("150", "0.1515", at most six decimals) into
// µ₽, exactly.
func ParseRubles(s string) (int64, error) {
	whole, frac, dot := strings.Cut(strings.TrimSpace(s), ".")
	if whole == "" && frac == "" || dot && frac == "" || len(frac) > 6 ||
		strings.Trim(whole, "0123456789") != "" || strings.Trim(frac, "0123456789") != "" {
		return 0, fmt.Errorf("%q is not an amount of rubles such as 150 or 0.1515 (at most 6 decimals)", s)
	}
	w, err := strconv.ParseInt("0"+whole, 10, 64)
	if err != nil || w > 1_000_000_000_000 {
		return 0, fmt.Errorf("%q is more rubles than taken", s)
	}
	f, _ := strconv.ParseInt(frac+strings.Repeat("0", 6-len(frac)), 10, 64) // at most 6 digits, checked above
	return w*microsPerRuble + f, nil
}

// Rubles writes µ₽ as rubles rounded up to the kopeck: "12.35", "0.01".
func Rubles(micros int64) string {
	kop := ceilDiv(max(micros, 0), microsPerRuble/100)
	return fmt.Sprintf("%d.%02d", kop/100, kop%100)
}

// RublesFloat is µ₽ as rubles, for JSON.
func RublesFloat(micros int64) float64 { return float64(micros) / microsPerRuble }
