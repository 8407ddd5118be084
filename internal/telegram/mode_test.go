package telegram_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"transcriber/internal/job"
	"transcriber/internal/telegram/telegramtest"
)

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
