package pipeline_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
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

// channelMedia is a source of one audio stream of the given channels,
// converted as one piece.
type channelMedia struct {
	pipeline.Media
	channels int
}

func (m channelMedia) Probe(context.Context, string) (ffmpeg.Probe, error) {
	return ffmpeg.Probe{Container: "ogg", DurationMs: 30_000,
		Audio: []ffmpeg.AudioStream{{Codec: "opus", Channels: m.channels, SampleRate: 48000}}}, nil
}

func (m channelMedia) PlanFor(pr ffmpeg.Probe, _ bool) (ffmpeg.Plan, error) {
	return ffmpeg.Plan{Container: "OGG_OPUS", Segments: []ffmpeg.Segment{{DurationMs: pr.DurationMs}}}, nil
}

func (m channelMedia) ConvertMono(ctx context.Context, input string, seg ffmpeg.Segment, w io.Writer) error {
	return m.Convert(ctx, input, seg, w)
}

func (channelMedia) Convert(_ context.Context, _ string, seg ffmpeg.Segment, w io.Writer) error {
	_, err := w.Write(oggtest.Synth(seg.DurationMs, 0))
	return err
}

// scriptedRecognizer records the requests and answers every recognition
// at once with result.
type scriptedRecognizer struct {
	mu       sync.Mutex
	requests []speechkit.Request
	result   transcript.Transcript
}

func (r *scriptedRecognizer) Submit(_ context.Context, req speechkit.Request) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests = append(r.requests, req)
	return fmt.Sprintf("op-%d", len(r.requests)), nil
}

func (r *scriptedRecognizer) Check(context.Context, string) (bool, error) { return true, nil }

func (r *scriptedRecognizer) Result(context.Context, string) (transcript.Transcript, error) {
	return r.result, nil
}

func (r *scriptedRecognizer) Delete(context.Context, string) error { return nil }

// featureObjects signs reads, names objects by URI and keeps what is put.
type featureObjects struct{ putObjects }

func (*featureObjects) PresignGet(_ context.Context, key string, _ time.Duration) (string, error) {
	return "https://storage.example/bucket/" + key + "?signed", nil
}

// runFeatures takes a job with the given options through ingest and its
// recognition, on audio of the given channels, and returns the job and
// the transcript stored for it.
func runFeatures(t *testing.T, d job.Draft, channels int, model string, rec *scriptedRecognizer) (job.Job, transcript.Transcript) {
	t.Helper()
	e := newQuotaEnv(t)
	objects := &featureObjects{}
	p := pipeline.New(pipeline.Deps{
		Store: e.st, Objects: objects, Media: channelMedia{channels: channels}, Recognizer: rec, Clock: e.clk, Log: quiet(),
		Sleep: func(_ context.Context, d time.Duration) error { e.clk.Advance(d); return nil },
	}, pipeline.Config{SummaryModel: model})
	d.Source, d.OwnerID, d.Filename, d.SizeBytes = job.SourceAPI, "o", "a.ogg", 10
	j, err := e.st.Create(e.ctx, d)
	require.NoError(t, err)
	j, err = e.st.Claim(e.ctx, j.ID, job.Ingest)
	require.NoError(t, err)
	j.State = job.Created
	_, err = e.st.Save(e.ctx, j, job.Next{})
	require.NoError(t, err)

	require.NoError(t, p.Uploaded(e.ctx, job.SourceKey(j.ID)))
	j = e.get(t, j.ID)
	require.Equal(t, job.Done, j.State, j.ErrorMessage)
	var tr transcript.Transcript
	require.NoError(t, json.Unmarshal(objects.put[job.ResultKey(j.ID)], &tr))
	return j, tr
}

// dialogue is what SpeechKit answers a labelled mono recognition: the
// speaker as the channel tag.
func dialogue() transcript.Transcript {
	return transcript.Transcript{Utterances: []transcript.Utterance{
		{Channel: 0, StartMs: 0, EndMs: 1000, Text: "алло", Normal: "Алло."},
		{Channel: 1, StartMs: 1200, EndMs: 2000, Text: "да", Normal: "Да."},
	}}
}

// Mono audio of a job asking for speakers is sent with speaker labeling,
// and SpeechKit's labels become the speakers, all on the one channel; the
// summary asked for is requested from the configured model with the
// instruction in the job's language, and stored with the transcript.
func TestMonoSpeakersAndASummaryReachTheRecognizerAndTheResult(t *testing.T) {
	rec := &scriptedRecognizer{result: dialogue()}
	rec.result.Summary = &transcript.Summary{Text: "Короткий разговор.", Usage: transcript.SummaryUsage{TotalTokens: 42}}
	j, tr := runFeatures(t, job.Draft{Speakers: true, Summary: true, Language: "en-US"}, 1, "gpt://f/yandexgpt-lite", rec)

	require.Len(t, rec.requests, 1)
	req := rec.requests[0]
	require.True(t, req.Speakers)
	require.Equal(t, &speechkit.SummaryRequest{ModelURI: "gpt://f/yandexgpt-lite", Instruction: speechkit.SummaryInstruction("en-US")}, req.Summary)

	require.Equal(t, job.Features{Speakers: true, Summary: true, Channels: 1}, j.Features)
	require.Equal(t, []int{1, 2}, []int{tr.Utterances[0].Speaker, tr.Utterances[1].Speaker})
	require.Equal(t, []int{0, 0}, []int{tr.Utterances[0].Channel, tr.Utterances[1].Channel}, "mono audio has one channel")
	require.Equal(t, rec.result.Summary, tr.Summary)
}

// Stereo audio keeps its channels apart: no labeling is asked for, and
// each channel is a speaker.
func TestStereoSpeakersAreTheChannels(t *testing.T) {
	rec := &scriptedRecognizer{result: dialogue()}
	j, tr := runFeatures(t, job.Draft{Speakers: true}, 2, "", rec)
	require.False(t, rec.requests[0].Speakers, "SpeechKit labels mono audio only")
	require.Nil(t, rec.requests[0].Summary)
	require.Equal(t, 2, j.Features.Channels)
	require.Equal(t, []int{1, 2}, []int{tr.Utterances[0].Speaker, tr.Utterances[1].Speaker})
	require.Equal(t, []int{0, 1}, []int{tr.Utterances[0].Channel, tr.Utterances[1].Channel})
}

// Without the options nothing changes: no labeling, no summary, no
// speakers in the result.
func TestWithoutOptionsNothingIsAsked(t *testing.T) {
	rec := &scriptedRecognizer{result: dialogue()}
	j, tr := runFeatures(t, job.Draft{}, 1, "gpt://f/yandexgpt-lite", rec)
	require.False(t, rec.requests[0].Speakers)
	require.Nil(t, rec.requests[0].Summary)
	require.Equal(t, job.Features{Channels: 1}, j.Features)
	require.Zero(t, tr.Utterances[1].Speaker)
	require.Equal(t, 1, tr.Utterances[1].Channel)
	require.Nil(t, tr.Summary)
}

// A summary that did not come leaves the job done, with the reason.
func TestAMissingSummaryLeavesTheJobDoneWithAReason(t *testing.T) {
	for name, c := range map[string]struct {
		model  string
		result transcript.Transcript
		why    string
	}{
		"the recognizer sent none":     {"gpt://f/m", dialogue(), "the recognizer returned no summary"},
		"no speech":                    {"gpt://f/m", transcript.Transcript{}, "there was no speech to summarize"},
		"no model on the installation": {"", dialogue(), "summaries are not set up on this installation"},
	} {
		t.Run(name, func(t *testing.T) {
			rec := &scriptedRecognizer{result: c.result}
			j, tr := runFeatures(t, job.Draft{Summary: true}, 1, c.model, rec)
			require.Equal(t, c.why, j.Features.SummaryMissing)
			require.False(t, j.Features.HasSummary())
			require.Nil(t, tr.Summary)
		})
	}
}
