package loadsim

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/media/ffmpeg"
)

func m4a(d time.Duration) ffmpeg.Probe {
	return ffmpeg.Probe{Container: "mov,mp4,m4a,3gp,3g2,mj2", DurationMs: d.Milliseconds(),
		Audio: []ffmpeg.AudioStream{{Codec: "aac", Channels: 1, SampleRate: 16000}}}
}

// requireCovers checks that the segments follow each other from 0 to the
// recording's end.
func requireCovers(t *testing.T, segs []ffmpeg.Segment, d time.Duration) {
	t.Helper()
	var at int64
	for _, sg := range segs {
		require.Equal(t, at, sg.StartMs)
		require.Positive(t, sg.DurationMs)
		at += sg.DurationMs
	}
	require.Equal(t, d.Milliseconds(), at)
}

func TestThePlannerCutsAsItsModeSays(t *testing.T) {
	pieces, one := planner(Pieces), planner(OnePiece)

	plan, err := pieces(m4a(11*time.Minute+time.Millisecond), true)
	require.NoError(t, err)
	require.Len(t, plan.Segments, 3)
	require.Equal(t, ffmpeg.ContainerOggOpus, plan.Container)
	requireCovers(t, plan.Segments, 11*time.Minute+time.Millisecond)
	require.Equal(t, "mov", plan.Segments[0].Format, "read as what was probed")

	voice := ffmpeg.Probe{Container: "ogg", DurationMs: 30_000, Audio: []ffmpeg.AudioStream{{Codec: "opus", Channels: 1, SampleRate: 48000}}}
	plan, err = pieces(voice, true)
	require.NoError(t, err)
	require.Equal(t, ffmpeg.ContainerOggOpus, plan.Container, "a voice note is converted too")
	require.Len(t, plan.Segments, 1)

	plan, err = one(m4a(6*time.Hour), true)
	require.NoError(t, err)
	require.Equal(t, []int64{(3 * time.Hour).Milliseconds(), (3 * time.Hour).Milliseconds()},
		[]int64{plan.Segments[0].DurationMs, plan.Segments[1].DurationMs}, "in equal halves, none over SEGMENT_LENGTH")
	requireCovers(t, plan.Segments, 6*time.Hour)
	plan, err = pieces(m4a(6*time.Hour), false)
	require.NoError(t, err)
	require.Len(t, plan.Segments, 2, "a job that asks for speakers or a summary keeps its pieces long")

	_, err = pieces(m4a(7*time.Hour), true)
	require.ErrorIs(t, err, ffmpeg.ErrTooLong, "the adapter's own checks hold")
}

// Converted audio costs its conversion time when it reaches storage, on
// the goroutine that waits for the upload; Split hands over each piece in
// order, and stops at the first the caller refuses.
func TestConversionTimeIsSpentInTheUpload(t *testing.T) {
	s := NewSched(t0)
	m := &Media{sched: s, Speed: 95}
	o := NewObjects(s, m)
	m.objects = o
	ctx := context.Background()
	var seen []int64
	errStop := errors.New("stop")
	var splitErr error
	s.Go(func() {
		pr, pw := io.Pipe()
		go func() {
			_ = pw.CloseWithError(m.Convert(ctx, "", ffmpeg.Segment{DurationMs: (95 * time.Minute).Milliseconds()}, pw))
		}()
		_, err := o.Upload(ctx, "audio/j/000.ogg", pr, "audio/ogg")
		require.NoError(t, err)
		require.Equal(t, t0.Add(time.Minute), s.Now(), "95 minutes convert in one")

		plan := ffmpeg.Plan{Segments: []ffmpeg.Segment{{DurationMs: 1000}, {StartMs: 1000, DurationMs: 2000}, {StartMs: 3000, DurationMs: 500}}}
		splitErr = m.Split(ctx, "", plan, func(seg ffmpeg.Segment, audio io.Reader) error {
			body, err := io.ReadAll(audio)
			require.NoError(t, err)
			ms, ok := audioLength(body)
			require.True(t, ok)
			require.Equal(t, seg.DurationMs, ms)
			seen = append(seen, seg.StartMs)
			if len(seen) == 2 {
				return errStop
			}
			return nil
		})
	})
	<-s.Idle()
	require.ErrorIs(t, splitErr, errStop)
	require.Equal(t, []int64{0, 1000}, seen)
	ob, ok := o.get("audio/j/000.ogg")
	require.True(t, ok)
	require.Equal(t, (95 * time.Minute).Milliseconds(), ob.durationMs, "the recognizer learns the piece's length")
}
