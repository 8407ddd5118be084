package pipeline_test

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/job"
	"transcriber/internal/media/ffmpeg"
	"transcriber/internal/media/oggopus/oggtest"
	"transcriber/internal/pipeline"
)

// askedMedia is pieceMedia that plans a whole file when asked to, and
// notes what it was asked.
type askedMedia struct {
	pieceMedia
	asked []bool
}

func (m *askedMedia) PlanFor(pr ffmpeg.Probe, parallel bool) (ffmpeg.Plan, error) {
	m.asked = append(m.asked, parallel)
	if !parallel {
		return ffmpeg.Plan{Container: ffmpeg.ContainerOggOpus, Segments: []ffmpeg.Segment{{DurationMs: pr.DurationMs, Format: "mp3"}}}, nil
	}
	return m.pieceMedia.PlanFor(pr, true)
}

// Convert writes the segment's audio.
func (m *askedMedia) ConvertMono(ctx context.Context, input string, seg ffmpeg.Segment, w io.Writer) error {
	return m.Convert(ctx, input, seg, w)
}

func (m *askedMedia) Convert(_ context.Context, _ string, seg ffmpeg.Segment, w io.Writer) error {
	_, err := w.Write(oggtest.Synth(seg.DurationMs, 0))
	return err
}

// A recording is cut into pieces while the window before used at most half
// its requests and the pieces fit in the first half of the current one;
// past either it goes as one file, leaving the requests to the jobs that
// wait for them.
func TestPiecesOnlyWhileTheRequestWindowHasRoom(t *testing.T) {
	for _, tc := range []struct {
		name     string
		before   int64 // of the previous window's 71
		used     int64 // of the current window's 71
		segments int
	}{
		{"an empty window", 0, 0, 3},
		{"half the window less the pieces", 0, 35 - 3, 3},
		{"one more", 0, 35 - 2, 1},
		{"the window before half used", 35, 0, 3},
		{"the window before over half used", 36, 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newQuotaEnv(t)
			for w, n := range map[time.Time]int64{windowEnd.Add(-20 * time.Minute): tc.before, windowEnd.Add(-10 * time.Minute): tc.used} {
				if n == 0 {
					continue
				}
				_, ok, err := e.counters.Reserve(e.ctx, "speechkit_requests", w, n, 0)
				require.NoError(t, err)
				require.True(t, ok)
			}
			media := &askedMedia{pieceMedia: pieceMedia{durationMs: 15_000, planned: 3, cuts: []int64{5_000, 10_000}}}
			p := pipeline.New(pipeline.Deps{
				Store: e.st, Objects: &pieceObjects{}, Media: media, Recognizer: newFlightRecognizer(), Clock: e.clk, Log: quiet(),
				Sleep: func(_ context.Context, d time.Duration) error { e.clk.Advance(d); return nil },
			}, pipeline.Config{Counters: e.counters, RequestsPerHour: 500, InlineCheckMax: time.Nanosecond})
			j, err := e.st.Create(e.ctx, job.Draft{Source: job.SourceAPI, OwnerID: "o", Filename: "a.mp3", SizeBytes: 10})
			require.NoError(t, err)
			j, err = e.st.Claim(e.ctx, j.ID, job.Ingest)
			require.NoError(t, err)
			j.State = job.Created
			_, err = e.st.Save(e.ctx, j, job.Next{})
			require.NoError(t, err)

			require.NoError(t, p.Uploaded(e.ctx, job.SourceKey(j.ID)))
			got := e.get(t, j.ID)
			require.Equal(t, job.Transcribe, got.State, got.ErrorMessage)
			require.Len(t, got.Segments, tc.segments)
			if tc.segments == 1 {
				require.Equal(t, []bool{true, false}, media.asked, "planned in pieces, then whole")
			}
		})
	}
}
