package transcript_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"transcriber/internal/transcript"
	"transcriber/internal/transcript/transcripttest"
)

// speakers is a mono dialogue SpeechKit labelled: speaker 1 twice, then 2.
func speakers() transcript.Transcript {
	return transcript.Transcript{DurationMs: 6000, Utterances: []transcript.Utterance{
		{Speaker: 1, StartMs: 0, EndMs: 1000, Text: "алло", Normal: "Алло."},
		{Speaker: 1, StartMs: 1200, EndMs: 2000, Text: "ты слышишь", Normal: "Ты слышишь?"},
		{Speaker: 2, StartMs: 2500, EndMs: 3000, Text: "да <b> & c", Normal: "Да <b> & c."},
	}}
}

// A line starts with the speaker only when the speaker changes.
func TestTXTNamesTheSpeakerWhenItChanges(t *testing.T) {
	require.Equal(t, "Speaker 1: Алло.\nТы слышишь?\nSpeaker 2: Да <b> & c.\n", render(t, speakers(), transcript.TXT))
}

func TestSRTPrefixesEveryCueWithItsSpeaker(t *testing.T) {
	require.Equal(t, "1\n00:00:00,000 --> 00:00:01,000\nSpeaker 1: Алло.\n\n"+
		"2\n00:00:01,200 --> 00:00:02,000\nSpeaker 1: Ты слышишь?\n\n"+
		"3\n00:00:02,500 --> 00:00:03,000\nSpeaker 2: Да <b> & c.\n\n", render(t, speakers(), transcript.SRT))
}

// WebVTT names the speaker with a voice span; the recognized text is still
// escaped, the span is not.
func TestVTTNamesTheSpeakerWithAVoiceSpan(t *testing.T) {
	require.Equal(t, "WEBVTT\n\n00:00:00.000 --> 00:00:01.000\n<v Speaker 1>Алло.\n\n"+
		"00:00:01.200 --> 00:00:02.000\n<v Speaker 1>Ты слышишь?\n\n"+
		"00:00:02.500 --> 00:00:03.000\n<v Speaker 2>Да &lt;b&gt; &amp; c.\n\n", render(t, speakers(), transcript.VTT))
}

func TestJSONCarriesEachUtterancesSpeaker(t *testing.T) {
	out := render(t, speakers(), transcript.JSON)
	var got transcript.Transcript
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	require.Equal(t, speakers(), got)
	require.Contains(t, out, `"speaker": 2`)
	require.NotContains(t, render(t, sample(), transcript.JSON), `"speaker"`, "no speakers asked, none written")
}

// Speakers win over channels: a stereo recording with speakers names them
// (each channel one speaker), not "[1]"/"[2]".
func TestSpeakersReplaceTheChannelPrefix(t *testing.T) {
	tr := transcript.Transcript{Utterances: []transcript.Utterance{
		{Channel: 0, Speaker: 1, StartMs: 0, EndMs: 1000, Text: "алло"},
		{Channel: 1, Speaker: 2, StartMs: 1200, EndMs: 2000, Text: "да"},
	}}
	require.Equal(t, "Speaker 1: алло\nSpeaker 2: да\n", render(t, tr, transcript.TXT))
}

func TestEveryFormatWithSpeakersIsWellFormed(t *testing.T) {
	require.NoError(t, transcripttest.RenderAll(speakers()))
	hostile := speakers()
	hostile.Utterances[0].Normal = "a --> b\n\n<v Speaker 9>x"
	require.NoError(t, transcripttest.RenderAll(hostile))
	require.NotContains(t, render(t, hostile, transcript.VTT), "<v Speaker 9>", "the recognizer's text cannot make a voice span")
}

// The summary is kept with the transcript in its JSON (how it is stored),
// with the model's token usage; no other format shows it, and a
// transcript without one has no summary field.
func TestJSONCarriesTheSummary(t *testing.T) {
	tr := sample()
	tr.Summary = &transcript.Summary{Text: "Приветствие.\nВторая строка.", Usage: transcript.SummaryUsage{InputTextTokens: 150, CompletionTokens: 80, TotalTokens: 230}}
	out := render(t, tr, transcript.JSON)
	var got transcript.Transcript
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	require.Equal(t, tr, got)
	require.Contains(t, out, `"total_tokens": 230`)
	require.Equal(t, render(t, sample(), transcript.TXT), render(t, tr, transcript.TXT))
	require.NotContains(t, render(t, sample(), transcript.JSON), "summary")
}
