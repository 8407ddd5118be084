package ffmpeg_test

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/media/ffmpeg"
	"transcriber/internal/media/mediatest"
	"transcriber/internal/media/oggopus"
)

// liars makes an MP3, a Matroska and an Ogg file that each hold a minute
// of audio and whose headers say 5, 20 and 5 seconds.
func liars(t *testing.T, tools ffmpeg.Tools) []mediatest.Liar {
	t.Helper()
	dir := t.TempDir()
	mp3, err := mediatest.LyingMP3(tools.FFmpeg, dir, "liar.mp3", 60)
	require.NoError(t, err)
	mkv, err := mediatest.LyingMatroska(tools.FFmpeg, dir, "liar.mkv", 60, 20)
	require.NoError(t, err)
	ogg, err := mediatest.LyingOgg(dir, "liar.ogg", 60_000, 5_000)
	require.NoError(t, err)
	return []mediatest.Liar{mp3, mkv, ogg}
}

// A header that states less than the file holds does not make the file
// shorter: Probe measures the audio and takes the larger length, and the
// conversion of the plan holds all of it, counted packet by packet. The
// measurement reads timestamps, which an Ogg file's granule positions
// set: there it finds more than the header but not all, and the
// conversion then holds no more than was planned (the pipeline's meter
// is what bounds such a file).
func TestAHeaderThatUnderstatesIsNotBelieved(t *testing.T) {
	tools := mustTools(t)
	m := ffmpeg.New(tools, ffmpeg.Config{})
	ctx := context.Background()
	for _, l := range liars(t, tools) {
		t.Run(l.Name, func(t *testing.T) {
			p, err := m.Probe(ctx, l.Path)
			require.NoError(t, err)
			require.Greater(t, p.DurationMs, 2*l.ClaimedMs, "the header said %d ms", l.ClaimedMs)
			timestamped := l.Name != "liar.ogg"
			if timestamped {
				require.InDelta(t, l.RealMs, p.DurationMs, 2_000, "the header said %d ms", l.ClaimedMs)
			}

			plan, err := m.Plan(p)
			require.NoError(t, err)
			require.Len(t, plan.Segments, 1)
			meter := &oggopus.Meter{}
			require.NoError(t, m.Convert(ctx, l.Path, plan.Segments[0], meter))
			require.NoError(t, meter.Close())
			if timestamped {
				require.InDelta(t, l.RealMs, meter.Ms(), 2_000)
			}
			require.LessOrEqual(t, meter.Ms(), plan.Segments[0].DurationMs+120, "never more than planned")
		})
	}
}

// Convert and both passes of Split stop at the plan's end, even when the
// file goes on: a plan made for less audio than the file holds gets no
// more than it planned.
func TestConversionsStopAtThePlansEnd(t *testing.T) {
	tools := mustTools(t)
	m := ffmpeg.New(tools, ffmpeg.Config{})
	ctx := context.Background()
	for _, l := range liars(t, tools) {
		t.Run(l.Name, func(t *testing.T) {
			format := map[string]string{"liar.mp3": "mp3", "liar.mkv": "matroska", "liar.ogg": "ogg"}[l.Name]
			meter := &oggopus.Meter{}
			require.NoError(t, m.Convert(ctx, l.Path, ffmpeg.Segment{DurationMs: 20_000, Format: format}, meter))
			require.InDelta(t, 20_000, meter.Ms(), 120)

			plan := ffmpeg.Plan{Container: ffmpeg.ContainerOggOpus, Segments: []ffmpeg.Segment{
				{StartMs: 0, DurationMs: 10_000, Format: format}, {StartMs: 10_000, DurationMs: 10_000, Format: format}}}
			var total, pieces int64
			err := m.Split(ctx, l.Path, plan, func(seg ffmpeg.Segment, audio io.Reader) error {
				pm := &oggopus.Meter{}
				if _, err := io.Copy(pm, audio); err != nil {
					return err
				}
				total += pm.Ms()
				pieces++
				return pm.Close()
			})
			require.NoError(t, err)
			require.LessOrEqual(t, total, 20_000+pieces*120, "the pieces hold %d ms of a 20 s plan", total)
			require.Greater(t, total, int64(19*time.Second/time.Millisecond))
		})
	}
}
