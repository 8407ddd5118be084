package app_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	stt "github.com/yandex-cloud/go-genproto/yandex/cloud/ai/stt/v3"

	"transcriber/internal/app"
	"transcriber/internal/job"
	"transcriber/internal/speechkit/speechkittest"
	"transcriber/internal/spend"
	"transcriber/internal/telegram/telegramtest"
	"transcriber/internal/transcript"
	"transcriber/internal/translate/translatetest"
)

// withTranslate points the stack's translator at the fake tr, which takes
// SpeechKit's fake's key, as the service shares SpeechKit's credentials.
func withTranslate(tr *translatetest.Server) func(*app.Config) {
	tr.AcceptKey(speechkittest.TestKey)
	return func(c *app.Config) { c.TranslateURL = tr.URL() }
}

// A transcript read with translate_to twice: the text translated, the
// times kept, one call to Translate; the characters counted on the day and
// the money on the month, shown in the usage.
func TestATranscriptIsTranslatedOnceAndKept(t *testing.T) {
	tr := translatetest.Start(t)
	st := newStack(t, withTranslate(tr))
	st.sk.Script(func(*stt.RecognizeFileRequest) speechkittest.Plan {
		p := speechkittest.DefaultPlan()
		p.Utterances = []transcript.Utterance{
			{StartMs: 0, EndMs: 1500, Text: "привет", Normal: "Привет."},
			{StartMs: 1500, EndMs: 3000, Text: "как дела", Normal: "Как дела?"},
		}
		return p
	})
	c := st.client()
	id := st.send(c, shortVoice(t, 3_000), "")
	st.poll()
	v := c.reused(id)

	var got transcript.Transcript
	for range 2 {
		require.NoError(t, json.Unmarshal([]byte(c.text(v.Transcript["json"]+"&translate_to=en")), &got))
	}
	require.Len(t, tr.Calls(), 1, "translated once, then kept")
	require.Equal(t, "en", got.Language)
	require.Len(t, got.Utterances, 2)
	require.Equal(t, translatetest.Translation("Привет.", "en"), got.Utterances[0].Text)
	require.Equal(t, int64(1500), got.Utterances[1].StartMs, "the times are kept")
	require.Equal(t, int64(3000), got.Utterances[1].EndMs)
	srt := c.text(v.Transcript["srt"] + "&translate_to=en")
	require.Contains(t, srt, "00:00:01,500 --> 00:00:03,000")
	require.Contains(t, srt, translatetest.Translation("Как дела?", "en"))
	require.Len(t, tr.Calls(), 1, "every format from the one translation")
	require.Contains(t, c.text(v.Transcript["txt"]), "Привет.", "the transcript itself is unchanged")

	var u spend.Usage
	status, body, _ := c.call(http.MethodGet, "/v1/usage", "", &u)
	require.Equal(t, http.StatusOK, status, body)
	require.Equal(t, int64(len([]rune("Привет.Как дела?"))), u.Translation.UsedChars)
	require.Equal(t, int64(spend.DefaultTranslationPerDay), u.Translation.LimitChars)

	status, body, _ = c.call(http.MethodGet, v.Transcript["txt"]+"&translate_to=xx", "", nil)
	require.Equal(t, http.StatusBadRequest, status, body)
	require.Contains(t, body, "unknown_language")
}

// A day's limit of characters refuses a translation past it, before any
// call, and the transcript is still served.
func TestATranslationPastTheDaysLimitIsRefused(t *testing.T) {
	tr := translatetest.Start(t)
	st := newStack(t, withTranslate(tr), func(c *app.Config) {
		c.Limits.TranslationPerDay = 5
		c.Pipeline.Limits, c.API.Limits, c.Telegram.Limits = c.Limits, c.Limits, c.Limits
	})
	c := st.client()
	id := st.send(c, shortVoice(t, 3_000), "")
	st.poll()
	v := c.reused(id)
	status, body, _ := c.call(http.MethodGet, v.Transcript["txt"]+"&translate_to=en", "", nil)
	require.NotEqual(t, http.StatusOK, status, body)
	require.Contains(t, body, spend.CodeTranslationLimit)
	require.Empty(t, tr.Calls(), "refused before any call")
	require.NotEmpty(t, c.text(v.Transcript["txt"]))
}

// /translate en in a chat: the next voice note's answer comes with its
// translation, once, as a reply; /translate off stops it.
func TestTelegramTranslateCommand(t *testing.T) {
	tr := translatetest.Start(t)
	b := newBotStackWith(t, nil, withTranslate(tr))
	b.sk.SyncScript(func(speechkittest.SyncCall) speechkittest.SyncPlan {
		return speechkittest.SyncPlan{Text: "Шесть секунд."}
	})
	const chat = 901
	require.Equal(t, http.StatusOK, b.webhook(telegramtest.Text(1, chat, chat, 1, "private", "/translate en"), webhookSecret))
	j := b.sendVoice(voiceOf(t, 6), chat, 2)
	require.Equal(t, job.Done, j.State)
	require.Len(t, tr.Calls(), 1)
	var translated []string
	for _, c := range b.tg.Calls("sendMessage") {
		if strings.Contains(c.Params["text"], translatetest.Translation("Шесть секунд.", "en")) {
			translated = append(translated, c.Params["text"])
		}
	}
	require.Len(t, translated, 1, "the answer comes with its translation, once")
	require.Contains(t, translated[0], "(en)")

	b.clk.Advance(time.Minute)
	require.NoError(t, b.app.OnTimer(b.ctx, nil))
	require.Len(t, tr.Calls(), 1, "a sweep sends nothing again")

	require.Equal(t, http.StatusOK, b.webhook(telegramtest.Text(3, chat, chat, 3, "private", "/translate off"), webhookSecret))
	b.sendVoice(voiceOf(t, 7), chat, 4)
	require.Len(t, tr.Calls(), 1, "off: no translation")
}

// A transcript in another language than the chat's comes with a button;
// pressing it posts the translation into the chat's language once, however
// often it is pressed.
func TestTelegramTranslateButton(t *testing.T) {
	tr := translatetest.Start(t)
	b := newBotStackWith(t, nil, withTranslate(tr))
	b.sk.SyncScript(func(speechkittest.SyncCall) speechkittest.SyncPlan {
		return speechkittest.SyncPlan{Text: "Шесть секунд."}
	})
	const chat = 902
	voice := voiceOf(t, 6)
	b.tg.AddFile("btn", voice)
	require.Equal(t, http.StatusOK, b.webhook(telegramtest.Voice(1, chat, 1, "btn", len(voice), "en"), webhookSecret))
	b.ingest(b.event())
	var data string
	for _, c := range b.tg.Calls("editMessageText", "sendMessage") {
		if m := c.Params["reply_markup"]; strings.Contains(m, `"tr:`) {
			var kb struct {
				InlineKeyboard [][]struct {
					CallbackData string `json:"callback_data"`
				} `json:"inline_keyboard"`
			}
			require.NoError(t, json.Unmarshal([]byte(m), &kb))
			data = kb.InlineKeyboard[0][0].CallbackData
		}
	}
	require.True(t, strings.HasPrefix(data, "tr:") && strings.HasSuffix(data, ":en"), "a button into the chat's language: %q", data)
	require.Empty(t, tr.Calls(), "nothing translated before it is pressed")

	// The same button's data pressed in another chat does nothing.
	require.Equal(t, http.StatusOK, b.webhook(telegramtest.ButtonIn(9, 903, 903, 2, "private", "en", data), webhookSecret))
	require.Empty(t, tr.Calls(), "a job of another chat is not translated there")

	for i := range 3 {
		require.Equal(t, http.StatusOK, b.webhook(telegramtest.ButtonIn(int64(10+i), chat, chat, 2, "private", "en", data), webhookSecret))
	}
	require.Len(t, tr.Calls(), 1, "translated once")
	n := 0
	for _, c := range b.tg.Calls("sendMessage") {
		if strings.Contains(c.Params["text"], translatetest.Translation("Шесть секунд.", "en")) {
			n++
		}
	}
	require.Equal(t, 1, n, "posted once")
	require.Len(t, b.tg.Calls("answerCallbackQuery"), 4, "every press is answered")
}
