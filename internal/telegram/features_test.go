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

// /mode deferred makes the chat's next recordings deferred jobs, /mode
// normal goes back; /mode alone says the mode, an unknown one is refused
// and changes nothing.
func TestModeSetsTheChatsPriority(t *testing.T) {
	h := newHarness(t)
	say := func(update, msg int64, text string) string {
		t.Helper()
		require.Equal(t, http.StatusOK, h.post(telegramtest.Text(update, user, user, msg, "private", text)))
		sent := h.tg.Calls("sendMessage")
		return sent[len(sent)-1].Params["text"]
	}
	require.Contains(t, say(1, 5, "/mode"), "Recognition mode for this chat: normal")
	require.Contains(t, say(2, 6, "/mode urgent"), `don't know the mode "urgent"`)
	chat, err := h.state.Chat(h.ctx, user)
	require.NoError(t, err)
	require.Empty(t, chat.Mode, "a refused mode changes nothing")

	require.Contains(t, say(3, 7, "/mode Deferred"), "now deferred (up to a day)")
	require.Contains(t, say(4, 8, "/mode"), "deferred (up to a day)")
	h.tg.AddFile("f1", []byte("voice"))
	require.Equal(t, http.StatusOK, h.post(telegramtest.Voice(5, user, 10, "f1", 5, "en")))
	require.Equal(t, job.PriorityDeferred, h.jobsOf(user)[0].Priority)

	require.Contains(t, say(6, 11, "/mode normal"), "now normal")
	h.tg.AddFile("f2", []byte("voice"))
	require.Equal(t, http.StatusOK, h.post(telegramtest.Voice(7, user, 12, "f2", 5, "en")))
	for _, j := range h.jobsOf(user) {
		if j.TelegramMessageID == 12 {
			require.Equal(t, job.PriorityFast, j.Priority, "normal mode: quick when short enough")
		}
	}
}

// Once a recording over 10 minutes is being recognized, its status message
// says its length and about when the transcript comes (10 s a minute);
// a deferred job's says it may take up to a day, whatever its length; a
// short normal one keeps the plain label. The edit is made even right
// after the last one.
func TestTheStatusSaysHowLongTheWaitIs(t *testing.T) {
	for name, c := range map[string]struct {
		ms       int64
		priority job.Priority
		lang     string
		want     string
	}{
		"42 minutes":          {42 * 60_000, job.PriorityNormal, "en", "Recognizing 42 min of audio; the transcript should be ready in about 7 min."},
		"an hour, in Russian": {3_600_000, job.PriorityNormal, "ru", "Распознаю 1 ч аудио; расшифровка будет готова примерно через 10 мин."},
		"just over 10 min":    {10*60_000 + 1_000, job.PriorityNormal, "en", "Recognizing 10 min 01 s of audio; the transcript should be ready in about 2 min."},
		"exactly 10 min":      {10 * 60_000, job.PriorityNormal, "en", "Recognizing speech…"},
		"deferred, short":     {30_000, job.PriorityDeferred, "en", "Recognizing 30 s of audio in deferred mode: the transcript may take up to a day."},
		"deferred, long":      {3 * 3_600_000, job.PriorityDeferred, "ru", "Распознаю 3 ч аудио в отложенном режиме: расшифровка может занять до суток."},
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t)
			h.tg.AddFile("f1", []byte("voice"))
			require.Equal(t, http.StatusOK, h.post(telegramtest.Voice(1, user, 10, "f1", 5, c.lang)))
			j, err := h.jobs.Claim(h.ctx, h.jobsOf(user)[0].ID, job.Ingest)
			require.NoError(t, err)
			j.State, j.DurationMs, j.Priority = job.Transcribe, c.ms, c.priority
			require.NoError(t, h.bot.Moved(h.ctx, j))
			edits := texts(h.tg.Calls("editMessageText"))
			if c.want == "Recognizing speech…" {
				require.Empty(t, edits, "a short normal recording's label waits for its turn")
				return
			}
			require.Equal(t, []string{c.want}, edits)
		})
	}
}

// A chat's recordings — a voice note, a video, a document with sound —
// are fast jobs, recognized synchronously when the pipeline finds them
// short enough, unless the chat asked for what synchronous recognition
// does not give: speakers or a summary make them normal, /mode deferred
// deferred.
func TestRecordingsAreFastUnlessTheChatAskedForMore(t *testing.T) {
	h := newHarness(t, withSummaries)
	var update, msg int64 = 100, 500
	send := func(media func(update, msg int64) []byte) job.Priority {
		t.Helper()
		update, msg = update+1, msg+1
		require.Equal(t, http.StatusOK, h.post(media(update, msg)))
		for _, j := range h.jobsOf(user) {
			if j.TelegramMessageID == msg {
				return j.Priority
			}
		}
		t.Fatalf("no job for message %d", msg)
		return ""
	}
	h.tg.AddFile("f", []byte("media"))
	voice := func(u, m int64) []byte { return telegramtest.Voice(u, user, m, "f", 5, "en") }
	video := func(u, m int64) []byte { return telegramtest.Video(u, user, m, "f", 5) }
	doc := func(u, m int64) []byte { return telegramtest.Document(u, user, m, "f", "audio/mpeg", 5) }

	for _, media := range []func(int64, int64) []byte{voice, video, doc} {
		require.Equal(t, job.PriorityFast, send(media))
	}

	require.Contains(t, h.say(1, 1, "/speakers on"), "now on")
	require.Equal(t, job.PriorityNormal, send(voice), "speakers are not given synchronously")
	require.Contains(t, h.say(2, 2, "/speakers off"), "now off")
	require.Contains(t, h.say(3, 3, "/summary on"), "now on")
	require.Equal(t, job.PriorityNormal, send(video), "nor a summary")
	require.Contains(t, h.say(4, 4, "/summary off"), "now off")
	require.Equal(t, job.PriorityFast, send(doc))

	require.Contains(t, h.say(5, 5, "/mode deferred"), "now deferred")
	require.Equal(t, job.PriorityDeferred, send(voice))
	require.Contains(t, h.say(6, 6, "/mode normal"), "now normal")
	require.Equal(t, job.PriorityFast, send(voice))
}
