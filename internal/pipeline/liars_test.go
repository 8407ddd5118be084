package pipeline_test

import (
	"bytes"
	"context"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/job"
	"transcriber/internal/media/ffmpeg"
	"transcriber/internal/media/oggopus/oggtest"
	"transcriber/internal/pipeline"
	"transcriber/internal/pipeline/admission"
	"transcriber/internal/speechkit"
	"transcriber/internal/spend"
)

// lyingMedia probes every source as saysMs long and converts it into
// holdsMs of audio: what a converter does with a file whose header lies
// (or whose timestamps do), were it to believe it. With pieces it plans
// two halves of saysMs and hands over two halves of holdsMs.
type lyingMedia struct {
	passMedia
	saysMs, holdsMs int64
	pieces          bool
}

func (m lyingMedia) Probe(context.Context, string) (ffmpeg.Probe, error) {
	return ffmpeg.Probe{Container: "mp3", DurationMs: m.saysMs, Audio: []ffmpeg.AudioStream{{Codec: "mp3", Channels: 1}}}, nil
}

func (m lyingMedia) PlanFor(pr ffmpeg.Probe, _ bool) (ffmpeg.Plan, error) {
	if !m.pieces {
		return ffmpeg.Plan{Container: "OGG_OPUS", Segments: []ffmpeg.Segment{{DurationMs: pr.DurationMs}}}, nil
	}
	half := pr.DurationMs / 2
	return ffmpeg.Plan{Container: "OGG_OPUS", Segments: []ffmpeg.Segment{{DurationMs: half}, {StartMs: half, DurationMs: pr.DurationMs - half}}}, nil
}

func (m lyingMedia) ConvertMono(ctx context.Context, input string, seg ffmpeg.Segment, w io.Writer) error {
	return m.Convert(ctx, input, seg, w)
}

func (m lyingMedia) Convert(_ context.Context, _ string, _ ffmpeg.Segment, w io.Writer) error {
	_, err := w.Write(oggtest.Synth(m.holdsMs, m.saysMs))
	return err
}

func (m lyingMedia) Split(_ context.Context, _ string, _ ffmpeg.Plan, piece func(ffmpeg.Segment, io.Reader) error) error {
	half := m.holdsMs / 2
	if err := piece(ffmpeg.Segment{DurationMs: m.saysMs / 2}, bytes.NewReader(oggtest.Synth(half, 0))); err != nil {
		return err
	}
	return piece(ffmpeg.Segment{StartMs: m.saysMs / 2, DurationMs: m.saysMs / 2}, bytes.NewReader(oggtest.Synth(m.holdsMs-half, 0)))
}

func (e *quotaEnv) lyingPipeline(rec pipeline.Recognizer, m pipeline.Media, l spend.Limits) *pipeline.Pipeline {
	return pipeline.New(pipeline.Deps{
		Store: e.st, Objects: presignObjects{}, Media: m, Recognizer: rec, Clock: e.clk, Log: quiet(),
		Sleep: func(_ context.Context, d time.Duration) error { e.clk.Advance(d); return nil },
	}, pipeline.Config{Counters: e.counters, Limits: l, InlineCheckMax: time.Nanosecond})
}

// A file that says 8 s and holds 20 minutes reserves 8 s; its audio is
// counted on the way to storage, and the conversion stops at the 8 s
// (and the second a piece) it may have: nothing is submitted, the job
// fails saying why, and its reservation goes back.
func TestAudioBeyondItsReservationIsNeverSubmitted(t *testing.T) {
	for _, pieces := range []bool{false, true} {
		t.Run(map[bool]string{false: "one piece", true: "two pieces"}[pieces], func(t *testing.T) {
			e := newQuotaEnv(t)
			rec := &submitRecognizer{}
			m := lyingMedia{saysMs: 8_000, holdsMs: 1_200_000, pieces: pieces}
			j := e.ingest(t, e.lyingPipeline(rec, m, spend.Limits{AudioPerDay: time.Minute}), "tok:a")
			require.Equal(t, job.Failed, j.State)
			require.Equal(t, admission.CodeOverReserved, j.ErrorCode)
			require.Contains(t, j.ErrorMessage, "more audio than")
			require.Zero(t, rec.count(), "nothing reached the recognizer")
			require.Zero(t, e.dayUsed(t, "tok:a"), "the reservation went back")
		})
	}
}

// Three such files under a day of 60 s: none is recognized, and the day
// is left as it was.
func TestLyingFilesDoNotAddUpPastTheDay(t *testing.T) {
	e := newQuotaEnv(t)
	rec := &submitRecognizer{}
	p := e.lyingPipeline(rec, lyingMedia{saysMs: 7_200, holdsMs: 1_200_000}, spend.Limits{AudioPerDay: time.Minute})
	for range 3 {
		require.Equal(t, admission.CodeOverReserved, e.ingest(t, p, "tok:a").ErrorCode)
	}
	require.Zero(t, rec.count())
	require.Zero(t, e.dayUsed(t, "tok:a"))
}

// A header that says more than the file holds reserves what it says;
// once converted, the job shows, bills and keeps reserved what its audio
// holds, and gives the rest back.
func TestWhatTheJobShowsIsWhatWasSent(t *testing.T) {
	e := newQuotaEnv(t)
	rec := &submitRecognizer{}
	p := e.lyingPipeline(rec, lyingMedia{saysMs: 50_000, holdsMs: 20_000}, spend.Limits{AudioPerDay: time.Minute})
	j := e.ingest(t, p, "tok:a")
	require.Equal(t, job.Transcribe, j.State)
	require.Equal(t, int64(20_000), j.DurationMs)
	require.Equal(t, int64(20_000), j.Segments[0].DurationMs)
	require.Equal(t, int64(20), j.ReservedSeconds)
	require.Equal(t, int64(20), e.dayUsed(t, "tok:a"), "30 s of the 50 reserved went back")
	require.Equal(t, int64(20), spend.JobBilledSeconds(j.Segments))
	require.Equal(t, 1, rec.count())
}

// The one check before submission holds whatever set the segments: a
// converted job whose segments are billed more than was reserved for it,
// by one second, is refused before anything is submitted; one billed
// exactly what was reserved goes.
func TestTheCheckBeforeSubmission(t *testing.T) {
	e := newQuotaEnv(t)
	rec := &submitRecognizer{}
	p := e.lyingPipeline(rec, nil, spend.Limits{})
	over := e.converted(t, 2) // 2 x 10 min, reserved 1,200 s
	over.Segments[1].DurationMs++
	within := e.converted(t, 2)
	for _, j := range []*job.Job{&over, &within} {
		c, err := e.st.Claim(e.ctx, j.ID, job.Ingest)
		require.NoError(t, err)
		c.Segments = j.Segments
		_, err = e.st.Save(e.ctx, c, job.Next{})
		require.NoError(t, err)
	}

	require.NoError(t, p.Uploaded(e.ctx, job.SourceKey(over.ID)))
	got := e.get(t, over.ID)
	require.Equal(t, job.Failed, got.State)
	require.Equal(t, admission.CodeOverReserved, got.ErrorCode)
	require.Zero(t, rec.count())

	require.NoError(t, p.Uploaded(e.ctx, job.SourceKey(within.ID)))
	require.Equal(t, job.Transcribe, e.get(t, within.ID).State)
	require.Equal(t, 2, rec.count())
}

// The synchronous door keeps the same bound: a fast job whose file says
// 8 s and holds 20 minutes is stopped before any request (by the meter
// while its audio is made, and again by the admission's check before a
// submission): neither door is asked, the job fails saying why, and its
// reservation goes back.
func TestASynchronousJobGetsNoMoreAudioThanWasReserved(t *testing.T) {
	e := newSyncEnv(t, 8_000, 1)
	e.media.holdsMs = 1_200_000
	j := e.accepted(t, job.Draft{Priority: job.PriorityFast})
	require.NoError(t, e.p.Uploaded(e.ctx, job.SourceKey(j.ID)))
	got := e.get(t, j.ID)
	require.Equal(t, job.Failed, got.State)
	require.Equal(t, admission.CodeOverReserved, got.ErrorCode)
	require.Zero(t, e.sk.SyncCallCount(), "nothing reached the synchronous door")
	require.Zero(t, e.sk.RecognizeCalls(), "nor the asynchronous one")
	require.Zero(t, e.dayUsed(t, "tok:a"), "the reservation went back")
}

// A voice note sent as it is keeps the bound too: an ingest retried
// after an earlier attempt reserved 3 s for the job (say, by a probe that
// read a lying header) finds 6 s in the file's packets, billed 15, and
// raises the reservation before anything is sent; where the day has no
// room for it, the job fails quota_exceeded and nothing reaches either
// door.
func TestAVoiceNoteSentAsItIsGetsNoMoreAudioThanWasReserved(t *testing.T) {
	for _, tc := range []struct {
		day   time.Duration
		state job.State
		code  string
	}{{10 * time.Second, job.Failed, spend.CodeQuotaExceeded}, {time.Hour, job.Done, ""}} {
		e := newSyncEnv(t, 6_000, 1, func(_ *speechkit.Config, c *pipeline.Config) { c.Limits.AudioPerDay = tc.day })
		j := e.uploaded(t, oggtest.Synth(6_000, 0))
		c, err := e.st.Claim(e.ctx, j.ID, job.Ingest)
		require.NoError(t, err)
		c.DurationMs, c.ReservedSeconds, c.ReservedDay = 3_000, 3, c.CreatedAt.UTC().Truncate(24*time.Hour)
		_, err = e.st.Save(e.ctx, c, job.Next{})
		require.NoError(t, err)

		require.NoError(t, e.p.Uploaded(e.ctx, job.SourceKey(j.ID)))
		got := e.get(t, j.ID)
		require.Equal(t, tc.state, got.State, "day %s: %s", tc.day, got.ErrorMessage)
		require.Equal(t, tc.code, got.ErrorCode)
		require.Zero(t, e.media.probes+e.media.mono, "it went the way of a voice note, as it is")
		require.Zero(t, e.sk.RecognizeCalls(), "never the asynchronous door")
		if tc.state == job.Failed {
			require.Zero(t, e.sk.SyncCallCount(), "nothing reached the synchronous door")
			continue
		}
		require.Equal(t, 1, e.sk.SyncCallCount())
		require.Equal(t, int64(15), got.ReservedSeconds, "raised to what was sent is billed")
		require.Equal(t, int64(12), e.dayUsed(t, "tok:a"), "the raise counted; the 3 s of the lost attempt never were")
	}
}
