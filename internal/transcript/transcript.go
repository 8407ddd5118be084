// Package transcript is a recognition's result, utterances with words and
// timings per channel, and its txt, srt, vtt and json renderers.
package transcript

import (
	"slices"
	"strings"
)

// Transcript is one job's audio; times are ms from its start, whatever
// segments it was cut into.
type Transcript struct {
	DurationMs    int64       `json:"duration_ms"`
	Language      string      `json:"language,omitempty"`
	BilledSeconds int64       `json:"billed_seconds,omitempty"` // 0: not known
	Utterances    []Utterance `json:"utterances"`
	Summary       *Summary    `json:"summary,omitempty"`
}

// Summary is the language model's text and its tokens.
type Summary struct {
	Text  string       `json:"text"`
	Usage SummaryUsage `json:"usage"`
}

// SummaryUsage is SpeechKit's ContentUsage; the model is priced per token.
type SummaryUsage struct {
	InputTextTokens  int64 `json:"input_text_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
	TotalTokens      int64 `json:"total_tokens"`
}

func (u SummaryUsage) Add(o SummaryUsage) SummaryUsage {
	return SummaryUsage{u.InputTextTokens + o.InputTextTokens, u.CompletionTokens + o.CompletionTokens, u.TotalTokens + o.TotalTokens}
}

// Utterance is one final result: a phrase on one channel.
type Utterance struct {
	Channel int `json:"channel"`
	// Speaker, from 1 when asked: SpeechKit's label in mono, channel+1 in stereo.
	Speaker int    `json:"speaker,omitempty"`
	StartMs int64  `json:"start_ms"`
	EndMs   int64  `json:"end_ms"`
	Text    string `json:"text"`
	Normal  string `json:"normalized"` // punctuated, numbers as digits; else Text
	Words   []Word `json:"words,omitempty"`
}

type Word struct {
	Text    string `json:"text"`
	StartMs int64  `json:"start_ms"`
	EndMs   int64  `json:"end_ms"`
}

// Empty reports no speech, a result of its own, not an error.
func (t Transcript) Empty() bool {
	return !slices.ContainsFunc(t.Utterances, func(u Utterance) bool { return u.Normal != "" || u.Text != "" })
}

// Append adds a later segment's utterances, shifted by offsetMs. Times are
// first held within a known segment length: the padded last frame may time
// a word past the piece's end, where the next piece starts.
func (t *Transcript) Append(seg Transcript, offsetMs int64) {
	at := func(ms int64) int64 {
		if seg.DurationMs > 0 {
			ms = min(max(ms, 0), seg.DurationMs)
		}
		return ms + offsetMs
	}
	for _, u := range seg.Utterances {
		u.StartMs, u.EndMs = at(u.StartMs), at(u.EndMs)
		u.Words = append(make([]Word, 0, len(u.Words)), u.Words...)
		for i, w := range u.Words {
			u.Words[i].StartMs, u.Words[i].EndMs = at(w.StartMs), at(w.EndMs)
		}
		t.Utterances = append(t.Utterances, u)
	}
	t.DurationMs = max(t.DurationMs, offsetMs+seg.DurationMs)
}

// FromText is synchronous recognition's one text as one utterance over
// the whole audio, without words; blank text is no speech.
func FromText(text string, durationMs int64) Transcript {
	durationMs = max(durationMs, 0)
	t := Transcript{DurationMs: durationMs, Utterances: []Utterance{}}
	if strings.TrimSpace(text) == "" {
		return t
	}
	t.Utterances = append(t.Utterances, Utterance{Channel: 0, StartMs: 0, EndMs: durationMs, Text: text, Normal: text})
	return t
}
