package transcript_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"transcriber/internal/transcript"
	"transcriber/internal/transcript/transcripttest"
)

func sample() transcript.Transcript {
	return transcript.Transcript{
		DurationMs: 5200,
		Language:   "ru-RU",
		Utterances: []transcript.Utterance{
			{Channel: 0, StartMs: 300, EndMs: 1800, Text: "привет мир", Normal: "Привет, мир!",
				Words: []transcript.Word{{"привет", 300, 900}, {"мир", 1000, 1800}}},
			{Channel: 0, StartMs: 3_723_004, EndMs: 3_724_500, Text: "два", Normal: "2"},
		},
	}
}

func render(t *testing.T, tr transcript.Transcript, f transcript.Format) string {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, transcript.Render(&b, tr, f))
	return b.String()
}

func TestTXTShowsNormalizedText(t *testing.T) {
	require.Equal(t, "Привет, мир!\n2\n", render(t, sample(), transcript.TXT))
}

func TestSRT(t *testing.T) {
	want := "1\n00:00:00,300 --> 00:00:01,800\nПривет, мир!\n\n" +
		"2\n01:02:03,004 --> 01:02:04,500\n2\n\n"
	require.Equal(t, want, render(t, sample(), transcript.SRT))
}

func TestVTT(t *testing.T) {
	want := "WEBVTT\n\n00:00:00.300 --> 00:00:01.800\nПривет, мир!\n\n" +
		"01:02:03.004 --> 01:02:04.500\n2\n\n"
	require.Equal(t, want, render(t, sample(), transcript.VTT))
}

func TestJSONRoundTrips(t *testing.T) {
	out := render(t, sample(), transcript.JSON)
	var got transcript.Transcript
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	require.Equal(t, sample(), got)
	require.Contains(t, out, `"start_ms": 300`)
}

func TestEmptyTranscriptIsAResult(t *testing.T) {
	empty := transcript.Transcript{DurationMs: 4000}
	require.True(t, empty.Empty())
	require.Equal(t, "", render(t, empty, transcript.TXT))
	require.Equal(t, "", render(t, empty, transcript.SRT))
	require.Equal(t, "WEBVTT\n\n", render(t, empty, transcript.VTT))
	require.Contains(t, render(t, empty, transcript.JSON), `"utterances": []`)
	require.False(t, sample().Empty())
	blank := transcript.Transcript{Utterances: []transcript.Utterance{{StartMs: 1, EndMs: 2}}}
	require.True(t, blank.Empty(), "utterances with no text are no speech")
}

func TestMultiChannelNamesTheSpeaker(t *testing.T) {
	tr := transcript.Transcript{Utterances: []transcript.Utterance{
		{Channel: 0, StartMs: 0, EndMs: 1000, Text: "алло"},
		{Channel: 1, StartMs: 1200, EndMs: 2000, Text: "да"},
	}}
	require.Equal(t, "[1] алло\n[2] да\n", render(t, tr, transcript.TXT))
	require.Contains(t, render(t, tr, transcript.SRT), "2\n00:00:01,200 --> 00:00:02,000\n[2] да\n")
}

func TestLongUtteranceIsSplitIntoCuesByWords(t *testing.T) {
	u := transcript.Utterance{StartMs: 0, EndMs: 20_000, Text: "w"}
	var words []string
	for i := int64(0); i < 20; i++ {
		w := transcript.Word{Text: "слово", StartMs: i * 1000, EndMs: i*1000 + 900}
		u.Words = append(u.Words, w)
		words = append(words, w.Text)
	}
	u.Text = strings.Join(words, " ")
	out := render(t, transcript.Transcript{Utterances: []transcript.Utterance{u}}, transcript.SRT)
	require.Contains(t, out, "1\n00:00:00,000 --> 00:00:06,900\n")
	require.Contains(t, out, "2\n00:00:07,000 --> 00:00:13,900\n")
	require.Contains(t, out, "3\n00:00:14,000 --> 00:00:19,900\n")
	require.Equal(t, 20, strings.Count(out, "слово"), "no word lost or repeated")
}

func TestAppendShiftsLaterSegments(t *testing.T) {
	var all transcript.Transcript
	first := transcript.Transcript{DurationMs: 10_000, Utterances: []transcript.Utterance{{StartMs: 100, EndMs: 900, Text: "a",
		Words: []transcript.Word{{"a", 100, 900}}}}}
	second := transcript.Transcript{DurationMs: 4_000, Utterances: []transcript.Utterance{{StartMs: 50, EndMs: 700, Text: "b",
		Words: []transcript.Word{{"b", 50, 700}}}}}
	all.Append(first, 0)
	all.Append(second, 10_000)
	require.Equal(t, int64(14_000), all.DurationMs)
	require.Equal(t, int64(10_050), all.Utterances[1].StartMs)
	require.Equal(t, int64(10_700), all.Utterances[1].Words[0].EndMs)
	require.Equal(t, int64(50), second.Utterances[0].Words[0].StartMs, "the segment's own words are not changed")
}

func TestParseFormat(t *testing.T) {
	for _, f := range transcript.Formats {
		got, ok := transcript.ParseFormat(strings.ToUpper(string(f)))
		require.True(t, ok)
		require.Equal(t, f, got)
		require.NotEmpty(t, f.ContentType())
	}
	got, ok := transcript.ParseFormat("")
	require.True(t, ok)
	require.Equal(t, transcript.TXT, got)
	_, ok = transcript.ParseFormat("docx")
	require.False(t, ok)
	require.Error(t, transcript.Render(&bytes.Buffer{}, sample(), "docx"))
}

// Texts from the recognizer, or from a stored transcript, may hold line
// breaks, "-->", markup, control characters and invalid UTF-8; no format may
// let them break its structure.
func TestHostileTextStaysInsideItsCue(t *testing.T) {
	tr := transcript.Transcript{Utterances: []transcript.Utterance{
		{StartMs: 0, EndMs: 1000, Text: "one\n\n2\n00:00:05,000 --> 00:00:06,000\r\nfake"},
		{StartMs: 2000, EndMs: 3000, Text: "a <b>&</b> c\x00\x1b\u007f\u0085\xff"},
		{StartMs: 4000, EndMs: 5000, Text: "\n\u0001\r"}, // nothing to show
	}}
	srt := render(t, tr, transcript.SRT)
	require.Equal(t, "1\n00:00:00,000 --> 00:00:01,000\none  2 00:00:05,000 -> 00:00:06,000  fake\n\n"+
		"2\n00:00:02,000 --> 00:00:03,000\na <b>&</b> c \uFFFD\n\n", srt)
	vtt := render(t, tr, transcript.VTT)
	require.Equal(t, "WEBVTT\n\n00:00:00.000 --> 00:00:01.000\none  2 00:00:05,000 --&gt; 00:00:06,000  fake\n\n"+
		"00:00:02.000 --> 00:00:03.000\na &lt;b&gt;&amp;&lt;/b&gt; c \uFFFD\n\n", vtt)
	require.Equal(t, "one  2 00:00:05,000 --> 00:00:06,000  fake\na <b>&</b> c \uFFFD\n", render(t, tr, transcript.TXT))
	js := render(t, tr, transcript.JSON)
	require.Contains(t, js, "\"text\": \"a <b>&</b> c \uFFFD\"")
	for _, f := range transcript.Formats {
		require.NoError(t, transcripttest.Check(f, tr, []byte(render(t, tr, f))), f)
	}
}

// An arrow made of more dashes is not left as "-->" by the replacement.
func TestSRTArrowInTextIsBroken(t *testing.T) {
	tr := transcript.Transcript{Utterances: []transcript.Utterance{{StartMs: 0, EndMs: 1000, Text: "a ----> b"}}}
	require.Equal(t, "1\n00:00:00,000 --> 00:00:01,000\na -> b\n\n", render(t, tr, transcript.SRT))
}

// Negative, huge and reversed times still give cues that start before they
// end, with two-digit hours.
func TestCueTimesAreClamped(t *testing.T) {
	tr := transcript.Transcript{Utterances: []transcript.Utterance{
		{StartMs: -500, EndMs: -100, Text: "before"},
		{StartMs: 9_223_372_036_854_775_807, EndMs: 5, Text: "huge"},
		{StartMs: 4000, EndMs: 1000, Text: "reversed"},
	}}
	require.Equal(t, "1\n00:00:00,000 --> 00:00:00,001\nbefore\n\n"+
		"2\n00:00:04,000 --> 00:00:04,001\nreversed\n\n"+
		"3\n99:59:59,998 --> 99:59:59,999\nhuge\n\n", render(t, tr, transcript.SRT))
}

// Words out of order in a long utterance give cues in order of start time
// (WebVTT requires it), each starting before it ends; blank words are left
// out rather than making an empty cue.
func TestLongUtteranceWithWordsOutOfOrder(t *testing.T) {
	tr := transcript.Transcript{Utterances: []transcript.Utterance{{StartMs: 0, EndMs: 30_000, Text: "a b c",
		Words: []transcript.Word{{"c", 20_000, 29_000}, {" \n ", 0, 1}, {"a", 100, 900}, {"b", 9_000, 8_000}}}}}
	require.Equal(t, "WEBVTT\n\n00:00:00.100 --> 00:00:00.900\na\n\n"+
		"00:00:09.000 --> 00:00:09.001\nb\n\n"+
		"00:00:20.000 --> 00:00:29.000\nc\n\n", render(t, tr, transcript.VTT))
}

// A stored transcript whose utterances are out of order still gives WebVTT
// cues in order of start time.
func TestCuesAreOrderedByStart(t *testing.T) {
	tr := transcript.Transcript{Utterances: []transcript.Utterance{
		{StartMs: 5000, EndMs: 6000, Text: "later"},
		{StartMs: 1000, EndMs: 2000, Text: "earlier"},
	}}
	require.Equal(t, "WEBVTT\n\n00:00:01.000 --> 00:00:02.000\nearlier\n\n00:00:05.000 --> 00:00:06.000\nlater\n\n",
		render(t, tr, transcript.VTT))
}

// The JSON rendering carries the billed seconds when they are known, and
// leaves the field out when they are not (a transcript written before
// they were kept reads back the same).
func TestJSONCarriesBilledSeconds(t *testing.T) {
	tr := sample()
	tr.BilledSeconds = 31
	out := render(t, tr, transcript.JSON)
	require.Contains(t, out, `"billed_seconds": 31`)
	var got transcript.Transcript
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	require.Equal(t, tr, got)
	require.NotContains(t, render(t, sample(), transcript.JSON), "billed_seconds")
}
