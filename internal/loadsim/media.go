package loadsim

import (
	"bytes"
	"context"
	"io"
	"sync/atomic"
	"time"

	"transcriber/internal/media/ffmpeg"
)

// Mode is how a long recording is cut for recognition.
type Mode int

const (
	// OnePiece cuts only what SpeechKit cannot take in one file: a piece
	// per ffmpeg.DefaultSegmentLength (3 h 50 min).
	OnePiece Mode = iota
	// Pieces cuts as the service does: a recording longer than 10 minutes
	// into pieces of about 5 minutes, at most 24, recognized side by side.
	Pieces
)

func (m Mode) String() string {
	if m == Pieces {
		return "pieces"
	}
	return "one piece"
}

// planner is the plan the simulated media makes: ffmpeg's own
// (ffmpeg.Media.PlanFor with the shipped settings, which runs no binary);
// in OnePiece mode never in pieces, only where SegmentLength cuts.
func planner(m Mode) func(ffmpeg.Probe, bool) (ffmpeg.Plan, error) {
	media := ffmpeg.New(ffmpeg.Tools{}, ffmpeg.Config{})
	return func(p ffmpeg.Probe, parallel bool) (ffmpeg.Plan, error) {
		return media.PlanFor(p, parallel && m == Pieces)
	}
}

// levelShare is the level pass's time as a share of a conversion's: both
// of Split's passes take 1.13-1.16 times one conversion of the whole
// (BenchmarkSplit, docs/scale.md), so 0.15.
const levelShare = 0.15

// Media is a pipeline.Media that runs no binary. Probe finds what
// Objects.PutRecording stored; Plan is planner's; Convert and Split write
// a few bytes per piece that say how long it is (audioOf), at once,
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
	// probes and conversions count the calls, for tests.
	probes, conversions atomic.Int64
}

// Probe reports the recording Objects.PutRecording stored at input.
func (m *Media) Probe(ctx context.Context, input string) (ffmpeg.Probe, error) {
	m.probes.Add(1)
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
	m.conversions.Add(1)
	_, err := w.Write(audioOf(seg.DurationMs))
	return err
}

// ConvertMono spends the conversion's time, then writes the piece's
// marker: the pipeline converts a short recording into memory, on its own
// goroutine, and stores it whole.
func (m *Media) ConvertMono(ctx context.Context, input string, seg ffmpeg.Segment, w io.Writer) error {
	if err := m.sched.Sleep(ctx, m.convertTime(seg.DurationMs)); err != nil {
		return err
	}
	return m.Convert(ctx, input, seg, w)
}

// Split spends the level pass's time, then hands over each piece of plan,
// in order, as its audio (whose upload spends its conversion time).
func (m *Media) Split(ctx context.Context, _ string, plan ffmpeg.Plan, piece func(seg ffmpeg.Segment, audio io.Reader) error) error {
	if n := len(plan.Segments); n > 0 {
		last := plan.Segments[n-1]
		level := time.Duration(float64(m.convertTime(last.StartMs+last.DurationMs)) * levelShare)
		if err := m.sched.Sleep(ctx, level); err != nil {
			return err
		}
	}
	for _, seg := range plan.Segments {
		if err := piece(seg, bytes.NewReader(audioOf(seg.DurationMs))); err != nil {
			return err
		}
	}
	return nil
}

// convertTime is how long converting durationMs of audio takes.
func (m *Media) convertTime(durationMs int64) time.Duration {
	return time.Duration(float64(time.Duration(durationMs)*time.Millisecond) / m.Speed)
}
