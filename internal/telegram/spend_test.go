package telegram_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/httpapi/openapitest"
	"transcriber/internal/job"
	"transcriber/internal/quota"
	"transcriber/internal/spend"
	"transcriber/internal/store/sqlite"
	"transcriber/internal/telegram"
	"transcriber/internal/telegram/telegramtest"
	"transcriber/internal/telegram/tgconf"
)

// withCounters serves h's bot again with counters of its own and c.
func (h *harness) withCounters(c tgconf.Config) quota.Counters {
	h.t.Helper()
	db, err := sqlite.Open(h.ctx, filepath.Join(h.t.TempDir(), "counters.db"), h.clk)
	require.NoError(h.t, err)
	h.t.Cleanup(func() { _ = db.Close() })
	counters := sqlite.NewCounters(db)
	h.bot, err = telegram.New(telegram.Deps{
		Jobs: h.jobs, State: h.state, Outbox: h.box, Objects: h.obj, Counters: counters, Clock: h.clk, Log: testLog(h.t),
		Sleep: func(ctx context.Context, d time.Duration) error { h.clk.Advance(d); return ctx.Err() },
	}, c)
	require.NoError(h.t, err)
	h.server.Close()
	h.server = httptest.NewServer(openapitest.Handler(h.t, h.bot))
	h.t.Cleanup(h.server.Close)
	return counters
}

// limitedBot is a harness whose bot has counters of their own and the
// limits l.
func limitedBot(t *testing.T, l spend.Limits) (*harness, quota.Counters) {
	h := newHarness(t)
	cfg := tgconf.Config{
		Token: telegramtest.Token, WebhookSecret: secret, APIURL: h.tg.URL, DefaultLanguage: "ru-RU",
		PublicURL: "https://api.example", UploadLinkSecret: []byte(strings.Repeat("k", 32)), Limits: l,
	}
	cfg.Allowed, _ = tgconf.ParseAllowed(fmt.Sprint(user))
	return h, h.withCounters(cfg)
}

// counted is user's count of unfinished jobs made today.
func (h *harness) counted(c quota.Counters) int64 {
	h.t.Helper()
	day, _ := spend.Day(h.clk.Now())
	n, err := c.Used(h.ctx, spend.ActiveKey(spend.Telegram(user)), day)
	require.NoError(h.t, err)
	return n
}

// With LIMIT_ACTIVE_JOBS=2 the 2nd recording makes a job and the 3rd is
// answered with an explanation and makes none; a redelivered update of a
// job already made goes on; once a job ends, a new one is taken.
func TestBotActiveJobsLimitRefusesAtItsEdge(t *testing.T) {
	l := spend.Limits{ActiveJobs: 2}
	h, c := limitedBot(t, l)
	for i := int64(1); i <= 4; i++ {
		h.tg.AddFile(fmt.Sprintf("f%d", i), []byte("voice"))
	}
	require.Equal(t, http.StatusOK, h.post(telegramtest.Voice(1, user, 10, "f1", 5, "en")))
	require.Equal(t, http.StatusOK, h.post(telegramtest.Voice(2, user, 11, "f2", 5, "en")))
	require.Len(t, h.jobsOf(user), 2, "the 2nd job is made")
	for _, j := range h.jobsOf(user) {
		require.Equal(t, spend.Telegram(user), j.ChargedTo, "charged to the user who sent it")
	}

	require.Equal(t, http.StatusOK, h.post(telegramtest.Voice(3, user, 12, "f3", 5, "ru")))
	require.Len(t, h.jobsOf(user), 2, "the 3rd is refused: no job")
	sends := h.tg.Calls("sendMessage")
	last := sends[len(sends)-1]
	require.EqualValues(t, 12, last.ReplyTo())
	require.Contains(t, last.Params["text"], "Записей у вас в работе: 2", "told in the user's language")
	require.Len(t, h.tg.Calls("getFile"), 2, "the refused file is not fetched")

	require.Equal(t, http.StatusOK, h.post(telegramtest.Voice(2, user, 11, "f2", 5, "en")), "a redelivery of a job made")
	require.Len(t, h.jobsOf(user), 2)
	require.Len(t, h.tg.Calls("sendMessage"), len(sends), "nothing more is said")
	require.Equal(t, int64(2), h.counted(c))

	// The pipeline ends a job, and gives its place back as it saves it.
	jobs := h.jobsOf(user)
	spend.Ended(h.ctx, c, l, h.move(jobs[len(jobs)-1], job.Failed, "x", "x"), testLog(t))
	require.Equal(t, http.StatusOK, h.post(telegramtest.Voice(4, user, 13, "f4", 5, "en")))
	require.Len(t, h.jobsOf(user), 3, "an ended job frees its place")
	require.Equal(t, int64(2), h.counted(c))
}

// Twenty recordings of one user arriving at once against a limit of 2
// make exactly 2 jobs; a redelivery below the limit takes no second
// place, and /forget gives the places back.
func TestBotIntakeKeepsTheLimitUnderConcurrency(t *testing.T) {
	l := spend.Limits{ActiveJobs: 2}
	h, c := limitedBot(t, l)
	const n = 20
	updates := make([][]byte, n)
	for i := range updates {
		h.tg.AddFile(fmt.Sprintf("f%d", i), []byte("voice"))
		updates[i] = telegramtest.Voice(int64(i+1), user, int64(100+i), fmt.Sprintf("f%d", i), 5, "en")
	}
	statuses := make([]int, n)
	fails := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range updates {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, err := http.NewRequest(http.MethodPost, h.server.URL+telegram.WebhookPath, bytes.NewReader(updates[i]))
			if err != nil {
				fails[i] = err
				return
			}
			req.Header.Set(telegram.SecretHeader, secret)
			<-start
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				fails[i] = err
				return
			}
			_ = resp.Body.Close()
			statuses[i] = resp.StatusCode
		}()
	}
	close(start)
	wg.Wait()
	for i := range updates {
		require.NoError(t, fails[i])
		require.Equal(t, http.StatusOK, statuses[i])
	}
	jobs := h.jobsOf(user)
	require.Len(t, jobs, 2, "exactly the limit is made")
	require.Equal(t, int64(2), h.counted(c))

	// Below the limit, a redelivered update takes a place and gives it
	// back when it finds its job.
	spend.Ended(h.ctx, c, l, h.move(jobs[0], job.Done, "", ""), testLog(t))
	require.Equal(t, int64(1), h.counted(c))
	require.Equal(t, http.StatusOK, h.post(updates[jobs[1].TelegramMessageID-100]))
	require.Len(t, h.jobsOf(user), 2)
	require.Equal(t, int64(1), h.counted(c))

	require.Equal(t, http.StatusOK, h.post(telegramtest.Text(50, user, user, 500, "private", "/forget")))
	yes, _ := forgetButtons(t, h)
	require.Equal(t, http.StatusOK, h.post(telegramtest.Button(51, user, user, 501, yes)))
	require.Zero(t, h.counted(c), "/forget ended the unfinished job, and gave its place back")
}

// A job whose chat is found gone ends at once, and gives its place back.
func TestBotJobOfAGoneChatGivesBackItsPlace(t *testing.T) {
	h, c := limitedBot(t, spend.Limits{ActiveJobs: 1})
	h.tg.AddFile("f1", []byte("voice"))
	h.tg.Fail("sendMessage", goneChats["blocked"])
	require.Equal(t, http.StatusOK, h.post(telegramtest.Voice(1, user, 10, "f1", 5, "en")))
	jobs := h.jobsOf(user)
	require.Len(t, jobs, 1)
	require.Equal(t, "chat_gone", jobs[0].ErrorCode)
	require.Zero(t, h.counted(c))
}

// An exempt user has no limit of unfinished jobs, and takes no count.
func TestBotExemptUserHasNoActiveLimit(t *testing.T) {
	h, c := limitedBot(t, spend.Limits{ActiveJobs: 1, Exempt: map[int64]bool{user: true}})
	for i := int64(1); i <= 3; i++ {
		h.tg.AddFile(fmt.Sprintf("f%d", i), []byte("voice"))
		require.Equal(t, http.StatusOK, h.post(telegramtest.Voice(i, user, 10+i, fmt.Sprintf("f%d", i), 5, "en")))
	}
	require.Len(t, h.jobsOf(user), 3)
	require.Zero(t, h.counted(c))
}

// /transcribe in a group charges the user who asked, not the one who
// sent the recording.
func TestTranscribeChargesTheAsker(t *testing.T) {
	h := newHarness(t)
	const group, sender = int64(-100123), int64(777)
	h.tg.AddFile("g50", []byte("voice"))
	reply := fmt.Sprintf(`{"update_id":2,"message":{"message_id":51,"date":1,"from":{"id":%d,"is_bot":false,"first_name":"T"},`+
		`"chat":{"id":%d,"type":"supergroup","title":"G"},"text":"/transcribe",`+
		`"reply_to_message":{"message_id":50,"date":1,"from":{"id":%d,"is_bot":false,"first_name":"S"},"chat":{"id":%d,"type":"supergroup"},"voice":{"file_id":"g50","file_unique_id":"ug","duration":3,"file_size":5}}}}`,
		user, group, sender, group)
	require.Equal(t, http.StatusOK, h.post([]byte(reply)))
	jobs := h.jobsOf(group)
	require.Len(t, jobs, 1)
	require.Equal(t, spend.Telegram(user), jobs[0].ChargedTo)
}

// /usage shows the user's day, the service's month and the user's
// unfinished jobs, with their limits, in the user's language.
func TestUsageCommand(t *testing.T) {
	h := newHarness(t)
	cfg := tgconf.Config{
		Token: telegramtest.Token, WebhookSecret: secret, APIURL: h.tg.URL, DefaultLanguage: "ru-RU",
		Limits: spend.Limits{AudioPerDay: 6 * time.Hour, ActiveJobs: 3},
	}
	cfg.Allowed, _ = tgconf.ParseAllowed(fmt.Sprint(user))
	c := h.withCounters(cfg)
	day := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	_, _, err := c.Reserve(h.ctx, spend.DayKey(spend.Telegram(user)), day, 2*3600+10*60, 0)
	require.NoError(t, err)
	_, _, err = c.Reserve(h.ctx, spend.AudioDayKey(spend.Telegram(user)), day, 2*3600, 0)
	require.NoError(t, err)
	_, _, err = c.Reserve(h.ctx, spend.MonthKey, time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), 5*3600, 0)
	require.NoError(t, err)
	h.tg.AddFile("f1", []byte("voice"))
	require.Equal(t, http.StatusOK, h.post(telegramtest.Voice(1, user, 10, "f1", 5, "en")))

	require.Equal(t, http.StatusOK, h.post(telegramtest.Text(2, user, user, 11, "private", "/usage")))
	sends := h.tg.Calls("sendMessage")
	text := sends[len(sends)-1].Params["text"]
	require.Contains(t, text, "Today: 2 h 10 min billed of 6 h (2 h of audio; resets at 00:00 UTC).")
	require.Contains(t, text, "This month, the whole service: 5 h billed of no limit (0 s of audio; resets on 1 Dec 2026, 00:00 UTC).")
	require.Contains(t, text, "SpeechKit bills at least 15 s a recording.")
	require.Contains(t, text, "Recordings in progress: 1 of 3 at once.")

	ru := []byte(fmt.Sprintf(`{"update_id":3,"message":{"message_id":12,"date":1,"from":{"id":%d,"is_bot":false,"first_name":"T","language_code":"ru"},`+
		`"chat":{"id":%d,"type":"private"},"text":"/usage"}}`, user, user))
	require.Equal(t, http.StatusOK, h.post(ru))
	sends = h.tg.Calls("sendMessage")
	text = sends[len(sends)-1].Params["text"]
	require.Contains(t, text, "Сегодня: оплачено 2 ч 10 мин из 6 ч (2 ч аудио; лимит обновится в 00:00 UTC).")
	require.Contains(t, text, "Записей в работе: 1 из 3 одновременно.")
}

// A job refused by an audio limit is explained in the user's language,
// with the numbers from the job's message.
func TestQuotaExceededIsExplained(t *testing.T) {
	h := newHarness(t)
	h.tg.AddFile("f1", []byte("voice"))
	require.Equal(t, http.StatusOK, h.post(telegramtest.Voice(1, user, 10, "f1", 5, "ru")))
	msg := "this recording is 2 h 10 min; 1 h 05 min of today's 6 h is left; the limit resets at 00:00 UTC"
	j := h.move(h.jobsOf(user)[0], job.Failed, spend.CodeQuotaExceeded, msg)
	require.NoError(t, h.bot.Finished(h.ctx, j))
	var said []string
	for _, c := range h.tg.Calls("sendMessage", "editMessageText") {
		said = append(said, c.Params["text"])
	}
	require.Contains(t, fmt.Sprint(said), "Запись не расшифрована: лимит распознавания был бы превышен ("+msg+").")
}
