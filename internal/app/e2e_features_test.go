package app_test

import (
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	stt "github.com/yandex-cloud/go-genproto/yandex/cloud/ai/stt/v3"

	"transcriber/internal/app"
	"transcriber/internal/speechkit"
	"transcriber/internal/speechkit/speechkittest"
)

const summaryModel = "gpt://b1gfolder/yandexgpt-lite/latest"

func withSummaryModel(c *app.Config) { c.Pipeline.SummaryModel = summaryModel }

type featureJob struct {
	apiJob
	Options *struct {
		Speakers bool `json:"speakers"`
		Summary  bool `json:"summary"`
	} `json:"options"`
	Summary        map[string]string `json:"summary"`
	SummaryMissing string            `json:"summary_missing"`
}

// runJob makes a job with body's options for the fixture file, uploads it,
// and runs ingest and a poll; it returns the job as the API shows it.
func (st *stack) runJob(c *client, file, options string) featureJob {
	t := st.t
	t.Helper()
	audio, err := os.ReadFile(file)
	require.NoError(t, err)
	var j apiJob
	status, body, _ := c.call(http.MethodPost, "/v1/jobs", `{"filename":"a.ogg","size_bytes":`+itoa(len(audio))+options+`}`, &j)
	require.Equal(t, http.StatusCreated, status, body)
	put(t, j, audio)
	st.ingest(st.nextEvent())
	st.poll()
	var got featureJob
	status, body, _ = c.call(http.MethodGet, "/v1/jobs/"+j.ID, "", &got)
	require.Equal(t, http.StatusOK, status, body)
	require.Equal(t, "done", got.State, body)
	return got
}

// A mono recording whose job asks for speakers and a summary: both options
// reach RecognizeFile as SpeechKit's own, SpeechKit's two labelled speakers
// come out in every format, and the summary is served as text and as JSON
// with the model's token usage, linked from the job's view.
func TestSpeakersAndASummaryEndToEnd(t *testing.T) {
	st := newStack(t, withSummaryModel)
	c := st.client()
	got := st.runJob(c, fixtures(t)["voice.ogg"], `,"language":"en-US","speakers":true,"summary":true`)

	reqs := st.sk.Requests()
	require.Len(t, reqs, 1)
	require.Equal(t, stt.SpeakerLabelingOptions_SPEAKER_LABELING_ENABLED, reqs[0].GetSpeakerLabeling().GetSpeakerLabeling())
	require.Equal(t, summaryModel, reqs[0].GetSummarization().GetModelUri())
	require.Equal(t, speechkit.SummaryInstruction("en-US"), reqs[0].GetSummarization().GetProperties()[0].GetInstruction())

	require.NotNil(t, got.Options)
	require.True(t, got.Options.Speakers && got.Options.Summary)
	require.Empty(t, got.SummaryMissing)
	want := map[string][]string{
		"txt":  {"Speaker 1: Привет мир.\nSpeaker 2: И тебе привет.\n"},
		"srt":  {"Speaker 1: Привет мир.", "Speaker 2: И тебе привет."},
		"vtt":  {"<v Speaker 1>Привет мир.", "<v Speaker 2>И тебе привет."},
		"json": {`"speaker": 1`, `"speaker": 2`},
	}
	for f, link := range got.Transcript {
		status, body, _ := c.call(http.MethodGet, link, "", nil)
		require.Equal(t, http.StatusOK, status, "%s: %s", f, body)
		for _, w := range want[f] {
			require.Contains(t, body, w, f)
		}
	}

	require.Equal(t, "/v1/jobs/"+got.ID+"/summary", got.Summary["txt"])
	status, body, hdr := c.call(http.MethodGet, got.Summary["txt"], "", nil)
	require.Equal(t, http.StatusOK, status, body)
	require.True(t, strings.HasPrefix(hdr.Get("Content-Type"), "text/plain"), hdr.Get("Content-Type"))
	require.Equal(t, speechkittest.FakeSummary.Text+"\n", body)

	var sum struct {
		Text  string `json:"text"`
		Usage struct {
			Input      int64 `json:"input_text_tokens"`
			Completion int64 `json:"completion_tokens"`
			Total      int64 `json:"total_tokens"`
		} `json:"usage"`
	}
	status, body, _ = c.call(http.MethodGet, got.Summary["json"], "", &sum)
	require.Equal(t, http.StatusOK, status, body)
	require.Equal(t, speechkittest.FakeSummary.Text, sum.Text)
	require.Equal(t, int64(150), sum.Usage.Input)
	require.Equal(t, int64(80), sum.Usage.Completion)
	require.Equal(t, int64(230), sum.Usage.Total)
}

// A stereo recording keeps its channels apart: no speaker labeling is
// asked for, and the channel is the speaker.
func TestStereoSpeakersAreChannelsEndToEnd(t *testing.T) {
	st := newStack(t)
	c := st.client()
	stereo := fixture(t, "stereo.ogg", "-f", "lavfi", "-i", "sine=frequency=440:duration=4:sample_rate=48000",
		"-ac", "2", "-c:a", "libopus", "-b:a", "32k")
	got := st.runJob(c, stereo, `,"speakers":true`)
	require.Nil(t, st.sk.Requests()[0].GetSpeakerLabeling())
	status, body, _ := c.call(http.MethodGet, got.Transcript["vtt"], "", nil)
	require.Equal(t, http.StatusOK, status, body)
	require.Contains(t, body, "<v Speaker 1>Привет мир.")
}

// A summary SpeechKit did not return leaves the job done: the view has no
// summary link and says why, and the summary route answers 404.
func TestAMissingSummaryEndToEnd(t *testing.T) {
	st := newStack(t, withSummaryModel)
	st.sk.Script(func(*stt.RecognizeFileRequest) speechkittest.Plan { return speechkittest.DefaultPlan() })
	c := st.client()
	got := st.runJob(c, fixtures(t)["voice.ogg"], `,"summary":true`)
	require.NotNil(t, st.sk.Requests()[0].GetSummarization(), "it was asked for")
	require.Nil(t, got.Summary)
	require.Equal(t, "the recognizer returned no summary", got.SummaryMissing)
	status, body, _ := c.call(http.MethodGet, "/v1/jobs/"+got.ID+"/summary", "", nil)
	require.Equal(t, http.StatusNotFound, status, body)
	require.Contains(t, body, `"no_summary"`)
	require.Len(t, got.Transcript, 4, "the transcript is there")
}

// Without the options nothing changes: neither is sent, the view has no
// options, the transcript names no speaker, and there is no summary.
func TestNoOptionsNoChangeEndToEnd(t *testing.T) {
	st := newStack(t, withSummaryModel)
	c := st.client()
	got := st.runJob(c, fixtures(t)["voice.ogg"], "")
	require.Nil(t, st.sk.Requests()[0].GetSpeakerLabeling())
	require.Nil(t, st.sk.Requests()[0].GetSummarization())
	require.Nil(t, got.Options)
	require.Nil(t, got.Summary)
	require.Empty(t, got.SummaryMissing)
	status, body, _ := c.call(http.MethodGet, got.Transcript["txt"], "", nil)
	require.Equal(t, http.StatusOK, status, body)
	require.Equal(t, "Привет мир.\n", body)
	status, _, _ = c.call(http.MethodGet, "/v1/jobs/"+got.ID+"/summary", "", nil)
	require.Equal(t, http.StatusNotFound, status)
}

// Where no summary model is configured, "summary": true is refused at
// creation, before any job exists.
func TestASummaryWithoutAModelIsRefused(t *testing.T) {
	st := newStack(t)
	c := st.client()
	status, body, _ := c.call(http.MethodPost, "/v1/jobs", `{"filename":"a.ogg","size_bytes":10,"summary":true}`, nil)
	require.Equal(t, http.StatusBadRequest, status, body)
	var e struct{ Error struct{ Code string } }
	require.NoError(t, json.Unmarshal([]byte(body), &e))
	require.Equal(t, "summary_unavailable", e.Error.Code)
}
