package transcript_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"transcriber/internal/transcript"
	"transcriber/internal/transcript/transcripttest"
)

// A synchronous recognition's text becomes one utterance over the whole
// audio: txt is the text, srt and vtt one cue from 0 to the audio's end
// (even past the 7 s a cue of an utterance with words is cut at: there
// are no words to cut it by), json that one utterance with no words.
func TestFromTextRendersOneUtteranceSpanningTheAudio(t *testing.T) {
	tr := transcript.FromText("Привет, это голосовое сообщение на 12 секунд.", 12_345)
	tr.Language, tr.BilledSeconds = "ru-RU", 15

	require.Equal(t, "Привет, это голосовое сообщение на 12 секунд.\n", render(t, tr, transcript.TXT))
	require.Equal(t, "1\n00:00:00,000 --> 00:00:12,345\nПривет, это голосовое сообщение на 12 секунд.\n\n",
		render(t, tr, transcript.SRT))
	require.Equal(t, "WEBVTT\n\n00:00:00.000 --> 00:00:12.345\nПривет, это голосовое сообщение на 12 секунд.\n\n",
		render(t, tr, transcript.VTT))

	out := render(t, tr, transcript.JSON)
	var got map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	require.Equal(t, float64(12_345), got["duration_ms"])
	require.Equal(t, float64(15), got["billed_seconds"])
	utts, ok := got["utterances"].([]any)
	require.True(t, ok)
	require.Len(t, utts, 1)
	u := utts[0].(map[string]any)
	require.Equal(t, float64(0), u["start_ms"])
	require.Equal(t, float64(12_345), u["end_ms"])
	require.Equal(t, float64(0), u["channel"])
	require.Equal(t, "Привет, это голосовое сообщение на 12 секунд.", u["text"])
	require.Equal(t, "Привет, это голосовое сообщение на 12 секунд.", u["normalized"])
	require.NotContains(t, u, "words", "the synchronous API gives no word timings")
	require.NotContains(t, u, "speaker")

	var back transcript.Transcript
	require.NoError(t, json.Unmarshal([]byte(out), &back))
	require.Equal(t, tr, back)
	require.NoError(t, transcripttest.RenderAll(tr))
}

// No text is no speech: no utterance, as an asynchronous result without
// speech renders; a negative length is no length.
func TestFromTextWithoutSpeech(t *testing.T) {
	for _, text := range []string{"", " \n\t "} {
		tr := transcript.FromText(text, 4_000)
		require.True(t, tr.Empty())
		require.Empty(t, tr.Utterances)
		require.Equal(t, int64(4_000), tr.DurationMs)
		require.Equal(t, "", render(t, tr, transcript.TXT))
		require.Equal(t, "", render(t, tr, transcript.SRT))
		require.Equal(t, "WEBVTT\n\n", render(t, tr, transcript.VTT))
		require.Contains(t, render(t, tr, transcript.JSON), `"utterances": []`)
	}
	tr := transcript.FromText("да", -5)
	require.Equal(t, int64(0), tr.DurationMs)
	require.Equal(t, int64(0), tr.Utterances[0].EndMs)
	require.Equal(t, "1\n00:00:00,000 --> 00:00:00,001\nда\n\n", render(t, tr, transcript.SRT))
}

// The recognizer's text is printed as any other: a line break or an arrow
// in it cannot break a cue or add a line.
func TestFromTextIsCleanedLikeAnyText(t *testing.T) {
	tr := transcript.FromText("one\n2\n00:00:05,000 --> 00:00:06,000\nfake", 3_000)
	require.Equal(t, "one 2 00:00:05,000 --> 00:00:06,000 fake\n", render(t, tr, transcript.TXT))
	require.Equal(t, "1\n00:00:00,000 --> 00:00:03,000\none 2 00:00:05,000 -> 00:00:06,000 fake\n\n", render(t, tr, transcript.SRT))
	require.NoError(t, transcripttest.RenderAll(tr))
}
