package app_test

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/app"
	"transcriber/internal/httpapi"
	"transcriber/internal/httpapi/openapitest"
	"transcriber/internal/job"
	"transcriber/internal/outbox"
	"transcriber/internal/telegram"
	"transcriber/internal/telegram/telegramtest"
	"transcriber/internal/telegram/tgconf"
)

func TestTelegramBlockedChatCostsNoDownloadAndNoRecognition(t *testing.T) {
	b := newBotStack(t)
	voice, err := os.ReadFile(fixtures(t)["voice.ogg"])
	require.NoError(t, err)
	b.tg.AddFile("voice-1", voice)
	b.tg.Fail("sendMessage", telegramtest.Failure{Code: 403, Description: "Forbidden: bot was blocked by the user"})
	update := telegramtest.Voice(1, 601, 70, "voice-1", len(voice), "en")

	require.Equal(t, http.StatusOK, b.webhook(update, webhookSecret), "handled: Telegram must not send it again")
	require.Equal(t, http.StatusOK, b.webhook(update, webhookSecret), "a redelivery all the same")
	require.Empty(t, b.tg.Calls("getFile"))
	select {
	case ev := <-b.events:
		t.Fatalf("a file reached storage: %s", ev)
	default:
	}
	b.poll()
	require.Zero(t, b.sk.RecognizeCalls(), "nothing is recognized")

	page, err := b.store.List(b.ctx, "tg:601", "", 10)
	require.NoError(t, err)
	require.Len(t, page.Jobs, 1)
	require.Equal(t, job.Failed, page.Jobs[0].State)
	require.Equal(t, "chat_gone", page.Jobs[0].ErrorCode)
	require.Len(t, b.tg.Calls("sendMessage"), 1, "nothing more is sent into the chat")
}

func TestTelegramUnsizedDocumentTooBigToFetchGetsTheLinkAtOnce(t *testing.T) {
	b := newBotStack(t)
	b.tg.Fail("getFile", telegramtest.Failure{Code: 400, Description: "Bad Request: file is too big"})
	require.Equal(t, http.StatusOK, b.webhook(telegramtest.Document(1, 602, 71, "big-doc", "video/mp4", 0), webhookSecret))
	sends := b.tg.Calls("sendMessage")
	require.Len(t, sends, 1)
	link := linkRE.FindString(sends[0].Params["text"])
	require.NotEmpty(t, link, "the status message carries the upload link: %s", sends[0].Params["text"])

	// The link's page answers: the job waits for the upload.
	resp, err := http.Get(link)
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	page, err := b.store.List(b.ctx, "tg:602", "", 10)
	require.NoError(t, err)
	require.Len(t, page.Jobs, 1)
	require.Equal(t, job.AwaitingUpload, page.Jobs[0].State)
}

// A user not on the allow-list who floods the bot — twenty voice notes at
// once, through the telegram function's handler wired as in the cloud
// (the bot keeps its marks in the App's counters) — costs one answer a
// day: no download, no job, no recognition, no chat or delivery record. In
// a group they get nothing at all.
func TestTelegramStrangersFloodCostsOneAnswerADay(t *testing.T) {
	b := newBotStackWith(t, nil,
		func(c *app.Config) {
			var err error
			c.Telegram.Allowed, err = tgconf.ParseAllowed("601")
			require.NoError(t, err)
		})
	voice, err := os.ReadFile(fixtures(t)["voice.ogg"])
	require.NoError(t, err)
	b.tg.AddFile("voice-s", voice)
	const stranger = 777

	statuses := make([]int, 20)
	fails := make([]error, 20)
	var wg sync.WaitGroup
	for i := range statuses {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			ev := &httpapi.GatewayRequest{
				HTTPMethod: http.MethodPost,
				Path:       telegram.WebhookPath,
				Headers:    map[string]string{"Content-Type": "application/json", telegram.SecretHeader: webhookSecret},
				Body:       string(telegramtest.Voice(int64(i+1), stranger, int64(80+i), "voice-s", len(voice), "en")),
			}
			resp, err := b.app.OnTelegram(b.ctx, ev)
			fails[i] = err
			if resp != nil {
				statuses[i] = resp.StatusCode
				openapitest.Gateway(t, ev, resp)
			}
		}(i)
	}
	wg.Wait()
	for i := range statuses {
		require.NoError(t, fails[i])
		require.Equal(t, http.StatusOK, statuses[i], "update %d: handled, never sent again", i)
	}
	sends := b.tg.Calls("sendMessage")
	require.Len(t, sends, 1, "one answer for twenty messages")
	require.Contains(t, sends[0].Params["text"], "777")
	require.Len(t, b.tg.Calls(), 1, "and no other Bot API call: no getFile, no download")
	select {
	case ev := <-b.events:
		t.Fatalf("a file reached storage: %s", ev)
	default:
	}
	b.poll()
	require.Zero(t, b.sk.RecognizeCalls())
	page, err := b.store.List(b.ctx, "tg:777", "", 10)
	require.NoError(t, err)
	require.Empty(t, page.Jobs)
	chat, err := b.bots.Chat(b.ctx, stranger)
	require.NoError(t, err)
	require.True(t, chat.UpdatedAt.IsZero(), "no chat settings written")
	for i := range statuses {
		_, err := b.box.Get(b.ctx, outbox.Telegram, fmt.Sprintf("%d/%d/status", stranger, 80+i))
		require.True(t, errors.Is(err, outbox.ErrNotFound), "no message for message %d", 80+i)
	}

	// In a group: not a word.
	require.Equal(t, http.StatusOK, b.webhook(telegramtest.Text(30, stranger, -100601, 5, "supergroup", "/start"), webhookSecret))
	require.Len(t, b.tg.Calls(), 1)

	// The next day: one answer again.
	b.clk.Advance(24 * time.Hour)
	for i := 0; i < 3; i++ {
		require.Equal(t, http.StatusOK, b.webhook(telegramtest.Voice(int64(40+i), stranger, int64(120+i), "voice-s", len(voice), "en"), webhookSecret))
	}
	require.Len(t, b.tg.Calls("sendMessage"), 2)
	require.Len(t, b.tg.Calls(), 2)
}
