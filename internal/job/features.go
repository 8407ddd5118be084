package job

import (
	"encoding/json"
	"fmt"
)

// Features are what a job was asked for beyond a bare transcript, and what
// the pipeline learned that they depend on. Speakers and Summary come from
// the draft and never change; Channels and SummaryMissing are the
// pipeline's, written by a save.
type Features struct {
	// Speakers asks for who spoke: a mono recording is sent with SpeechKit's
	// speaker labeling, a stereo one keeps its channels apart, and every
	// utterance of the transcript names its speaker.
	Speakers bool `json:"speakers,omitempty"`
	// Summary asks SpeechKit for a summary of the recording with the
	// recognition.
	Summary bool `json:"summary,omitempty"`
	// Channels is how many channels the audio sent for recognition has (1
	// or 2), from the probe; 0 before.
	Channels int `json:"channels,omitempty"`
	// SummaryMissing says, in words fit for the job's owner, why a job that
	// asked for a summary ended done without one; empty when the summary is
	// there or was not asked for.
	SummaryMissing string `json:"summary_missing,omitempty"`
	// NoReuse asks for a fresh recognition: the job neither reuses an
	// earlier transcript nor lends its own (reuse.go).
	NoReuse bool `json:"no_reuse,omitempty"`
	// ReusedFrom is the id of the done job whose transcript this one
	// reused, with no recognition of its own; empty otherwise.
	ReusedFrom string `json:"reused_from,omitempty"`
}

// Zero reports whether f holds nothing: a job made without options, or
// before they were kept.
func (f Features) Zero() bool { return f == Features{} }

// Mono reports whether the audio is known to have one channel: only such
// audio is sent with speaker labeling.
func (f Features) Mono() bool { return f.Channels == 1 }

// HasSummary reports whether a done job with these features has a summary
// stored with its transcript.
func (f Features) HasSummary() bool { return f.Summary && f.SummaryMissing == "" }

// EncodeFeatures is f as the stores keep it: "" for the zero features (a
// column left empty, as for a job made before they were kept), else a
// small JSON object.
func EncodeFeatures(f Features) string {
	if f.Zero() {
		return ""
	}
	b, err := json.Marshal(f)
	if err != nil {
		return "" // a struct of bools, an int and a string always encodes
	}
	return string(b)
}

// DecodeFeatures reads what EncodeFeatures wrote; "" is the zero features.
func DecodeFeatures(s string) (Features, error) {
	var f Features
	if s == "" {
		return f, nil
	}
	if err := json.Unmarshal([]byte(s), &f); err != nil {
		return Features{}, fmt.Errorf("job features: %w", err)
	}
	return f, nil
}

// saved is cur's features after a holder's save of next: what the draft
// asked for is kept from cur, what the pipeline learned is taken from next.
func (f Features) saved(next Features) Features {
	f.Channels, f.SummaryMissing = next.Channels, next.SummaryMissing
	if f.ReusedFrom == "" {
		f.ReusedFrom = next.ReusedFrom
	}
	return f
}
