package telegram_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"transcriber/internal/errs"
	"transcriber/internal/job"
	"transcriber/internal/telegram"
	"transcriber/internal/telegram/telegramtest"
	"transcriber/internal/telegram/tgconf"
)

const (
	group = int64(-100200300)
	other = int64(5151) // a second allowed member of the group
)

// twoUsers lets user and other use the bot.
func twoUsers(t *testing.T) func(*tgconf.Config) {
	return func(c *tgconf.Config) {
		var err error
		c.Allowed, err = tgconf.ParseAllowed(fmt.Sprintf("%d,%d", user, other))
		require.NoError(t, err)
	}
}

// groupVoice is a voice message of user's in the group.
func groupVoice(update, msg int64) []byte {
	return []byte(fmt.Sprintf(`{"update_id":%d,"message":{"message_id":%d,"date":1,"from":{"id":%d,"is_bot":false,"first_name":"T"},`+
		`"chat":{"id":%d,"type":"supergroup","title":"G"},"voice":{"file_id":"g%d","file_unique_id":"ug","duration":3,"file_size":5}}}`,
		update, msg, user, group, msg))
}

// forgetButtons are the callback data of the last /forget question's
// buttons: yes, then no.
func forgetButtons(t *testing.T, h *harness) (yes, no string) {
	t.Helper()
	sends := h.tg.Calls("sendMessage")
	require.NotEmpty(t, sends)
	var kb struct {
		InlineKeyboard [][]struct {
			CallbackData string `json:"callback_data"`
		} `json:"inline_keyboard"`
	}
	require.NoError(t, json.Unmarshal([]byte(sends[len(sends)-1].Params["reply_markup"]), &kb))
	require.Len(t, kb.InlineKeyboard, 1)
	require.Len(t, kb.InlineKeyboard[0], 2)
	return kb.InlineKeyboard[0][0].CallbackData, kb.InlineKeyboard[0][1].CallbackData
}

// groupWithAJob is a group where user turned /auto on and sent a voice
// message, whose job is returned.
func groupWithAJob(t *testing.T, h *harness) job.Job {
	t.Helper()
	h.tg.AddFile("g50", []byte("voice"))
	require.Equal(t, http.StatusOK, h.post(telegramtest.Text(1, user, group, 49, "supergroup", "/auto on")))
	require.Equal(t, http.StatusOK, h.post(groupVoice(2, 50)))
	jobs := h.jobsOf(group)
	require.Len(t, jobs, 1)
	return jobs[0]
}

func requireNotDeleted(t *testing.T, h *harness, j job.Job) {
	t.Helper()
	got, err := h.jobs.Get(h.ctx, j.ID)
	require.NoError(t, err)
	require.False(t, got.Deleted(), "the job is still there")
	require.True(t, h.s3.Has(job.SourceKey(j.ID)), "its file is still there")
}

func TestForgetInAGroupIsAnsweredOnlyByTheAsker(t *testing.T) {
	h := newHarness(t, twoUsers(t))
	j := groupWithAJob(t, h)
	require.Equal(t, http.StatusOK, h.post(telegramtest.Text(3, user, group, 60, "supergroup", "/forget")))
	yes, no := forgetButtons(t, h)
	require.Equal(t, fmt.Sprintf("forget:yes:%d", user), yes, "the button names the asker")
	require.Equal(t, fmt.Sprintf("forget:no:%d", user), no)

	// Another allowed member presses either button: a short answer in
	// their language, and nothing happens.
	require.Equal(t, http.StatusOK, h.post(telegramtest.ButtonIn(4, other, group, 1003, "supergroup", "ru", yes)))
	require.Equal(t, http.StatusOK, h.post(telegramtest.ButtonIn(5, other, group, 1003, "supergroup", "en", no)))
	answers := h.tg.Calls("answerCallbackQuery")
	require.Len(t, answers, 2)
	require.Equal(t, "Ответить может только тот, кто отправил /forget.", answers[0].Params["text"])
	require.Equal(t, "Only the one who sent /forget can answer this.", answers[1].Params["text"])
	require.Empty(t, h.tg.Calls("editMessageText"), "the question stays for the asker")
	requireNotDeleted(t, h, j)
	chat, err := h.state.Chat(h.ctx, group)
	require.NoError(t, err)
	require.Equal(t, "on", string(chat.Auto), "the chat's settings are kept")

	// The asker's press is honoured.
	require.Equal(t, http.StatusOK, h.post(telegramtest.ButtonIn(6, user, group, 1003, "supergroup", "en", yes)))
	got, err := h.jobs.Get(h.ctx, j.ID)
	require.NoError(t, err)
	require.True(t, got.Deleted())
	require.False(t, h.s3.Has(job.SourceKey(j.ID)))
	edits := h.tg.Calls("editMessageText")
	require.Len(t, edits, 1)
	require.Contains(t, edits[0].Params["text"], "Deleted: 1 jobs")
}

func TestAForgetButtonWithoutTheAskerIsRefusedInAGroup(t *testing.T) {
	h := newHarness(t, twoUsers(t))
	j := groupWithAJob(t, h)
	// A button made before buttons named the asker: in a group, nobody
	// can tell whose it is, so nobody may press it.
	for i, u := range []int64{user, other} {
		require.Equal(t, http.StatusOK, h.post(telegramtest.ButtonIn(int64(10+i), u, group, 900, "supergroup", "en", "forget:yes")))
	}
	answers := h.tg.Calls("answerCallbackQuery")
	require.Len(t, answers, 2)
	for _, a := range answers {
		require.Equal(t, "This button is out of date. Send /forget again.", a.Params["text"])
	}
	require.Empty(t, h.tg.Calls("editMessageText"))
	requireNotDeleted(t, h, j)

	// A malformed asker is no /forget button at all.
	require.Equal(t, http.StatusOK, h.post(telegramtest.ButtonIn(12, user, group, 900, "supergroup", "en", "forget:yes:x")))
	require.Empty(t, h.tg.Calls("editMessageText"))
	requireNotDeleted(t, h, j)
}

func TestAForgetButtonWithoutTheAskerStillWorksInAPrivateChat(t *testing.T) {
	h := newHarness(t)
	h.tg.AddFile("f1", []byte("voice"))
	require.Equal(t, http.StatusOK, h.post(telegramtest.Voice(1, user, 10, "f1", 5, "en")))
	j := h.jobsOf(user)[0]
	require.Equal(t, http.StatusOK, h.post(telegramtest.Button(2, user, user, 900, "forget:no")))
	require.Equal(t, []string{"Nothing was deleted."}, texts(h.tg.Calls("editMessageText")))
	require.Equal(t, http.StatusOK, h.post(telegramtest.Button(3, user, user, 900, "forget:yes")))
	got, err := h.jobs.Get(h.ctx, j.ID)
	require.NoError(t, err)
	require.True(t, got.Deleted(), "only the user can press a button in their own chat")
}

// The texts Telegram answers when the bot can no longer write to a chat.
var goneChats = map[string]telegramtest.Failure{
	"blocked":      {Code: 403, Description: "Forbidden: bot was blocked by the user"},
	"deactivated":  {Code: 403, Description: "Forbidden: user is deactivated"},
	"kicked":       {Code: 403, Description: "Forbidden: bot was kicked from the group chat"},
	"chatNotFound": {Code: 400, Description: "Bad Request: chat not found"},
}

func TestAChatFoundGoneGetsNoDownload(t *testing.T) {
	for name, f := range goneChats {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t)
			h.tg.AddFile("f1", []byte("voice"))
			h.tg.Fail("sendMessage", f)
			up := telegramtest.Voice(1, user, 10, "f1", 5, "en")
			require.Equal(t, http.StatusOK, h.post(up), "handled: Telegram must not send it again")
			require.Len(t, h.tg.Calls("sendMessage"), 1)
			require.Empty(t, h.tg.Calls("getFile"), "nothing is downloaded for a chat that cannot get the result")

			jobs := h.jobsOf(user)
			require.Len(t, jobs, 1)
			require.Equal(t, job.Failed, jobs[0].State, "the job ends")
			require.Equal(t, "chat_gone", jobs[0].ErrorCode)
			require.False(t, h.s3.Has(job.SourceKey(jobs[0].ID)))
			chat, err := h.state.Chat(h.ctx, user)
			require.NoError(t, err)
			require.False(t, chat.BlockedAt.IsZero(), "the chat is marked blocked")

			// Should the update come anyway, it finds the job ended.
			require.Equal(t, http.StatusOK, h.post(up))
			require.Empty(t, h.tg.Calls("getFile"))
			require.Len(t, h.tg.Calls("sendMessage"), 1)
			require.Len(t, h.jobsOf(user), 1)

			// The sweep delivers nothing into it later.
			h.clk.Advance(tgconf.DefaultResultCheck)
			_, err = h.bot.Sweep(h.ctx)
			require.NoError(t, err)
			require.Len(t, h.tg.Calls("sendMessage"), 1)
			require.Empty(t, h.tg.Calls("editMessageText"))
		})
	}
}

// saveFails is a job store whose Save fails while down is set.
type saveFails struct {
	job.Store
	down bool
}

func (d *saveFails) Save(ctx context.Context, j job.Job, n job.Next) (job.Job, error) {
	if d.down {
		return job.Job{}, errs.New(errs.Unavailable, "store_unavailable", "the job store is unavailable")
	}
	return d.Store.Save(ctx, j, n)
}

func TestAGoneChatsJobThatCouldNotEndIsEndedOnTheRedelivery(t *testing.T) {
	h := newHarness(t)
	jobs := &saveFails{Store: h.jobs, down: true}
	var err error
	h.bot, err = telegram.New(telegram.Deps{Jobs: jobs, State: h.state, Outbox: h.box, Objects: h.obj, Clock: h.clk, Log: testLog(t)},
		tgconf.Config{Token: telegramtest.Token, WebhookSecret: secret, APIURL: h.tg.URL, Allowed: tgconf.Allowed{Everyone: true}})
	require.NoError(t, err)
	h.server.Config.Handler = h.bot
	h.tg.AddFile("f1", []byte("voice"))
	blocked := goneChats["blocked"]
	h.tg.Fail("sendMessage", blocked, blocked, blocked)
	up := telegramtest.Voice(1, user, 10, "f1", 5, "en")

	require.Equal(t, http.StatusServiceUnavailable, h.post(up), "the job could not be ended: Telegram sends the update again")
	require.Empty(t, h.tg.Calls("getFile"))
	require.Equal(t, job.AwaitingUpload, h.jobsOf(user)[0].State)

	// The failed attempt's claim holds the job a while: redeliveries meet
	// the block again, download nothing, and ask to come again.
	jobs.down = false
	require.Equal(t, http.StatusServiceUnavailable, h.post(up))
	require.Empty(t, h.tg.Calls("getFile"), "the redelivery meets the block again, and still downloads nothing")
	require.Equal(t, job.AwaitingUpload, h.jobsOf(user)[0].State)

	h.clk.Advance(job.Ingest.Lease)
	require.Equal(t, http.StatusOK, h.post(up))
	require.Empty(t, h.tg.Calls("getFile"))
	require.Len(t, h.tg.Calls("sendMessage"), 3, "each delivery tried the status message")
	require.Equal(t, job.Failed, h.jobsOf(user)[0].State)
	require.Equal(t, http.StatusOK, h.post(up), "and once ended, the update is done")
	require.Len(t, h.tg.Calls("sendMessage"), 3)
	require.Empty(t, h.tg.Calls("getFile"))
}

func TestADocumentGetFileCallsTooBigGetsTheUploadLinkAtOnce(t *testing.T) {
	h := newHarness(t)
	h.tg.Fail("getFile", telegramtest.Failure{Code: 400, Description: "Bad Request: file is too big"})
	up := telegramtest.Document(1, user, 30, "big", "video/mp4", 0) // no file_size
	require.Equal(t, http.StatusOK, h.post(up))
	require.Len(t, h.tg.Calls("getFile"), 1, "asked once, and no download tried")

	jobs := h.jobsOf(user)
	require.Len(t, jobs, 1)
	j := jobs[0]
	require.Equal(t, job.AwaitingUpload, j.State)
	require.Equal(t, h.clk.Now().Add(tgconf.DefaultLinkWindow), j.UploadBy, "the link's window, not the download's")
	sends := h.tg.Calls("sendMessage")
	require.Len(t, sends, 1)
	require.Contains(t, sends[0].Params["text"], "https://api.example/upload/"+j.ID+"?t=")
	require.Contains(t, sends[0].Params["text"], "more than Telegram lets a bot download (20 MB)")
}

func TestADocumentGetFileCallsTooBigWithoutLinksIsRefusedPlainly(t *testing.T) {
	h := newHarness(t, func(c *tgconf.Config) { c.UploadLinkSecret = nil })
	h.tg.Fail("getFile", telegramtest.Failure{Code: 400, Description: "Bad Request: file is too big"})
	require.Equal(t, http.StatusOK, h.post(telegramtest.Document(1, user, 30, "big", "video/mp4", 0)))
	require.Empty(t, h.jobsOf(user))
	sends := h.tg.Calls("sendMessage")
	require.Len(t, sends, 1)
	require.Contains(t, sends[0].Params["text"], "not set up")
}

func TestAnUnsizedSmallDocumentIsFetchedWithOneGetFile(t *testing.T) {
	h := newHarness(t)
	data := []byte("a small recording")
	h.tg.AddFile("small", data)
	require.Equal(t, http.StatusOK, h.post(telegramtest.Document(1, user, 31, "small", "audio/mpeg", 0)))
	jobs := h.jobsOf(user)
	require.Len(t, jobs, 1)
	require.EqualValues(t, len(data), jobs[0].SizeBytes, "the size getFile told")
	require.Equal(t, h.clk.Now().Add(tgconf.DefaultDownloadWindow), jobs[0].UploadBy)
	require.Equal(t, data, h.s3.Object(t, job.SourceKey(jobs[0].ID)))
	require.Len(t, h.tg.Calls("getFile"), 1)
	require.Contains(t, h.tg.Calls("sendMessage")[0].Params["text"], "transcribing")
}

func TestAnUnsizedDocumentWhoseGetFileFailsForNowIsRedelivered(t *testing.T) {
	h := newHarness(t)
	h.tg.AddFile("small", []byte("rec"))
	h.tg.Fail("getFile", telegramtest.Failure{Code: 502, Description: "Bad Gateway"})
	up := telegramtest.Document(1, user, 31, "small", "audio/mpeg", 0)
	require.Equal(t, http.StatusServiceUnavailable, h.post(up))
	require.Equal(t, http.StatusOK, h.post(up))
	require.Len(t, h.jobsOf(user), 1)
	require.Len(t, h.tg.Calls("sendMessage"), 1)
}

// A file whose name hides what it is (a direction override, a terminal
// escape) is still transcribed: the job is made and the file fetched, and
// the name kept, to be shown, is the one without those characters.
func TestAFileNameThatHidesWhatItIsIsCleanedNotRefused(t *testing.T) {
	h := newHarness(t)
	data := []byte("a small recording")
	h.tg.AddFile("doc", data)
	h.tg.AddFile("song", data)
	hidden := " a\u202egpm.exe\u001b[31m\u2066.ogg\u0085"
	doc := telegramtest.NamedDocument(1, user, 31, "doc", "audio/ogg", hidden, int64(len(data)))
	audio := bytes.Replace(telegramtest.NamedDocument(2, user, 32, "song", "audio/mpeg", hidden, int64(len(data))),
		[]byte(`"document":`), []byte(`"audio":`), 1)
	require.Equal(t, http.StatusOK, h.post(doc))
	require.Equal(t, http.StatusOK, h.post(audio))
	jobs := h.jobsOf(user)
	require.Len(t, jobs, 2)
	for _, j := range jobs {
		require.Equal(t, "agpm.exe[31m.ogg", j.Filename)
		require.Equal(t, data, h.s3.Object(t, job.SourceKey(j.ID)), "the file is fetched all the same")
	}
	require.Len(t, h.tg.Calls("sendMessage"), 2)
	require.Contains(t, h.tg.Calls("sendMessage")[0].Params["text"], "transcribing")
}
