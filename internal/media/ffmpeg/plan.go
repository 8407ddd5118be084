package ffmpeg

import (
	"fmt"
	"time"

	"transcriber/internal/errs"
)

// ContainerOggOpus is SpeechKit's name for what Convert and Split write.
const ContainerOggOpus = "OGG_OPUS"

// Plan is what to submit for a file.
type Plan struct {
	Container string // always ContainerOggOpus
	// Segments cover the recording in order: one for Convert, or the
	// outline Split moves each cut of to a quiet moment.
	Segments []Segment
}

// Segment is a piece of the recording.
type Segment struct {
	StartMs    int64 // in the source
	DurationMs int64 // 0 reads to the end
	// Format is the demuxer Probe found, so the source is read as probed;
	// empty detects among the accepted ones.
	Format string
}

// Plan decides from a Probe how the file is cut; it runs nothing. Every
// recording is converted, so what is submitted is cut at the planned length
// and counted packet by packet (oggopus), whatever its header says. Past
// ParallelFrom it is cut into ⌈length/PieceLength⌉ equal segments, at most
// MaxPieces, else ⌈length/SegmentLength⌉; none is over SegmentLength.
func (m *Media) Plan(p Probe) (Plan, error) { return m.PlanFor(p, true) }

// PlanFor without parallel cuts only where SegmentLength forces it: for
// results worked out per file (speakers, a summary).
func (m *Media) PlanFor(p Probe, parallel bool) (Plan, error) {
	format, ok := allowedDemuxer(p.Container)
	switch limit := m.cfg.MaxDuration.Milliseconds(); {
	case !ok:
		return Plan{}, wrap(ErrUnsupported, fmt.Errorf("format %q is not accepted", p.Container))
	case len(p.Audio) == 0:
		return Plan{}, wrap(ErrNoAudio, fmt.Errorf("no audio stream in %q", p.Container))
	case p.DurationMs <= 0:
		return Plan{}, errs.Wrap(fmt.Errorf("%q audio of %d ms", p.Container, p.DurationMs),
			ErrEmptyFile.Kind, ErrEmptyFile.Code, "the recording is empty")
	case p.DurationMs > limit:
		return Plan{}, errs.Wrap(fmt.Errorf("%d ms is over the limit of %d ms", p.DurationMs, limit),
			ErrTooLong.Kind, ErrTooLong.Code, "the recording is longer than "+humanDuration(m.cfg.MaxDuration))
	}

	n, length := m.pieces(p.DurationMs, parallel)
	segs := make([]Segment, 0, n)
	for i := int64(0); i < n; i++ {
		start := i * length
		segs = append(segs, Segment{StartMs: start, DurationMs: min(length, p.DurationMs-start), Format: format})
	}
	return Plan{Container: ContainerOggOpus, Segments: segs}, nil
}

// pieces is the count and length of segments (but the last) for d > 0 ms.
// The length is ⌈d/n⌉; for a few ms that can leave nothing for the last
// ones, so n is counted again from it.
func (m *Media) pieces(d int64, parallel bool) (n, length int64) {
	atLeast := ceilDiv(d, m.cfg.SegmentLength.Milliseconds())
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

// humanDuration says "6 hours", "90 minutes", "1 hour".
func humanDuration(d time.Duration) string {
	n, unit := int64(d/time.Second), "second"
	switch {
	case d%time.Hour == 0:
		n, unit = int64(d/time.Hour), "hour"
	case d%time.Minute == 0:
		n, unit = int64(d/time.Minute), "minute"
	}
	if n != 1 {
		unit += "s"
	}
	return fmt.Sprintf("%d %s", n, unit)
}
