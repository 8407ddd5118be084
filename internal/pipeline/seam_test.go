package pipeline_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/job"
	"transcriber/internal/media/ffmpeg"
	"transcriber/internal/media/oggopus/oggtest"
	"transcriber/internal/pipeline"
	"transcriber/internal/speechkit"
	"transcriber/internal/transcript"
)

// pieceMedia is a recording of durationMs that plans equal pieces and
// splits it at cuts, its quiet moments, which are not where the plan put
// them: the pipeline must take the pieces' real places from Split.
type pieceMedia struct {
	durationMs int64
	planned    int
	cuts       []int64
}

func (m pieceMedia) Probe(context.Context, string) (ffmpeg.Probe, error) {
	return ffmpeg.Probe{Container: "mp3", DurationMs: m.durationMs,
		Audio: []ffmpeg.AudioStream{{Codec: "mp3", Channels: 1, SampleRate: 44100}}}, nil
}

func (m pieceMedia) PlanFor(pr ffmpeg.Probe, parallel bool) (ffmpeg.Plan, error) {
	if !parallel {
		panic("a job without speakers or a summary is planned in pieces")
	}
	plan := ffmpeg.Plan{Container: ffmpeg.ContainerOggOpus}
	each := pr.DurationMs / int64(m.planned)
	for i := range m.planned {
		plan.Segments = append(plan.Segments, ffmpeg.Segment{StartMs: int64(i) * each, DurationMs: each, Format: "mp3"})
	}
	plan.Segments[m.planned-1].DurationMs = pr.DurationMs - int64(m.planned-1)*each
	return plan, nil
}

func (pieceMedia) ConvertMono(context.Context, string, ffmpeg.Segment, io.Writer) error {
	panic("a recording of several pieces is split, not converted piece by piece")
}

func (pieceMedia) Convert(context.Context, string, ffmpeg.Segment, io.Writer) error {
	panic("a recording of several pieces is split, not converted piece by piece")
}

func (m pieceMedia) Split(_ context.Context, _ string, _ ffmpeg.Plan, piece func(ffmpeg.Segment, io.Reader) error) error {
	starts := append([]int64{0}, m.cuts...)
	for i, start := range starts {
		end := m.durationMs
		if i+1 < len(starts) {
			end = starts[i+1]
		}
		if err := piece(ffmpeg.Segment{StartMs: start, DurationMs: end - start, Format: "mp3"}, bytes.NewReader(oggtest.Synth(end-start, 0))); err != nil {
			return err
		}
	}
	return nil
}

// pieceObjects takes uploads too.
type pieceObjects struct {
	featureObjects
	mu       sync.Mutex
	uploaded []string
}

func (o *pieceObjects) Upload(_ context.Context, key string, r io.Reader, _ string) (int64, error) {
	n, err := io.Copy(io.Discard, r)
	o.mu.Lock()
	defer o.mu.Unlock()
	o.uploaded = append(o.uploaded, key)
	return n, err
}

// pieceRecognizer answers each piece, known by its audio's object, with
// its script, at the first check.
type pieceRecognizer struct {
	mu      sync.Mutex
	byOp    map[string]transcript.Transcript
	script  map[string]transcript.Transcript // by object key
	objects interface{ URI(string) string }
}

func (r *pieceRecognizer) Submit(_ context.Context, req speechkit.Request) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for key, tr := range r.script {
		if r.objects.URI(key) == req.URI {
			op := "op-" + key
			r.byOp[op] = tr
			return op, nil
		}
	}
	panic("a submission of an unknown object: " + req.URI)
}

func (r *pieceRecognizer) Check(context.Context, string) (bool, error) { return true, nil }

func (r *pieceRecognizer) Result(_ context.Context, op string) (transcript.Transcript, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.byOp[op], nil
}

func (r *pieceRecognizer) Delete(context.Context, string) error { return nil }

func words(ws ...transcript.Word) transcript.Utterance {
	u := transcript.Utterance{StartMs: ws[0].StartMs, EndMs: ws[len(ws)-1].EndMs}
	var texts []string
	for _, w := range ws {
		texts = append(texts, w.Text)
	}
	u.Text = strings.Join(texts, " ")
	u.Normal = u.Text
	u.Words = ws
	return u
}

// A recording of 3 pieces, cut at 5.2 s and 9.7 s (the plan said 5 and
// 10): the words on either side of each cut touch it, one piece's last
// word is timed 40 ms past its end, and the next piece's first word
// starts at its very beginning. Every word comes back once, in order, at
// its place in the whole recording, and no word ends after the next one
// starts.
func TestPiecesAreStitchedAtTheirRealPlacesWithNoWordLostOrDoubled(t *testing.T) {
	e := newQuotaEnv(t)
	objects := &pieceObjects{}
	media := pieceMedia{durationMs: 15_000, planned: 3, cuts: []int64{5_200, 9_700}}
	p := pipeline.New(pipeline.Deps{
		Store: e.st, Objects: objects, Media: media, Recognizer: nil, Clock: e.clk, Log: quiet(),
		Sleep: func(_ context.Context, d time.Duration) error { e.clk.Advance(d); return nil },
	}, pipeline.Config{})
	j, err := e.st.Create(e.ctx, job.Draft{Source: job.SourceAPI, OwnerID: "o", Filename: "a.mp3", SizeBytes: 10})
	require.NoError(t, err)
	rec := &pieceRecognizer{byOp: map[string]transcript.Transcript{}, objects: objects, script: map[string]transcript.Transcript{
		job.AudioKey(j.ID, 0): {Utterances: []transcript.Utterance{
			words(transcript.Word{Text: "one", StartMs: 300, EndMs: 800}, transcript.Word{Text: "two", StartMs: 4_700, EndMs: 5_200}),
		}},
		job.AudioKey(j.ID, 1): {Utterances: []transcript.Utterance{
			words(transcript.Word{Text: "three", StartMs: 0, EndMs: 400}),
			words(transcript.Word{Text: "four", StartMs: 4_100, EndMs: 4_540}), // 40 ms past the piece's 4.5 s
		}},
		job.AudioKey(j.ID, 2): {Utterances: []transcript.Utterance{
			words(transcript.Word{Text: "five", StartMs: 0, EndMs: 350}, transcript.Word{Text: "six", StartMs: 4_900, EndMs: 5_300}),
		}},
	}}
	p.Recognizer = rec
	j, err = e.st.Claim(e.ctx, j.ID, job.Ingest)
	require.NoError(t, err)
	j.State = job.Created
	_, err = e.st.Save(e.ctx, j, job.Next{})
	require.NoError(t, err)

	require.NoError(t, p.Uploaded(e.ctx, job.SourceKey(j.ID)))
	for got := e.get(t, j.ID); got.State != job.Done; got = e.get(t, j.ID) {
		require.False(t, got.State.Terminal(), "%s: %s", got.State, got.ErrorMessage)
		e.clk.Set(got.NextRunAt)
		_, err := p.Poll(e.ctx)
		require.NoError(t, err)
	}
	done := e.get(t, j.ID)
	require.Len(t, done.Segments, 3)
	for i, want := range [][2]int64{{0, 5_200}, {5_200, 4_500}, {9_700, 5_300}} {
		require.Equal(t, want, [2]int64{done.Segments[i].StartMs, done.Segments[i].DurationMs}, "piece %d is where Split cut it", i)
		require.Equal(t, job.AudioKey(j.ID, i), done.Segments[i].AudioKey)
	}
	require.Equal(t, []string{job.AudioKey(j.ID, 0), job.AudioKey(j.ID, 1), job.AudioKey(j.ID, 2)}, objects.uploaded)

	var tr transcript.Transcript
	require.NoError(t, json.Unmarshal(objects.put[job.ResultKey(j.ID)], &tr))
	var got []transcript.Word
	for _, u := range tr.Utterances {
		got = append(got, u.Words...)
	}
	require.Equal(t, []transcript.Word{
		{Text: "one", StartMs: 300, EndMs: 800},
		{Text: "two", StartMs: 4_700, EndMs: 5_200},
		{Text: "three", StartMs: 5_200, EndMs: 5_600},
		{Text: "four", StartMs: 9_300, EndMs: 9_700}, // held within its piece
		{Text: "five", StartMs: 9_700, EndMs: 10_050},
		{Text: "six", StartMs: 14_600, EndMs: 15_000},
	}, got)
	for i := 1; i < len(got); i++ {
		require.LessOrEqual(t, got[i-1].EndMs, got[i].StartMs, "%q ends after %q starts", got[i-1].Text, got[i].Text)
	}
	require.Equal(t, int64(15_000), tr.DurationMs)
}
