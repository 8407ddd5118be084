package app_test

import (
	"net/http"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"transcriber/internal/job"
	"transcriber/internal/telegram/telegramtest"
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
