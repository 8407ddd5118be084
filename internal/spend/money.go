package spend

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"transcriber/internal/job"
)

// Money is counted in micro-rubles (µ₽, a millionth of a ruble): SpeechKit's
// price of a billed second (0.1515 ₽ / 15 s = 10,100 µ₽) and a model's of a
// token (1.2 ₽ / 1,000 = 1,200 µ₽) are whole numbers in it, and int64 holds
// 9·10¹² rubles.
const microsPerRuble = 1_000_000

// Prices are what each paid call costs, in µ₽: SpeechKit's recognition per
// 15 billed seconds by mode, and a summary's language model per 1,000
// tokens. docs/configuration.md gives the defaults and their source.
type Prices struct {
	Async         int64 // PRICE_RECOGNITION_ASYNC, per 15 s
	Deferred      int64 // PRICE_RECOGNITION_DEFERRED, per 15 s
	Sync          int64 // PRICE_RECOGNITION_SYNC, per 15 s
	SummaryTokens int64 // PRICE_SUMMARY_PER_1000_TOKENS
	// TranslationPerMillion is PRICE_TRANSLATION_PER_MILLION_CHARS.
	TranslationPerMillion int64
}

// DefaultPrices are the dated table of docs/deploy.md ("What it costs",
// read 2026-12-01, VAT included, from a secondary source; the price list is
// the authority), YandexGPT Pro's for summaries, and Yandex Translate's
// last published figure (2019, VAT included: docs/platform.md).
var DefaultPrices = Prices{Async: 151_500, Deferred: 38_100, Sync: 162_600, SummaryTokens: 1_200_000,
	TranslationPerMillion: 447_457_600}

// Mode is how a recognition is billed.
type Mode string

// The modes, and summaries, the kinds of spend the status shows.
const (
	ModeAsync    Mode = "async"
	ModeDeferred Mode = "deferred"
	ModeSync     Mode = "sync"
	KindSummary  Mode = "summary"
)

// Kinds are the kinds of spend, in the order the status shows them.
var Kinds = []Mode{ModeAsync, ModeDeferred, ModeSync, KindSummary, KindTranslation}

// perUnit is the price of 15 billed seconds in mode m.
func (p Prices) perUnit(m Mode) int64 {
	switch m {
	case ModeSync:
		return p.Sync
	case ModeDeferred:
		return p.Deferred
	}
	return p.Async
}

// Recognition is the price of seconds billed in mode m, rounded up to a
// whole µ₽.
func (p Prices) Recognition(m Mode, seconds int64) int64 {
	return ceilDiv(max(seconds, 0)*p.perUnit(m), SyncUnitSeconds)
}

// Summary is the price of tokens of a language model, rounded up.
func (p Prices) Summary(tokens int64) int64 { return ceilDiv(max(tokens, 0)*p.SummaryTokens, 1000) }

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

// A summary's tokens are not known before its answer: the reservation is
// an upper bound from the audio's length, trimmed to the usage the answer
// reports. Speech runs at about 2–3 words a second and a word at 2–3
// tokens (the summaries seen, 15,000–25,000 tokens an hour, are 4–7 a
// second); the prompt is a sentence, and the model's answer is capped.
// These are estimates, marked so in docs/configuration.md: a summary that
// takes more is counted as it was billed, past its reservation.
const (
	SummaryTokensPerSecond = 12
	SummaryPromptTokens    = 200
	SummaryAnswerTokens    = 2000
)

// SummaryTokensFor is the bound of a summary of durationMs of audio.
func SummaryTokensFor(durationMs int64) int64 {
	return Seconds(durationMs)*SummaryTokensPerSecond + SummaryPromptTokens + SummaryAnswerTokens
}

// Charge is what a job's paid calls are reserved and counted as: the
// seconds SpeechKit bills (against the payer's day and the installation's
// month) and their price with any summary's (against the month's budget).
type Charge struct {
	Seconds int64
	Micros  int64
}

// Less is c less o, each part never below 0: what a lower charge gives
// back.
func (c Charge) Less(o Charge) Charge {
	return Charge{Seconds: max(c.Seconds-o.Seconds, 0), Micros: max(c.Micros-o.Micros, 0)}
}

// Covers reports whether c holds o.
func (c Charge) Covers(o Charge) bool { return o.Seconds <= c.Seconds && o.Micros <= c.Micros }

// Zero reports whether c charges nothing.
func (c Charge) Zero() bool { return c.Seconds <= 0 && c.Micros <= 0 }

// Reserved is the charge recorded on j.
func Reserved(j job.Job) Charge { return Charge{Seconds: j.ReservedSeconds, Micros: j.ReservedMicros} }

// SetReserved records c on j.
func SetReserved(j *job.Job, c Charge) { j.ReservedSeconds, j.ReservedMicros = c.Seconds, c.Micros }

// ModeOf is how j is (or, before it is recognized, would be) billed
// asynchronously: deferred or not; a job recognized synchronously is
// ModeSync.
func ModeOf(j job.Job) Mode {
	switch {
	case j.Recognition == job.RecognitionSync:
		return ModeSync
	case j.Priority == job.PriorityDeferred:
		return ModeDeferred
	}
	return ModeAsync
}

// Plan is the most recognizing j's audio as pieces (their lengths in ms)
// is billed, before any request: asynchronously each piece as a file of
// its own (BilledSeconds); with sync, a synchronous try first, which may
// fall back, so the larger of the two ways; and a summary's bound when j
// asks for one.
func (l Limits) Plan(j job.Job, pieces []int64, sync bool) Charge {
	var audio, async int64
	for _, ms := range pieces {
		audio += ms
		async += BilledSeconds(ms, SubmittedChannels)
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

// Cost is what done job j was billed: its recognition (JobBilled, in its
// mode) and summaryTokens of a summary.
func (l Limits) Cost(j job.Job, summaryTokens int64) Charge {
	secs := JobBilled(j)
	return Charge{Seconds: secs, Micros: l.Prices.Recognition(ModeOf(j), secs) + l.Prices.Summary(summaryTokens)}
}

// ParseRubles reads a decimal amount of rubles ("150", "0.1515"), at most
// six decimals, not negative, into µ₽, exactly (no float).
func ParseRubles(s string) (int64, error) {
	whole, frac, dot := strings.Cut(strings.TrimSpace(s), ".")
	if whole == "" && frac == "" || dot && frac == "" || len(frac) > 6 ||
		strings.Trim(whole, "0123456789") != "" || strings.Trim(frac, "0123456789") != "" {
		return 0, fmt.Errorf("%q is not an amount of rubles such as 150 or 0.1515 (at most 6 decimals)", s)
	}
	w := int64(0)
	if whole != "" {
		var err error
		if w, err = strconv.ParseInt(whole, 10, 64); err != nil || w > 1_000_000_000_000 {
			return 0, fmt.Errorf("%q is more rubles than taken", s)
		}
	}
	f := int64(0)
	if frac != "" {
		n, err := strconv.ParseInt(frac+strings.Repeat("0", 6-len(frac)), 10, 64)
		if err != nil {
			return 0, errors.New("bad decimals")
		}
		f = n
	}
	return w*microsPerRuble + f, nil
}

// Rubles writes µ₽ as rubles with two decimals, rounded up at the third:
// "12.35". An amount under a kopeck that is not zero reads "0.01".
func Rubles(micros int64) string {
	kop := ceilDiv(max(micros, 0), microsPerRuble/100)
	return fmt.Sprintf("%d.%02d", kop/100, kop%100)
}

// RublesFloat is µ₽ as rubles, for JSON.
func RublesFloat(micros int64) float64 { return float64(micros) / microsPerRuble }
