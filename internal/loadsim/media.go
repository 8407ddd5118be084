package loadsim

import (
	"context"
	"io"
	"strings"
	"time"

	"transcriber/internal/media/ffmpeg"
)

// Mode is how a long recording is cut for recognition.
type Mode int

const (
	// OnePiece cuts only what SpeechKit cannot take in one file: a piece
	// per ffmpeg.DefaultSegmentLength (3 h 50 min).
	OnePiece Mode = iota
	// Pieces cuts a recording longer than 10 minutes into pieces of about
	// 5 minutes, at most 12, recognized side by side.
	Pieces
)

func (m Mode) String() string {
	if m == Pieces {
		return "pieces"
	}
	return "one piece"
}

// Cutting is the rule a mode cuts by.
type Cutting struct {
	SegmentLength time.Duration // no piece is longer (SpeechKit's 4 h per file, with a margin)
	PieceLength   time.Duration // the length pieces aim at; 0 cuts only by SegmentLength
	ParallelFrom  time.Duration // recordings longer than this are cut into pieces of PieceLength
	MaxPieces     int           // at most this many pieces; a longer recording gets longer ones
}

// Cutting returns the rule of mode m.
func (m Mode) Cutting() Cutting {
	c := Cutting{SegmentLength: ffmpeg.DefaultSegmentLength}
	if m == Pieces {
		c.PieceLength, c.ParallelFrom, c.MaxPieces = ffmpeg.DefaultPieceLength, ffmpeg.DefaultParallelFrom, ffmpeg.DefaultMaxPieces
	}
	return c
}

// Pieces is how many pieces a recording of durationMs is cut into: a
// recording over ParallelFrom gets one per PieceLength, at most MaxPieces;
// none is longer than SegmentLength.
func (c Cutting) Pieces(durationMs int64) int {
	n := ceilDiv(durationMs, c.SegmentLength.Milliseconds())
	if c.PieceLength > 0 && durationMs > c.ParallelFrom.Milliseconds() {
		n = max(n, min(ceilDiv(durationMs, c.PieceLength.Milliseconds()), int64(c.MaxPieces)))
	}
	return int(max(n, 1))
}

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

// planner is the plan the simulated media makes: ffmpeg's own
// (ffmpeg.Media.PlanFor, which runs no binary), with c's cutting; without
// a PieceLength, only SegmentLength cuts.
func planner(c Cutting) func(ffmpeg.Probe, bool) (ffmpeg.Plan, error) {
	media := ffmpeg.New(ffmpeg.Tools{}, ffmpeg.Config{SegmentLength: c.SegmentLength, PieceLength: c.PieceLength,
		ParallelFrom: c.ParallelFrom, MaxPieces: c.MaxPieces})
	return func(p ffmpeg.Probe, parallel bool) (ffmpeg.Plan, error) {
		return media.PlanFor(p, parallel && c.PieceLength > 0)
	}
}

// Media is a pipeline.Media that runs no binary. Probe finds what
// Objects.PutRecording stored; Plan is planner's; Convert and Split write
// a few bytes per piece that say how long it is (audioMarker), at once,
// and the conversion's time is spent when those bytes reach storage
// (Objects.Put), at Speed times real time.
type Media struct {
	sched   *Sched
	objects *Objects
	plan    func(ffmpeg.Probe, bool) (ffmpeg.Plan, error)
	// ProbeTime is how long a probe takes.
	ProbeTime time.Duration
	// Speed is how many times faster than real time audio converts.
	Speed float64
}

// Probe reports the recording Objects.PutRecording stored at input.
func (m *Media) Probe(ctx context.Context, input string) (ffmpeg.Probe, error) {
	if err := m.sched.Sleep(ctx, m.ProbeTime); err != nil {
		return ffmpeg.Probe{}, err
	}
	ob, ok := m.objects.get(keyOf(input))
	if !ok {
		return ffmpeg.Probe{}, ffmpeg.ErrSourceUnavailable
	}
	rate := 48000
	if ob.codec == "aac" {
		rate = 16000
	}
	return ffmpeg.Probe{Container: ob.container, DurationMs: ob.durationMs,
		Audio: []ffmpeg.AudioStream{{Codec: ob.codec, Channels: 1, SampleRate: rate}}}, nil
}

// Plan cuts the recording as the simulation's mode says.
func (m *Media) PlanFor(p ffmpeg.Probe, parallel bool) (ffmpeg.Plan, error) {
	return m.plan(p, parallel)
}

// Convert writes the piece's marker.
func (m *Media) Convert(_ context.Context, _ string, seg ffmpeg.Segment, w io.Writer) error {
	_, err := io.WriteString(w, audioMarker(seg.DurationMs))
	return err
}

// Split hands over each piece of plan, in order, as its marker.
func (m *Media) Split(_ context.Context, _ string, plan ffmpeg.Plan, piece func(seg ffmpeg.Segment, audio io.Reader) error) error {
	for _, seg := range plan.Segments {
		if err := piece(seg, strings.NewReader(audioMarker(seg.DurationMs))); err != nil {
			return err
		}
	}
	return nil
}

// convertTime is how long converting durationMs of audio takes.
func (m *Media) convertTime(durationMs int64) time.Duration {
	return time.Duration(float64(time.Duration(durationMs)*time.Millisecond) / m.Speed)
}
