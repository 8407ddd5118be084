package telegram_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/telegram"
	"transcriber/internal/telegram/telegramtest"
	"transcriber/internal/telegram/tgconf"
)

// stranger is a user not on the harness's allow-list.
const stranger = int64(999)

// rows counts the rows of every table the bot or its jobs write, read
// from the database file itself.
func (h *harness) rows() map[string]int {
	h.t.Helper()
	db, err := sql.Open("sqlite", "file:"+h.dbPath+"?mode=ro")
	require.NoError(h.t, err)
	defer db.Close()
	out := map[string]int{}
	for _, table := range []string{"jobs", "telegram_chats", "outbox", "counters"} {
		var n int
		require.NoError(h.t, db.QueryRowContext(h.ctx, "SELECT count(*) FROM "+table).Scan(&n))
		out[table] = n
	}
	return out
}

// nothingBut is rows with every table empty but those given.
func nothingBut(counts map[string]int) map[string]int {
	out := map[string]int{"jobs": 0, "telegram_chats": 0, "outbox": 0, "counters": 0}
	for k, v := range counts {
		out[k] = v
	}
	return out
}

// strangerSays is one of the things a stranger may send in their private
// chat, as update n (message 100+n).
func strangerSays(n int) []byte {
	up, msg := int64(n), int64(100+n)
	switch n % 6 {
	case 0:
		return telegramtest.Voice(up, stranger, msg, "f1", 5, "en")
	case 1:
		return telegramtest.Text(up, stranger, stranger, msg, "private", "/forget")
	case 2:
		return telegramtest.Text(up, stranger, stranger, msg, "private", "/lang en-US")
	case 3:
		return telegramtest.Text(up, stranger, stranger, msg, "private", "hello?")
	case 4:
		return telegramtest.Text(up, stranger, stranger, msg, "private", "/start@"+telegramtest.Username)
	}
	return telegramtest.Document(up, stranger, msg, "f1", "audio/mpeg", 0)
}

// requireTold checks that the Bot API saw told refusals, to the
// stranger, with their id, and no other call.
func requireTold(t *testing.T, h *harness, told int) {
	t.Helper()
	calls := h.tg.Calls()
	require.Len(t, calls, told, "no Bot API call but the refusals: %v", calls)
	for _, c := range calls {
		require.Equal(t, "sendMessage", c.Method)
		require.Equal(t, fmt.Sprint(stranger), c.Params["chat_id"])
		require.Contains(t, c.Params["text"], "private")
		require.Contains(t, c.Params["text"], fmt.Sprint(stranger), "the id to give the owner")
		require.Contains(t, c.Params["text"], "once a day")
	}
}

// A stranger who writes twenty times — a recording, /forget, a setting,
// chatter — is told once that the bot is private, and leaves one row: the
// day's mark. The next day they are told once again. An allowed user is
// answered as always in between.
func TestAStrangerIsToldOnceADayAndLeavesOneRow(t *testing.T) {
	h := newHarness(t)
	h.tg.AddFile("f1", []byte("voice"))
	for i := 0; i < 20; i++ {
		require.Equal(t, http.StatusOK, h.post(strangerSays(i)), "update %d", i)
	}
	requireTold(t, h, 1)
	require.EqualValues(t, 100, h.tg.Calls("sendMessage")[0].ReplyTo(), "the answer replies to the first message")
	require.Equal(t, nothingBut(map[string]int{"counters": 1}), h.rows(), "no job, no chat, no delivery: the day's mark alone")
	require.Empty(t, h.jobsOf(stranger))

	// An allowed user is not touched by the stranger's mark.
	require.Equal(t, http.StatusOK, h.post(telegramtest.Text(50, user, user, 500, "private", "/help")))
	require.Equal(t, http.StatusOK, h.post(telegramtest.Text(51, user, user, 501, "private", "/help")))
	require.Len(t, h.tg.Calls("sendMessage"), 3, "the allowed user's two messages are both answered")
	h.tg.AddFile("f2", []byte("voice"))
	require.Equal(t, http.StatusOK, h.post(telegramtest.Voice(52, user, 502, "f2", 5, "en")))
	require.Len(t, h.jobsOf(user), 1)

	// Still the same UTC day: nothing more for the stranger.
	before := len(h.tg.Calls())
	h.clk.Advance(11*time.Hour + 59*time.Minute) // 23:59 UTC
	require.Equal(t, http.StatusOK, h.post(strangerSays(20)))
	require.Len(t, h.tg.Calls(), before)

	// The next UTC day: told once again, and one more mark.
	h.clk.Advance(time.Minute)
	for i := 21; i < 25; i++ {
		require.Equal(t, http.StatusOK, h.post(strangerSays(i)))
	}
	told := h.tg.Calls("sendMessage")
	require.Len(t, told, 5)
	require.EqualValues(t, 121, told[4].ReplyTo())
	require.Equal(t, fmt.Sprint(stranger), told[4].Params["chat_id"])
	// One mark a day for the stranger; the rest is the allowed user's: their
	// chat, two replies, their job with its status and result deliveries.
	require.Equal(t, map[string]int{"counters": 2, "telegram_chats": 1, "outbox": 4, "jobs": 1}, h.rows())
}

// Twenty messages of one stranger handled at once (Telegram's webhook
// calls in parallel) give one answer: the day's mark is taken by one.
func TestTwentyMessagesOfAStrangerAtOnceGetOneAnswer(t *testing.T) {
	h := newHarness(t)
	h.tg.AddFile("f1", []byte("voice"))
	statuses := make([]int, 20)
	fails := make([]error, 20)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range statuses {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			<-start
			statuses[i], fails[i] = postUpdate(h, strangerSays(i))
		}(i)
	}
	close(start)
	wg.Wait()
	for i := range statuses {
		require.NoError(t, fails[i])
		require.Equal(t, http.StatusOK, statuses[i], "update %d: handled, never sent again", i)
	}
	requireTold(t, h, 1)
	require.Equal(t, nothingBut(map[string]int{"counters": 1}), h.rows())
}

// postUpdate is harness.post for another goroutine: it returns what
// failed instead of failing the test.
func postUpdate(h *harness, update []byte) (int, error) {
	req, err := http.NewRequest(http.MethodPost, h.server.URL+telegram.WebhookPath, bytes.NewReader(update))
	if err != nil {
		return 0, err
	}
	req.Header.Set(telegram.SecretHeader, secret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	return resp.StatusCode, resp.Body.Close()
}

// In a group a stranger gets nothing at all: no answer, no Bot API call,
// nothing stored, whatever they send — and no job even where an allowed
// member turned /auto on.
func TestAStrangerInAGroupGetsNothingAndLeavesNothing(t *testing.T) {
	h := newHarness(t)
	const grp = int64(-100999)
	says := []string{"/start", "/help", "/forget", "/auto on", "/lang en-US", "/transcribe", "/usage", "/start@" + telegramtest.Username}
	for i, text := range says {
		require.Equal(t, http.StatusOK, h.post(telegramtest.Text(int64(i+1), stranger, grp, int64(10+i), "supergroup", text)))
	}
	require.Empty(t, h.tg.Calls(), "not a word, not even getMe")
	require.Equal(t, nothingBut(nil), h.rows())

	// An allowed member turns /auto on: the stranger's recordings still
	// make no job.
	require.Equal(t, http.StatusOK, h.post(telegramtest.Text(20, user, grp, 30, "supergroup", "/auto on")))
	calls := len(h.tg.Calls())
	chat, err := h.state.Chat(h.ctx, grp)
	require.NoError(t, err)
	h.tg.AddFile("g31", []byte("voice"))
	voice := fmt.Sprintf(`{"update_id":21,"message":{"message_id":31,"date":1,"from":{"id":%d,"is_bot":false,"first_name":"S"},`+
		`"chat":{"id":%d,"type":"supergroup","title":"G"},"voice":{"file_id":"g31","file_unique_id":"ug","duration":3,"file_size":5}}}`, stranger, grp)
	require.Equal(t, http.StatusOK, h.post([]byte(voice)))
	require.Len(t, h.tg.Calls(), calls, "nothing said, nothing fetched")
	require.Empty(t, h.jobsOf(grp))
	after, err := h.state.Chat(h.ctx, grp)
	require.NoError(t, err)
	require.Equal(t, chat, after, "the group's settings are not written")
	require.Equal(t, nothingBut(map[string]int{"telegram_chats": 1, "outbox": 1}), h.rows(), "the member's /auto and its answer only")
}

// A refusal whose send fails for now gives the day's mark back: the
// update, sent again, tells the stranger.
func TestARefusalThatCouldNotBeSentIsSentOnTheRedelivery(t *testing.T) {
	h := newHarness(t)
	h.tg.Fail("sendMessage", telegramtest.Failure{Code: 502, Description: "Bad Gateway"})
	up := telegramtest.Text(1, stranger, stranger, 10, "private", "hi")
	require.Equal(t, http.StatusServiceUnavailable, h.post(up), "Telegram sends it again")
	require.Equal(t, http.StatusOK, h.post(up))
	require.Len(t, h.tg.Calls("sendMessage"), 2, "the failed send, then the one that went through")
	require.Equal(t, http.StatusOK, h.post(telegramtest.Text(2, stranger, stranger, 11, "private", "hi again")))
	require.Len(t, h.tg.Calls("sendMessage"), 2)
	require.Equal(t, nothingBut(map[string]int{"counters": 1}), h.rows())
}

// A refusal Telegram refuses for good (the stranger blocked the bot, a bad
// request) keeps the day's mark and stores nothing else: no blocked chat
// is recorded for a stranger, and nothing is tried again that day.
func TestARefusalTelegramRefusesIsNotTriedAgainThatDay(t *testing.T) {
	for name, f := range map[string]telegramtest.Failure{
		"blocked":    goneChats["blocked"],
		"badRequest": {Code: 400, Description: "Bad Request: message text is empty"},
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t)
			h.tg.Fail("sendMessage", f)
			require.Equal(t, http.StatusOK, h.post(telegramtest.Text(1, stranger, stranger, 10, "private", "hi")), "sending again would fail the same way")
			require.Equal(t, http.StatusOK, h.post(telegramtest.Text(2, stranger, stranger, 11, "private", "hi")))
			require.Len(t, h.tg.Calls("sendMessage"), 1, "one try a day")
			require.Equal(t, nothingBut(map[string]int{"counters": 1}), h.rows(), "no chat row marked blocked for a stranger")
		})
	}
}

// Without a counters store there is nowhere to keep the day's mark: a
// stranger is told nothing, and nothing is stored.
func TestWithoutCountersAStrangerIsToldNothing(t *testing.T) {
	h := newHarness(t)
	var err error
	h.bot, err = telegram.New(telegram.Deps{Jobs: h.jobs, State: h.state, Outbox: h.box, Objects: h.obj, Clock: h.clk, Log: testLog(t),
		Sleep: func(ctx context.Context, d time.Duration) error { return ctx.Err() }},
		tgconf.Config{Token: telegramtest.Token, WebhookSecret: secret, APIURL: h.tg.URL})
	require.NoError(t, err)
	h.server.Config.Handler = h.bot
	for i := 0; i < 3; i++ {
		require.Equal(t, http.StatusOK, h.post(strangerSays(i)))
	}
	require.Empty(t, h.tg.Calls())
	require.Equal(t, nothingBut(nil), h.rows())
}
