// Package transcript is the result of a recognition: utterances with their
// words and timings, per audio channel, and the renderers that turn it into
// txt, srt, vtt and json.
package transcript

// Transcript is what was said in one job's audio. Times are milliseconds
// from the start of the job's audio, whatever segments it was cut into.
type Transcript struct {
	DurationMs int64  `json:"duration_ms"`
	Language   string `json:"language,omitempty"`
	// BilledSeconds is what the recognizer billed for the audio
	// (spend.JobBilledSeconds); 0 when not known, and then left out.
	BilledSeconds int64       `json:"billed_seconds,omitempty"`
	Utterances    []Utterance `json:"utterances"`
}

// Utterance is one final result of the recognizer: a phrase on one channel.
type Utterance struct {
	Channel int    `json:"channel"`
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
// into the job's audio, shifting their times by the offset.
func (t *Transcript) Append(seg Transcript, offsetMs int64) {
	for _, u := range seg.Utterances {
		u.StartMs += offsetMs
		u.EndMs += offsetMs
		words := make([]Word, len(u.Words))
		for i, w := range u.Words {
			w.StartMs += offsetMs
			w.EndMs += offsetMs
			words[i] = w
		}
		u.Words = words
		t.Utterances = append(t.Utterances, u)
	}
	if end := offsetMs + seg.DurationMs; end > t.DurationMs {
		t.DurationMs = end
	}
}
