// Package transcript is the result of a recognition: utterances with their
// words and timings, per audio channel, and the renderers that turn it into
// txt, srt, vtt and json.
package transcript

import "strings"

// Transcript is what was said in one job's audio. Times are milliseconds
// from the start of the job's audio, whatever segments it was cut into.
type Transcript struct {
	DurationMs int64  `json:"duration_ms"`
	Language   string `json:"language,omitempty"`
	// BilledSeconds is what the recognizer billed for the audio
	// (spend.JobBilledSeconds); 0 when not known, and then left out.
	BilledSeconds int64       `json:"billed_seconds,omitempty"`
	Utterances    []Utterance `json:"utterances"`
	// Summary is the recognizer's summary of the recording, when the job
	// asked for one and it came; nil otherwise, and then left out.
	Summary *Summary `json:"summary,omitempty"`
}

// Summary is what the recognizer's language model wrote about the
// recording, and the tokens it used.
type Summary struct {
	Text  string       `json:"text"`
	Usage SummaryUsage `json:"usage"`
}

// SummaryUsage is the language model's token count for a summary, as
// SpeechKit reports it (ContentUsage); the model's price is per token.
type SummaryUsage struct {
	InputTextTokens  int64 `json:"input_text_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
	TotalTokens      int64 `json:"total_tokens"`
}

// Add returns u with o's tokens added: the usage of two summaries, or of
// two messages of one.
func (u SummaryUsage) Add(o SummaryUsage) SummaryUsage {
	return SummaryUsage{
		InputTextTokens:  u.InputTextTokens + o.InputTextTokens,
		CompletionTokens: u.CompletionTokens + o.CompletionTokens,
		TotalTokens:      u.TotalTokens + o.TotalTokens,
	}
}

// Utterance is one final result of the recognizer: a phrase on one channel.
type Utterance struct {
	Channel int `json:"channel"`
	// Speaker is who said it, from 1, when the job asked for speakers: the
	// speaker SpeechKit labelled in mono audio, or the channel (its number
	// + 1) in stereo. 0 when not asked, and then left out.
	Speaker int    `json:"speaker,omitempty"`
	StartMs int64  `json:"start_ms"`
	EndMs   int64  `json:"end_ms"`
	Text    string `json:"text"`       // as recognized
	Normal  string `json:"normalized"` // with punctuation and numbers as digits, when normalization was on; else equal to Text
	Words   []Word `json:"words,omitempty"`
}

// Word is one recognized word and when it was said.
type Word struct {
	Text    string `json:"text"`
	StartMs int64  `json:"start_ms"`
	EndMs   int64  `json:"end_ms"`
}

// Empty reports whether nothing was recognized: "no speech" is a result of
// its own, not an error.
func (t Transcript) Empty() bool {
	for _, u := range t.Utterances {
		if u.Normal != "" || u.Text != "" {
			return false
		}
	}
	return true
}

// Append adds the utterances of a later segment, whose audio starts offsetMs
// into the job's audio, shifting their times by the offset. When the
// segment's length is known (seg.DurationMs > 0), its times are first held
// within it: a recognizer may time the last word of a piece a few
// milliseconds past the piece's end (the encoder pads the last frame), and
// the next piece's words start there, so times stay in order across the
// seam. Pieces are cut where nobody speaks and do not overlap, so every
// word is in exactly one of them: nothing is dropped or merged here.
func (t *Transcript) Append(seg Transcript, offsetMs int64) {
	at := func(ms int64) int64 {
		if seg.DurationMs > 0 {
			ms = min(max(ms, 0), seg.DurationMs)
		}
		return ms + offsetMs
	}
	for _, u := range seg.Utterances {
		u.StartMs, u.EndMs = at(u.StartMs), at(u.EndMs)
		words := make([]Word, len(u.Words))
		for i, w := range u.Words {
			w.StartMs, w.EndMs = at(w.StartMs), at(w.EndMs)
			words[i] = w
		}
		u.Words = words
		t.Utterances = append(t.Utterances, u)
	}
	if end := offsetMs + seg.DurationMs; end > t.DurationMs {
		t.DurationMs = end
	}
}

// FromText is the transcript of a recognition that answers one text for the
// whole audio and nothing else: SpeechKit's synchronous recognition gives
// neither word timings nor phrases. It is one utterance on channel 0 that
// spans the audio, 0 to durationMs (a negative length is taken as 0), with
// the text as both the recognized and the normalized text, and no words:
// txt is the text, srt and vtt one cue over the whole audio, json that one
// utterance. A text that is empty or only white space is no speech: the
// transcript has no utterances, as an asynchronous result without speech.
// The caller sets Language and BilledSeconds.
func FromText(text string, durationMs int64) Transcript {
	durationMs = max(durationMs, 0)
	t := Transcript{DurationMs: durationMs, Utterances: []Utterance{}}
	if strings.TrimSpace(text) == "" {
		return t
	}
	t.Utterances = append(t.Utterances, Utterance{Channel: 0, StartMs: 0, EndMs: durationMs, Text: text, Normal: text})
	return t
}
