package job

import (
	"cmp"
	"encoding/json"
	"fmt"
)

// Features are a job's options beyond a bare transcript (from the draft,
// never changed) and what the pipeline learned for them (by a save).
type Features struct {
	// Speakers: mono is sent with speaker labeling, stereo keeps its
	// channels; every utterance names its speaker.
	Speakers       bool   `json:"speakers,omitempty"`
	Summary        bool   `json:"summary,omitempty"`
	Channels       int    `json:"channels,omitempty"`        // of the audio sent, from the probe
	SummaryMissing string `json:"summary_missing,omitempty"` // why a done job has no summary, for its owner
	NoReuse        bool   `json:"no_reuse,omitempty"`        // neither reuse nor lend (reuse.go)
	ReusedFrom     string `json:"reused_from,omitempty"`     // the done job whose transcript was reused
}

func (f Features) Zero() bool { return f == Features{} }

// Mono: only such audio is sent with speaker labeling.
func (f Features) Mono() bool { return f.Channels == 1 }

func (f Features) HasSummary() bool { return f.Summary && f.SummaryMissing == "" }

// EncodeFeatures is "" for the zero features, else a small JSON object.
func EncodeFeatures(f Features) string {
	if f.Zero() {
		return ""
	}
	b, _ := json.Marshal(f) // plain fields: no error
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

// saved keeps the draft's options and takes what the pipeline learned from next.
func (f Features) saved(next Features) Features {
	f.Channels, f.SummaryMissing, f.ReusedFrom = next.Channels, next.SummaryMissing, cmp.Or(f.ReusedFrom, next.ReusedFrom)
	return f
}
