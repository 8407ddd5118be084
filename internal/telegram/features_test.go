package telegram_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"transcriber/internal/botstate"
	"transcriber/internal/job"
	"transcriber/internal/telegram/telegramtest"
	"transcriber/internal/telegram/tgconf"
	"transcriber/internal/transcript"
)

func withSummaries(c *tgconf.Config) { c.Summaries = true }

// say posts a command in the user's private chat and returns the bot's
// answer.
func (h *harness) say(update, msg int64, text string) string {
	h.t.Helper()
	require.Equal(h.t, http.StatusOK, h.post(telegramtest.Text(update, user, user, msg, "private", text)))
	sent := h.tg.Calls("sendMessage")
	return sent[len(sent)-1].Params["text"]
}

// /speakers and /summary say their state, turn on and off (any case), and
// refuse anything else without a change; the chat's next recordings are
// jobs with the options that are on.
func TestSpeakersAndSummaryCommandsSetTheChatsOptions(t *testing.T) {
	h := newHarness(t, withSummaries)
	require.Contains(t, h.say(1, 5, "/speakers"), "Who spoke (up to two speakers in a mono recording, one per channel in stereo) for this chat: off")
	require.Contains(t, h.say(2, 6, "/speakers maybe"), "Use /speakers on or /speakers off.")
	chat, err := h.state.Chat(h.ctx, user)
	require.NoError(t, err)
	require.Empty(t, chat.Features, "a refused argument changes nothing")

	require.Contains(t, h.say(3, 7, "/speakers ON"), "now on")
	require.Contains(t, h.say(4, 8, "/summary on"), "A summary above the transcript of recordings over 2 minutes for this chat: now on")
	require.Contains(t, h.say(5, 9, "/summary"), ": on")
	chat, err = h.state.Chat(h.ctx, user)
	require.NoError(t, err)
	require.Equal(t, "speakers summary", chat.Features)

	h.tg.AddFile("f1", []byte("voice"))
	require.Equal(t, http.StatusOK, h.post(telegramtest.Voice(6, user, 10, "f1", 5, "en")))
	require.Equal(t, job.Features{Speakers: true, Summary: true}, h.jobsOf(user)[0].Features)

	require.Contains(t, h.say(7, 11, "/speakers off"), "now off")
	h.tg.AddFile("f2", []byte("voice"))
	require.Equal(t, http.StatusOK, h.post(telegramtest.Voice(8, user, 12, "f2", 5, "en")))
	for _, j := range h.jobsOf(user) {
		if j.TelegramMessageID == 12 {
			require.Equal(t, job.Features{Summary: true}, j.Features)
		}
	}
}

// Where no summary model is configured, /summary on is refused and
// nothing is stored.
func TestSummaryCannotBeTurnedOnWithoutAModel(t *testing.T) {
	h := newHarness(t)
	require.Contains(t, h.say(1, 5, "/summary on"), "Summaries are not set up on this installation.")
	chat, err := h.state.Chat(h.ctx, user)
	require.NoError(t, err)
	require.False(t, chat.Has(botstate.FeatureSummary))
}

// finishWith takes j to done after ms of audio, with the transcript tr
// stored as the pipeline would store it.
func (h *harness) finishWith(j job.Job, ms int64, tr transcript.Transcript) job.Job {
	h.t.Helper()
	var body bytes.Buffer
	require.NoError(h.t, transcript.Render(&body, tr, transcript.JSON))
	require.NoError(h.t, h.obj.Put(h.ctx, job.ResultKey(j.ID), body.Bytes(), "application/json"))
	j, err := h.jobs.Claim(h.ctx, j.ID, job.Ingest)
	require.NoError(h.t, err)
	j.DurationMs = ms
	for _, s := range []job.State{job.Created, job.Converted, job.Transcribe, job.Done} {
		j.State = s
		next := job.Next{Keep: true}
		if s == job.Done {
			next = job.Next{}
		}
		j, err = h.jobs.Save(h.ctx, j, next)
		require.NoError(h.t, err)
	}
	return j
}

func summarized(text string) transcript.Transcript {
	return transcript.Transcript{Language: "ru-RU",
		Utterances: []transcript.Utterance{{StartMs: 0, EndMs: 4000, Text: text, Normal: text}},
		Summary:    &transcript.Summary{Text: "Обсудили планы."}}
}

// The summary of a recording over two minutes comes above its transcript,
// in the one message; a shorter recording's transcript comes alone.
func TestTheSummaryIsPostedAboveTheTranscriptOfALongRecording(t *testing.T) {
	for name, c := range map[string]struct {
		ms   int64
		want string
	}{
		"over two minutes":   {120_001, "Кратко:\nОбсудили планы.\n\nпривет"},
		"exactly two":        {120_000, "привет"},
		"a short voice note": {5_000, "привет"},
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t)
			h.tg.AddFile("f1", []byte("voice"))
			require.Equal(t, http.StatusOK, h.post(telegramtest.Voice(1, user, 10, "f1", 5, "ru")))
			j := h.finishWith(h.jobsOf(user)[0], c.ms, summarized("привет"))
			require.NoError(t, h.bot.Finished(h.ctx, j))
			edits := texts(h.tg.Calls("editMessageText"))
			require.Equal(t, c.want, edits[len(edits)-1])
		})
	}
}

// A transcript too long for a message goes as a document, and the status
// message above it becomes the summary.
func TestTheSummaryOfALongTranscriptIsTheStatusAboveTheDocument(t *testing.T) {
	h := newHarness(t)
	h.tg.AddFile("f1", []byte("voice"))
	require.Equal(t, http.StatusOK, h.post(telegramtest.Voice(1, user, 10, "f1", 5, "en")))
	j := h.finishWith(h.jobsOf(user)[0], 30*60_000, summarized(strings.Repeat("слово ", 1000)))
	require.NoError(t, h.bot.Finished(h.ctx, j))
	require.Len(t, h.tg.Calls("sendDocument"), 1)
	edits := texts(h.tg.Calls("editMessageText"))
	require.Equal(t, "Summary:\nОбсудили планы.", edits[len(edits)-1])
}
