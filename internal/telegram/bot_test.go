package telegram_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/go-telegram/bot/models"
	"github.com/stretchr/testify/require"

	"transcriber/internal/botstate"
	"transcriber/internal/clock/clocktest"
	"transcriber/internal/errs"
	"transcriber/internal/httpapi/openapitest"
	"transcriber/internal/job"
	"transcriber/internal/outbox"
	"transcriber/internal/speechkit"
	"transcriber/internal/storage/s3"
	"transcriber/internal/storage/s3/s3test"
	"transcriber/internal/store/sqlite"
	"transcriber/internal/telegram"
	"transcriber/internal/telegram/telegramtest"
	"transcriber/internal/telegram/tgconf"
	"transcriber/internal/transcript"
)

const (
	secret = "webhook-secret_0123456789"
	user   = int64(4242)
)

// harness is the bot over a fake Bot API, the fake S3 and SQLite, with a
// clock that moves only when the bot sleeps or the test says so.
type harness struct {
	t      testing.TB
	ctx    context.Context
	tg     *telegramtest.Server
	s3     *s3test.Server
	obj    *s3.Store
	jobs   job.Store
	state  botstate.Store
	box    outbox.Store
	clk    *clocktest.Fake
	bot    *telegram.Bot
	slept  []time.Duration
	mu     sync.Mutex
	server *httptest.Server

	// counters are the usage counters, in the database file at dbPath
	// with the jobs and the bot's state.
	counters *sqlite.Counters
	dbPath   string
}

func newHarness(t testing.TB, tune ...func(*tgconf.Config)) *harness {
	t.Helper()
	h := &harness{t: t, ctx: context.Background()}
	h.tg = telegramtest.Start(t)
	h.s3 = s3test.Start(t)
	h.clk = clocktest.NewFake(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	h.dbPath = filepath.Join(t.TempDir(), "jobs.db")
	db, err := sqlite.Open(h.ctx, h.dbPath, h.clk)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	h.jobs = sqlite.NewJobStore(db)
	h.state, h.box = sqlite.NewBotState(db), sqlite.NewOutbox(db)
	h.counters = sqlite.NewCounters(db)
	cfg := h.s3.Config()
	cfg.Clock = h.clk
	h.obj, err = s3.New(cfg)
	require.NoError(t, err)
	allowed, err := tgconf.ParseAllowed(fmt.Sprint(user))
	require.NoError(t, err)
	c := tgconf.Config{
		Token:            telegramtest.Token,
		WebhookSecret:    secret,
		APIURL:           h.tg.URL,
		Allowed:          allowed,
		DefaultLanguage:  "ru-RU",
		ValidLanguage:    speechkit.ValidLanguage,
		PublicURL:        "https://api.example",
		UploadLinkSecret: []byte(strings.Repeat("k", 32)),
	}
	for _, f := range tune {
		f(&c)
	}
	h.bot, err = telegram.New(telegram.Deps{
		Jobs: h.jobs, State: h.state, Outbox: h.box, Objects: h.obj, Counters: h.counters, Clock: h.clk, Log: testLog(t),
		Sleep: func(ctx context.Context, d time.Duration) error {
			h.mu.Lock()
			h.slept = append(h.slept, d)
			h.mu.Unlock()
			h.clk.Advance(d)
			return ctx.Err()
		},
	}, c)
	require.NoError(t, err)
	// Each answer of the webhook is checked against the OpenAPI document.
	h.server = httptest.NewServer(openapitest.Handler(t, h.bot))
	t.Cleanup(h.server.Close)
	return h
}

// post sends an update to the webhook with the secret and returns the
// status.
func (h *harness) post(update []byte) int {
	return h.postWith(update, secret)
}

func (h *harness) postWith(update []byte, secretToken string) int {
	h.t.Helper()
	req, err := http.NewRequest(http.MethodPost, h.server.URL+telegram.WebhookPath, bytes.NewReader(update))
	require.NoError(h.t, err)
	if secretToken != "" {
		req.Header.Set(telegram.SecretHeader, secretToken)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(h.t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode
}

func (h *harness) jobsOf(chat int64) []job.Job {
	h.t.Helper()
	page, err := h.jobs.List(h.ctx, fmt.Sprintf("tg:%d", chat), "", 100)
	require.NoError(h.t, err)
	return page.Jobs
}

// finish takes job j to done with a transcript of text, as the pipeline
// would, and returns it.
func (h *harness) finish(j job.Job, text string) job.Job {
	h.t.Helper()
	tr := transcript.Transcript{DurationMs: 4000, Language: "ru-RU"}
	if text != "" {
		tr.Utterances = []transcript.Utterance{{StartMs: 0, EndMs: 4000, Text: text, Normal: text}}
	}
	var body bytes.Buffer
	require.NoError(h.t, transcript.Render(&body, tr, transcript.JSON))
	require.NoError(h.t, h.obj.Put(h.ctx, job.ResultKey(j.ID), body.Bytes(), "application/json"))
	return h.move(j, job.Done, "", "")
}

// move claims j and walks it through the states to end, recording a
// failure's code and message when end is failed.
func (h *harness) move(j job.Job, end job.State, code, msg string) job.Job {
	h.t.Helper()
	j, err := h.jobs.Claim(h.ctx, j.ID, job.Ingest)
	require.NoError(h.t, err)
	for _, s := range []job.State{job.Created, job.Converted, job.Transcribe} {
		j.State = s
		j, err = h.jobs.Save(h.ctx, j, job.Next{Keep: true})
		require.NoError(h.t, err)
	}
	j.State, j.ErrorCode, j.ErrorMessage = end, code, msg
	j, err = h.jobs.Save(h.ctx, j, job.Next{})
	require.NoError(h.t, err)
	return j
}

func texts(calls []telegramtest.Call) []string {
	var out []string
	for _, c := range calls {
		out = append(out, c.Params["text"])
	}
	return out
}

func TestWrongSecretIsRefusedAndNothingHappens(t *testing.T) {
	h := newHarness(t)
	h.tg.AddFile("f1", []byte("OggS voice"))
	up := telegramtest.Voice(1, user, 10, "f1", 10, "en")
	require.Equal(t, http.StatusUnauthorized, h.postWith(up, "wrong"))
	require.Equal(t, http.StatusUnauthorized, h.postWith(up, ""))
	require.Equal(t, http.StatusUnauthorized, h.postWith(up, secret+"x"))
	require.Empty(t, h.tg.Calls(), "no Bot API call for a request without the secret")
	require.Empty(t, h.jobsOf(user))
}

func TestVoiceNoteMakesOneJobWhateverTheRedeliveries(t *testing.T) {
	h := newHarness(t)
	voice := []byte("OggS-not-really-but-bytes-of-a-voice-note")
	h.tg.AddFile("f1", voice)
	up := telegramtest.Voice(1, user, 10, "f1", len(voice), "ru")
	for i := 0; i < 3; i++ {
		require.Equal(t, http.StatusOK, h.post(up))
	}
	jobs := h.jobsOf(user)
	require.Len(t, jobs, 1)
	j := jobs[0]
	require.Equal(t, job.SourceTelegram, j.Source)
	require.Equal(t, user, j.TelegramChatID)
	require.EqualValues(t, 10, j.TelegramMessageID)
	require.Equal(t, voice, h.s3.Object(t, job.SourceKey(j.ID)), "the file is streamed into sources/<id>")

	sends := h.tg.Calls("sendMessage")
	require.Len(t, sends, 1, "one status message for three deliveries")
	require.EqualValues(t, 10, sends[0].ReplyTo())
	require.Contains(t, sends[0].Params["text"], "расшифровываю", "a Russian-speaking user is answered in Russian")
	require.Len(t, h.tg.Calls("getFile"), 1, "the file is fetched once")
}

func TestUserNotAllowedIsRefusedOnceAndGetsNoJob(t *testing.T) {
	h := newHarness(t)
	h.tg.AddFile("f1", []byte("voice"))
	up := telegramtest.Voice(1, 999, 11, "f1", 5, "en")
	require.Equal(t, http.StatusOK, h.post(up))
	require.Equal(t, http.StatusOK, h.post(up))
	sends := h.tg.Calls("sendMessage")
	require.Len(t, sends, 1)
	require.Contains(t, sends[0].Params["text"], "private")
	require.Contains(t, sends[0].Params["text"], "999")
	require.Empty(t, h.jobsOf(999))
	require.Empty(t, h.tg.Calls("getFile"))
}

func TestEveryoneAllowedWithStar(t *testing.T) {
	h := newHarness(t, func(c *tgconf.Config) {
		var err error
		c.Allowed, err = tgconf.ParseAllowed("*")
		require.NoError(t, err)
	})
	h.tg.AddFile("f1", []byte("voice"))
	require.Equal(t, http.StatusOK, h.post(telegramtest.Voice(1, 777, 11, "f1", 5, "en")))
	require.Len(t, h.jobsOf(777), 1)
}

func TestParseAllowed(t *testing.T) {
	a, err := tgconf.ParseAllowed(" 1, 22 ,333")
	require.NoError(t, err)
	require.True(t, a.Allows(22))
	require.False(t, a.Allows(4))
	none, err := tgconf.ParseAllowed("")
	require.NoError(t, err)
	require.False(t, none.Allows(1), "an empty list allows nobody")
	_, err = tgconf.ParseAllowed("1,bob")
	require.ErrorContains(t, err, "bob")
}

func TestShortTranscriptReplacesTheStatusMessage(t *testing.T) {
	h := newHarness(t)
	h.tg.AddFile("f1", []byte("voice"))
	require.Equal(t, http.StatusOK, h.post(telegramtest.Voice(1, user, 10, "f1", 5, "en")))
	j := h.finish(h.jobsOf(user)[0], "hello there")
	status := h.tg.Calls("sendMessage")[0]
	require.NoError(t, h.bot.Finished(h.ctx, j))
	require.NoError(t, h.bot.Finished(h.ctx, j), "a second call delivers nothing more")

	edits := h.tg.Calls("editMessageText")
	require.Len(t, edits, 1)
	require.Equal(t, "hello there", edits[0].Params["text"])
	require.Len(t, h.tg.Calls("sendMessage"), 1, "no new message: the status message became the transcript")
	require.Equal(t, status.Params["chat_id"], edits[0].Params["chat_id"])
}

func TestLongTranscriptComesAsADocument(t *testing.T) {
	h := newHarness(t)
	h.tg.AddFile("f1", []byte("voice"))
	require.Equal(t, http.StatusOK, h.post(telegramtest.Voice(1, user, 10, "f1", 5, "en")))
	long := strings.Repeat("abcd ", 1999) + "abcde"
	require.Equal(t, 10000, len([]rune(long)))
	j := h.finish(h.jobsOf(user)[0], long)
	require.NoError(t, h.bot.Finished(h.ctx, j))

	docs := h.tg.Calls("sendDocument")
	require.Len(t, docs, 1)
	require.Equal(t, "transcript.txt", docs[0].Name)
	require.True(t, strings.Contains(string(docs[0].File), long), "the document holds the whole transcript")
	require.LessOrEqual(t, len(utf16.Encode([]rune(docs[0].Params["caption"]))), tgconf.MaxCaptionUTF16)
	require.True(t, strings.HasPrefix(docs[0].Params["caption"], "abcd abcd"))
	require.EqualValues(t, 10, docs[0].ReplyTo())
	edits := h.tg.Calls("editMessageText")
	require.Len(t, edits, 1)
	require.Contains(t, edits[0].Params["text"], "file below")
}

func TestLongTranscriptInTheChatsFormat(t *testing.T) {
	h := newHarness(t)
	require.Equal(t, http.StatusOK, h.post(telegramtest.Text(1, user, user, 5, "private", "/formats")))
	kb := h.tg.Calls("sendMessage")[0].Params["reply_markup"]
	require.Contains(t, kb, `"callback_data":"fmt:srt"`)
	require.Equal(t, http.StatusOK, h.post(telegramtest.Button(2, user, user, 1001, "fmt:srt")))
	require.Len(t, h.tg.Calls("answerCallbackQuery"), 1)

	h.tg.AddFile("f1", []byte("voice"))
	require.Equal(t, http.StatusOK, h.post(telegramtest.Voice(3, user, 10, "f1", 5, "en")))
	j := h.finish(h.jobsOf(user)[0], strings.Repeat("long words ", 500))
	require.NoError(t, h.bot.Finished(h.ctx, j))
	docs := h.tg.Calls("sendDocument")
	require.Len(t, docs, 1)
	require.Equal(t, "transcript.srt", docs[0].Name)
	require.Contains(t, string(docs[0].File), "00:00:00,000 --> 00:00:04,000")
}

func TestTooManyRequestsIsWaitedOutAndDeliveredOnce(t *testing.T) {
	h := newHarness(t)
	h.tg.AddFile("f1", []byte("voice"))
	require.Equal(t, http.StatusOK, h.post(telegramtest.Voice(1, user, 10, "f1", 5, "en")))
	j := h.finish(h.jobsOf(user)[0], "hello")
	h.tg.Fail("editMessageText", telegramtest.Failure{Code: 429, Description: "Too Many Requests: retry after 3", RetryAfter: 3})
	require.NoError(t, h.bot.Finished(h.ctx, j))
	require.Contains(t, h.slept, 3*time.Second, "retry_after is waited out")
	edits := h.tg.Calls("editMessageText")
	require.Len(t, edits, 2, "the refused edit, then the one that went through")
	require.NoError(t, h.bot.Finished(h.ctx, j))
	n, err := h.bot.Sweep(h.ctx)
	require.NoError(t, err)
	require.Zero(t, n)
	require.Len(t, h.tg.Calls("editMessageText"), 2, "delivered once")
}

func TestLongRetryAfterGoesToTheSweep(t *testing.T) {
	h := newHarness(t)
	h.tg.AddFile("f1", []byte("voice"))
	require.Equal(t, http.StatusOK, h.post(telegramtest.Voice(1, user, 10, "f1", 5, "en")))
	j := h.finish(h.jobsOf(user)[0], "hello")
	h.tg.Fail("editMessageText", telegramtest.Failure{Code: 429, Description: "Too Many Requests", RetryAfter: 120})
	require.Error(t, h.bot.Finished(h.ctx, j))
	n, err := h.bot.Sweep(h.ctx)
	require.NoError(t, err)
	require.Zero(t, n, "not due before retry_after")
	h.clk.Advance(121 * time.Second)
	n, err = h.bot.Sweep(h.ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	edits := h.tg.Calls("editMessageText")
	require.Len(t, edits, 2)
	require.Equal(t, "hello", edits[1].Params["text"])
}

func TestSweepDeliversWhatThePipelineNeverHandedOver(t *testing.T) {
	h := newHarness(t)
	h.tg.AddFile("f1", []byte("voice"))
	require.Equal(t, http.StatusOK, h.post(telegramtest.Voice(1, user, 10, "f1", 5, "en")))
	h.finish(h.jobsOf(user)[0], "never handed over") // and Finished is not called: a crash
	h.clk.Advance(tgconf.DefaultResultCheck)
	n, err := h.bot.Sweep(h.ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, []string{"never handed over"}, texts(h.tg.Calls("editMessageText")))
}

func TestBlockedChatStopsDelivery(t *testing.T) {
	h := newHarness(t)
	h.tg.AddFile("f1", []byte("voice"))
	require.Equal(t, http.StatusOK, h.post(telegramtest.Voice(1, user, 10, "f1", 5, "en")))
	j := h.finish(h.jobsOf(user)[0], "hello")
	h.tg.Fail("editMessageText", telegramtest.Failure{Code: 403, Description: "Forbidden: bot was blocked by the user"})
	require.NoError(t, h.bot.Finished(h.ctx, j))
	chat, err := h.state.Chat(h.ctx, user)
	require.NoError(t, err)
	require.False(t, chat.BlockedAt.IsZero())
	h.clk.Advance(24 * time.Hour)
	_, err = h.bot.Sweep(h.ctx)
	require.NoError(t, err)
	require.Len(t, h.tg.Calls("editMessageText"), 1, "no retry into a blocked chat")
	require.Len(t, h.tg.Calls("sendMessage"), 1)

	// Writing again lifts the block.
	require.Equal(t, http.StatusOK, h.post(telegramtest.Text(2, user, user, 20, "private", "/help")))
	chat, err = h.state.Chat(h.ctx, user)
	require.NoError(t, err)
	require.True(t, chat.BlockedAt.IsZero())
}

func TestDeletedStatusMessageGetsANewReply(t *testing.T) {
	h := newHarness(t)
	h.tg.AddFile("f1", []byte("voice"))
	require.Equal(t, http.StatusOK, h.post(telegramtest.Voice(1, user, 10, "f1", 5, "en")))
	j := h.finish(h.jobsOf(user)[0], "hello")
	status := h.tg.Calls("sendMessage")[0]
	_ = status
	h.tg.Delete(1001) // the status message
	h.tg.Delete(10)   // and the voice message itself
	require.NoError(t, h.bot.Finished(h.ctx, j))
	sends := h.tg.Calls("sendMessage")
	require.Len(t, sends, 2)
	require.Equal(t, "hello", sends[1].Params["text"])
	require.Contains(t, sends[1].Params["reply_parameters"], `"allow_sending_without_reply":true`)
}

func TestFailedJobGetsPlainWords(t *testing.T) {
	h := newHarness(t)
	h.tg.AddFile("f1", []byte("voice"))
	require.Equal(t, http.StatusOK, h.post(telegramtest.Voice(1, user, 10, "f1", 5, "ru")))
	j := h.move(h.jobsOf(user)[0], job.Failed, "no_audio_stream", "the file has no sound in it")
	require.NoError(t, h.bot.Finished(h.ctx, j))
	require.Equal(t, []string{"В этом файле нет звука."}, texts(h.tg.Calls("editMessageText")))
}

func TestLargeVideoGetsAnUploadLink(t *testing.T) {
	h := newHarness(t)
	up := telegramtest.Video(1, user, 30, "big", 30<<20)
	require.Equal(t, http.StatusOK, h.post(up))
	require.Equal(t, http.StatusOK, h.post(up))
	require.Empty(t, h.tg.Calls("getFile"), "a bot cannot download 30 MB: no getFile")
	jobs := h.jobsOf(user)
	require.Len(t, jobs, 1)
	j := jobs[0]
	require.Equal(t, job.AwaitingUpload, j.State)
	require.EqualValues(t, 30<<20, j.SizeBytes)
	require.Equal(t, h.clk.Now().Add(tgconf.DefaultLinkWindow), j.UploadBy)
	sends := h.tg.Calls("sendMessage")
	require.Len(t, sends, 1)
	require.Contains(t, sends[0].Params["text"], "https://api.example/upload/"+j.ID+"?t=")
	require.Contains(t, sends[0].Params["text"], "30 MB")
}

func TestLargeFileWithoutUploadLinksIsRefusedPlainly(t *testing.T) {
	h := newHarness(t, func(c *tgconf.Config) { c.UploadLinkSecret = nil })
	require.Equal(t, http.StatusOK, h.post(telegramtest.Video(1, user, 30, "big", 30<<20)))
	require.Empty(t, h.jobsOf(user))
	require.Contains(t, h.tg.Calls("sendMessage")[0].Params["text"], "not set up")
}

func TestTransientStoreFailureAsksForRedelivery(t *testing.T) {
	h := newHarness(t)
	voice := []byte("voice")
	h.tg.AddFile("f1", voice)
	h.tg.Fail("getFile", telegramtest.Failure{Code: 502, Description: "Bad Gateway"})
	up := telegramtest.Voice(1, user, 10, "f1", len(voice), "en")
	require.Equal(t, http.StatusServiceUnavailable, h.post(up), "Telegram sends it again")
	require.False(t, h.s3.Has(job.SourceKey(h.jobsOf(user)[0].ID)))
	require.Equal(t, http.StatusOK, h.post(up))
	require.Len(t, h.jobsOf(user), 1)
	require.Equal(t, voice, h.s3.Object(t, job.SourceKey(h.jobsOf(user)[0].ID)))
	require.Len(t, h.tg.Calls("sendMessage"), 1)
}

func TestForgetRemovesTheChatsObjectsAndJobs(t *testing.T) {
	h := newHarness(t)
	h.tg.AddFile("f1", []byte("voice one"))
	h.tg.AddFile("f2", []byte("voice two"))
	require.Equal(t, http.StatusOK, h.post(telegramtest.Voice(1, user, 10, "f1", 9, "en")))
	require.Equal(t, http.StatusOK, h.post(telegramtest.Voice(2, user, 11, "f2", 9, "en")))
	jobs := h.jobsOf(user)
	require.Len(t, jobs, 2)
	h.finish(jobs[0], "first")
	require.Equal(t, http.StatusOK, h.post(telegramtest.Text(3, user, user, 12, "private", "/lang en-US")))

	require.Equal(t, http.StatusOK, h.post(telegramtest.Text(4, user, user, 13, "private", "/forget")))
	ask := h.tg.Calls("sendMessage")
	require.Contains(t, ask[len(ask)-1].Params["reply_markup"], "forget:yes")
	for _, j := range jobs {
		require.True(t, h.s3.Has(job.SourceKey(j.ID)), "nothing is deleted before the confirmation")
	}

	require.Equal(t, http.StatusOK, h.post(telegramtest.Button(5, user, user, 2000, "forget:yes")))
	for _, j := range jobs {
		require.False(t, h.s3.Has(job.SourceKey(j.ID)))
		require.False(t, h.s3.Has(job.ResultKey(j.ID)))
		got, err := h.jobs.Get(h.ctx, j.ID)
		require.NoError(t, err)
		require.True(t, got.Deleted())
	}
	chat, err := h.state.Chat(h.ctx, user)
	require.NoError(t, err)
	require.Empty(t, chat.Language, "the chat's settings are gone")
	edits := h.tg.Calls("editMessageText")
	require.Contains(t, edits[len(edits)-1].Params["text"], "Deleted: 2 jobs")
}

func TestLangIsPinnedForTheChatsNextJobs(t *testing.T) {
	h := newHarness(t)
	require.Equal(t, http.StatusOK, h.post(telegramtest.Text(1, user, user, 5, "private", "/lang xx-YY")))
	require.Contains(t, h.tg.Calls("sendMessage")[0].Params["text"], "don't know")
	require.Equal(t, http.StatusOK, h.post(telegramtest.Text(2, user, user, 6, "private", "/lang en-US")))
	h.tg.AddFile("f1", []byte("voice"))
	require.Equal(t, http.StatusOK, h.post(telegramtest.Voice(3, user, 10, "f1", 5, "en")))
	require.Equal(t, "en-US", h.jobsOf(user)[0].Language)
}

func TestGroupsTranscribeOnlyWhenAskedOrAuto(t *testing.T) {
	h := newHarness(t)
	const group = int64(-100123)
	voice := func(update, msg int64) []byte {
		return []byte(fmt.Sprintf(`{"update_id":%d,"message":{"message_id":%d,"date":1,"from":{"id":%d,"is_bot":false,"first_name":"T"},`+
			`"chat":{"id":%d,"type":"supergroup","title":"G"},"voice":{"file_id":"g%d","file_unique_id":"ug","duration":3,"file_size":5}}}`,
			update, msg, user, group, msg))
	}
	h.tg.AddFile("g50", []byte("voice"))
	h.tg.AddFile("g52", []byte("voice"))
	require.Equal(t, http.StatusOK, h.post(voice(1, 50)))
	require.Empty(t, h.jobsOf(group), "auto is off in groups by default")
	require.Empty(t, h.tg.Calls("sendMessage"))

	reply := fmt.Sprintf(`{"update_id":2,"message":{"message_id":51,"date":1,"from":{"id":%d,"is_bot":false,"first_name":"T"},`+
		`"chat":{"id":%d,"type":"supergroup","title":"G"},"text":"/transcribe@transcriber_bot",`+
		`"reply_to_message":{"message_id":50,"date":1,"chat":{"id":%d,"type":"supergroup"},"voice":{"file_id":"g50","file_unique_id":"ug","duration":3,"file_size":5}}}}`,
		user, group, group)
	require.Equal(t, http.StatusOK, h.post([]byte(reply)))
	jobs := h.jobsOf(group)
	require.Len(t, jobs, 1)
	require.EqualValues(t, 50, jobs[0].TelegramMessageID, "the job is keyed by the voice message, not the command")

	require.Equal(t, http.StatusOK, h.post(telegramtest.Text(3, user, group, 53, "supergroup", "/auto on")))
	require.Equal(t, http.StatusOK, h.post(voice(4, 52)))
	require.Len(t, h.jobsOf(group), 2)
}

func TestLongPollHandlesQueuedUpdatesOnce(t *testing.T) {
	h := newHarness(t)
	h.tg.AddFile("f1", []byte("voice"))
	h.tg.Queue(telegramtest.Voice(7, user, 10, "f1", 5, "en"))
	h.tg.Queue(telegramtest.Text(8, user, user, 11, "private", "/help"))
	ctx, cancel := context.WithCancel(h.ctx)
	done := make(chan error, 1)
	go func() { done <- h.bot.LongPoll(ctx) }()
	require.Eventually(t, func() bool { return len(h.tg.Calls("sendMessage")) == 2 }, 5*time.Second, 10*time.Millisecond)
	require.Eventually(t, func() bool {
		polls := h.tg.Calls("getUpdates")
		return len(polls) >= 2 && polls[len(polls)-1].Int("offset") == 9
	}, 5*time.Second, 10*time.Millisecond, "the offset confirms the handled updates")
	cancel()
	require.NoError(t, <-done)
	require.Len(t, h.jobsOf(user), 1)
	require.Len(t, h.tg.Calls("sendMessage"), 2)
}

func TestLongPollStopsWhenAWebhookIsSet(t *testing.T) {
	h := newHarness(t)
	h.tg.Fail("getUpdates", telegramtest.Failure{Code: 409, Description: "Conflict: can't use getUpdates method while webhook is active"})
	err := h.bot.LongPoll(h.ctx)
	require.ErrorContains(t, err, "webhook")
	require.NotContains(t, err.Error(), telegramtest.Token)
}

func TestDownloadErrorsCarryNoToken(t *testing.T) {
	h := newHarness(t, func(c *tgconf.Config) { c.APIURL = "http://127.0.0.1:1" })
	err := h.bot.Process(h.ctx, decode(t, telegramtest.Voice(1, user, 10, "f1", 5, "en")))
	require.Error(t, err)
	require.NotContains(t, err.Error(), telegramtest.Token)
}

func decode(t *testing.T, raw []byte) *models.Update {
	var u models.Update
	require.NoError(t, json.Unmarshal(raw, &u))
	return &u
}

func TestProgressEditsAreSpacedOut(t *testing.T) {
	h := newHarness(t)
	h.tg.AddFile("f1", []byte("voice"))
	require.Equal(t, http.StatusOK, h.post(telegramtest.Voice(1, user, 10, "f1", 5, "en")))
	j, err := h.jobs.Claim(h.ctx, h.jobsOf(user)[0].ID, job.Ingest)
	require.NoError(t, err)
	j.State = job.Created
	require.NoError(t, h.bot.Moved(h.ctx, j))
	require.Empty(t, h.tg.Calls("editMessageText"), "within 3 s of the status message: no edit")

	h.clk.Advance(tgconf.DefaultStatusEvery)
	require.NoError(t, h.bot.Moved(h.ctx, j))
	j.State = job.Transcribe
	require.NoError(t, h.bot.Moved(h.ctx, j))
	h.clk.Advance(tgconf.DefaultStatusEvery)
	require.NoError(t, h.bot.Moved(h.ctx, j))
	require.Equal(t, []string{"Preparing the audio…", "Recognizing speech…"}, texts(h.tg.Calls("editMessageText")))
}

// failingJobs is a job store whose CreateForMessage fails while down is set.
type failingJobs struct {
	job.Store
	down bool
}

func (f *failingJobs) CreateForMessage(ctx context.Context, d job.Draft) (job.Job, bool, error) {
	if f.down {
		return job.Job{}, false, errs.New(errs.Unavailable, "store_unavailable", "the job store is unavailable")
	}
	return f.Store.CreateForMessage(ctx, d)
}

func TestStoreFailureAnswers5xxAndTheRedeliveryMakesTheJob(t *testing.T) {
	h := newHarness(t)
	jobs := &failingJobs{Store: h.jobs, down: true}
	var err error
	h.bot, err = telegram.New(telegram.Deps{Jobs: jobs, State: h.state, Outbox: h.box, Objects: h.obj, Clock: h.clk, Log: testLog(t)},
		tgconf.Config{Token: telegramtest.Token, WebhookSecret: secret, APIURL: h.tg.URL, Allowed: tgconf.Allowed{Everyone: true}})
	require.NoError(t, err)
	h.server.Config.Handler = h.bot
	h.tg.AddFile("f1", []byte("voice"))
	up := telegramtest.Voice(1, user, 10, "f1", 5, "en")
	require.Equal(t, http.StatusServiceUnavailable, h.post(up))
	require.Empty(t, h.tg.Calls("sendMessage"), "no reply before the job is recorded")
	jobs.down = false
	require.Equal(t, http.StatusOK, h.post(up))
	require.Len(t, h.jobsOf(user), 1)
	require.Len(t, h.tg.Calls("sendMessage"), 1)
}

func TestUploadLinkPointsWhereTheWebhookWasCalled(t *testing.T) {
	h := newHarness(t, func(c *tgconf.Config) { c.PublicURL = "" })
	require.Equal(t, http.StatusOK, h.post(telegramtest.Video(1, user, 30, "big", 30<<20)))
	text := h.tg.Calls("sendMessage")[0].Params["text"]
	require.Contains(t, text, h.server.URL+"/upload/", "the local server's own address, over http")

	// Behind API Gateway: the gateway's domain, over https.
	req, err := http.NewRequest(http.MethodPost, h.server.URL+telegram.WebhookPath,
		bytes.NewReader(telegramtest.Video(2, user, 31, "big2", 30<<20)))
	require.NoError(t, err)
	req.Host = "d5dexample.apigw.yandexcloud.net"
	req.Header.Set(telegram.SecretHeader, secret)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	text = h.tg.Calls("sendMessage")[1].Params["text"]
	require.Contains(t, text, "https://d5dexample.apigw.yandexcloud.net/upload/")
}

func TestAnotherBotsCommandIsNotAnswered(t *testing.T) {
	h := newHarness(t)
	require.Equal(t, http.StatusOK, h.post(telegramtest.Text(1, user, -100777, 5, "supergroup", "/start@some_other_bot")))
	require.Equal(t, http.StatusOK, h.post(telegramtest.Text(2, 999, -100777, 6, "supergroup", "/x@some_other_bot")))
	require.Empty(t, h.tg.Calls("sendMessage"), "neither help nor a refusal for another bot's command")
	require.Equal(t, http.StatusOK, h.post(telegramtest.Text(3, user, -100777, 7, "supergroup", "/help@"+telegramtest.Username)))
	require.Len(t, h.tg.Calls("sendMessage"), 1)
	require.Len(t, h.tg.Calls("getMe"), 1, "the bot's name is asked once")
}

func TestALongJobsResultIsNotGivenUpByTheLooksAtIt(t *testing.T) {
	h := newHarness(t)
	require.Equal(t, http.StatusOK, h.post(telegramtest.Video(1, user, 30, "big", 30<<20)))
	j := h.jobsOf(user)[0]
	for i := 0; i < 30; i++ { // 15 hours of looks at a job still waiting for its file
		h.clk.Advance(tgconf.DefaultResultCheck)
		_, err := h.bot.Sweep(h.ctx)
		require.NoError(t, err)
	}
	j = h.finish(j, "at last")
	h.tg.Fail("editMessageText", telegramtest.Failure{Code: 502, Description: "Bad Gateway"})
	require.Error(t, h.bot.Finished(h.ctx, j), "the first try fails")
	h.clk.Advance(time.Minute)
	n, err := h.bot.Sweep(h.ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n, "the failure is retried, not given up")
	edits := h.tg.Calls("editMessageText")
	require.Equal(t, "at last", edits[len(edits)-1].Params["text"])
}

func TestAMigratedGroupIsNotRetried(t *testing.T) {
	h := newHarness(t)
	h.tg.AddFile("f1", []byte("voice"))
	require.Equal(t, http.StatusOK, h.post(telegramtest.Voice(1, user, 10, "f1", 5, "en")))
	j := h.finish(h.jobsOf(user)[0], "hello")
	h.tg.Fail("editMessageText", telegramtest.Failure{Code: 400, Description: "Bad Request: group chat was upgraded to a supergroup chat"})
	h.tg.Fail("sendMessage", telegramtest.Failure{Code: 400, Description: "Bad Request: group chat was upgraded to a supergroup chat"})
	require.Error(t, h.bot.Finished(h.ctx, j))
	h.clk.Advance(time.Hour)
	n, err := h.bot.Sweep(h.ctx)
	require.NoError(t, err)
	require.Zero(t, n)
}

func TestABrokenDownloadCarriesNoToken(t *testing.T) {
	h := newHarness(t)
	h.tg.AddFile("f1", []byte("voice"))
	h.tg.CutDownloads()
	err := h.bot.Process(h.ctx, decode(t, telegramtest.Voice(1, user, 10, "f1", 5, "en")))
	require.Error(t, err, "the download broke off")
	require.Len(t, h.tg.Calls("getFile"), 1, "it got as far as the download link")
	require.NotContains(t, err.Error(), telegramtest.Token)
	require.NotContains(t, err.Error(), strings.SplitN(telegramtest.Token, ":", 2)[1])
	require.Contains(t, err.Error(), "downloaded from Telegram")
	require.Equal(t, http.StatusServiceUnavailable, h.post(telegramtest.Voice(2, user, 11, "f1", 5, "en")), "Telegram sends it again")
}
