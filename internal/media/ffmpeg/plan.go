package ffmpeg

import (
	"fmt"
	"time"
)

// ContainerOggOpus is SpeechKit's name (RecognizeFile's
// ContainerAudio.ContainerAudioType) for what Convert and Split write.
const ContainerOggOpus = "OGG_OPUS"

// Plan is what to submit for a file.
type Plan struct {
	// Container is SpeechKit's name for the format of what is submitted:
	// always "OGG_OPUS", what Convert and Split write.
	Container string
	// Segments are consecutive pieces that cover the recording, in order;
	// one or more. One segment is converted by Convert, and more are the
	// outline Split cuts the recording by: where a cut lands is known only
	// once Split has found a quiet moment for it.
	Segments []Segment
}

// Segment is a piece of the recording.
type Segment struct {
	StartMs    int64 // where it starts in the source
	DurationMs int64 // how long it is; Convert reads to the end of the input when 0
	// Format is the demuxer Convert reads the source with: the one Probe
	// found ("mov" for "mov,mp4,m4a,3gp,3g2,mj2"), set by Plan, so the
	// source is read as what was probed. Empty lets ffmpeg detect it among
	// the accepted formats.
	Format string
}

// Plan decides, from what Probe found, how the file is cut; it runs
// nothing. Every recording is converted to OGG/Opus, even one in a format
// SpeechKit takes as it is (OGG/Opus, MP3, WAV): what is submitted is then
// always audio that ffmpeg decoded and encoded, cut at the planned length,
// whose every packet the pipeline counts (package oggopus) before it
// reaches the recognizer. A file that goes untouched is recognized to its
// real end whatever its header says, and a header is the sender's to
// write.
//
// A recording longer than ParallelFrom, or than SegmentLength, is cut into
// n > 1 consecutive segments of one length (the last one shorter by what
// the division leaves), by Split, which moves each cut to a quiet moment
// near it. Past ParallelFrom, n is the recording's length over
// PieceLength, rounded up, and at most MaxPieces; otherwise it is its
// length over SegmentLength, rounded up. In both cases there are enough
// segments that none is longer than SegmentLength.
//
// Errors: ErrUnsupported (the container is not one of the accepted
// formats, which Probe never returns), ErrNoAudio (no audio stream),
// ErrEmptyFile (the audio lasts 0 ms), ErrTooLong (longer than
// MaxDuration).
func (m *Media) Plan(p Probe) (Plan, error) { return m.PlanFor(p, true) }

// PlanFor is Plan, or with parallel false, the plan of a recording whose
// pieces must be as long as they can be: it is cut only where
// SegmentLength makes it, never into pieces of PieceLength. That is for a
// job whose results SpeechKit works out per file (speakers labelled, a
// summary written), which short pieces would split.
func (m *Media) PlanFor(p Probe, parallel bool) (Plan, error) {
	format, ok := allowedDemuxer(p.Container)
	if !ok {
		return Plan{}, wrap(ErrUnsupported, fmt.Errorf("format %q is not accepted", p.Container), "")
	}
	if len(p.Audio) == 0 {
		return Plan{}, wrap(ErrNoAudio, fmt.Errorf("no audio stream in %q", p.Container), "")
	}
	if p.DurationMs <= 0 {
		return Plan{}, wrap(ErrEmptyFile, fmt.Errorf("%q audio of %d ms", p.Container, p.DurationMs),
			"the recording is empty")
	}
	if limit := m.cfg.MaxDuration.Milliseconds(); p.DurationMs > limit {
		return Plan{}, wrap(ErrTooLong, fmt.Errorf("%d ms is over the limit of %d ms", p.DurationMs, limit),
			"the recording is longer than "+humanDuration(m.cfg.MaxDuration))
	}

	n, length := m.pieces(p.DurationMs, parallel)
	segs := make([]Segment, 0, n)
	for i := int64(0); i < n; i++ {
		start := i * length
		segs = append(segs, Segment{StartMs: start, DurationMs: min(length, p.DurationMs-start), Format: format})
	}
	return Plan{Container: ContainerOggOpus, Segments: segs}, nil
}

// pieces is how many segments a recording of d > 0 ms is planned as (see
// Plan; without parallel, only as many as SegmentLength needs), and how
// long each is but the last. The length is d/n rounded up,
// so that no segment is longer than d/n (and so than SegmentLength) by a
// millisecond; for a recording of a few milliseconds that can leave
// nothing for the last ones, so n is counted again from the length.
func (m *Media) pieces(d int64, parallel bool) (n, length int64) {
	atLeast := ceilDiv(d, m.cfg.SegmentLength.Milliseconds()) // none longer than SegmentLength
	n = atLeast
	if parallel && d > m.cfg.ParallelFrom.Milliseconds() {
		n = min(ceilDiv(d, m.cfg.PieceLength.Milliseconds()), int64(m.cfg.MaxPieces))
	}
	n = max(n, atLeast, 1)
	length = ceilDiv(d, n)
	return ceilDiv(d, length), length
}

// ceilDiv is a/b rounded up, for a ≥ 0; b under 1 counts as 1.
func ceilDiv(a, b int64) int64 {
	b = max(b, 1)
	return (a + b - 1) / b
}

// humanDuration says d the way the limit is told to a person: "6 hours",
// "90 minutes", "1 hour".
func humanDuration(d time.Duration) string {
	plural := func(n int64, unit string) string {
		if n == 1 {
			return "1 " + unit
		}
		return fmt.Sprintf("%d %ss", n, unit)
	}
	switch {
	case d%time.Hour == 0:
		return plural(int64(d/time.Hour), "hour")
	case d%time.Minute == 0:
		return plural(int64(d/time.Minute), "minute")
	default:
		return plural(int64(d/time.Second), "second")
	}
}
