package telegram_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"transcriber/internal/job"
	"transcriber/internal/telegram/telegramtest"
)

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
