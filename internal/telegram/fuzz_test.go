package telegram_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/go-telegram/bot/models"

	"transcriber/internal/telegram"
	"transcriber/internal/telegram/telegramtest"
)

// FuzzUpdate sends arbitrary bytes to the webhook, with the right secret,
// as the body of an update. Whatever comes, the handler answers a status of
// its own (no panic), and a body that is no update the bot acts on — not
// JSON, JSON that does not decode as an update, or an update with neither a
// message nor a button press (an edit, a membership change, …) — makes no
// Bot API call. One harness serves every input: the fake Bot API, S3 and
// SQLite are in-process, and nothing sleeps.
func FuzzUpdate(f *testing.F) {
	for _, seed := range [][]byte{
		telegramtest.Voice(1, user, 10, "f1", 5, "ru"),
		telegramtest.Voice(2, 999, 11, "f1", 5, "en"), // a user not allowed
		telegramtest.Video(3, user, 12, "big", 30<<20),
		telegramtest.Document(4, user, 13, "f1", "audio/mpeg", 0),
		telegramtest.Document(5, user, 14, "f1", "application/pdf", 5),
		telegramtest.Text(6, user, user, 15, "private", "/forget"),
		telegramtest.Text(7, user, -100123, 16, "supergroup", "/transcribe@"+telegramtest.Username),
		telegramtest.Button(8, user, user, 1001, "fmt:srt"),
		telegramtest.Button(9, user, user, 1001, fmt.Sprintf("forget:no:%d", user)),
		telegramtest.ButtonIn(10, 5151, -100123, 1001, "supergroup", "ru", fmt.Sprintf("forget:yes:%d", user)),
		[]byte(`{"update_id":11,"callback_query":{"id":"cb","from":{"id":4242,"is_bot":false,"first_name":"T"},"chat_instance":"ci","data":"forget:yes","message":{"message_id":5,"chat":{"id":4242,"type":"private"},"date":0}}}`),
		[]byte(`{"update_id":12,"edited_message":{"message_id":10,"date":1,"edit_date":2,"from":{"id":4242,"is_bot":false,"first_name":"T"},"chat":{"id":4242,"type":"private"},"text":"/forget"}}`),
		[]byte(`{"update_id":13,"my_chat_member":{"chat":{"id":4242,"type":"private"},"from":{"id":4242,"is_bot":false,"first_name":"T"},"date":1,` +
			`"old_chat_member":{"status":"member","user":{"id":123456789,"is_bot":true,"first_name":"Transcriber"}},` +
			`"new_chat_member":{"status":"kicked","user":{"id":123456789,"is_bot":true,"first_name":"Transcriber"},"until_date":0}}}`),
		[]byte(`{"update_id":14,"channel_post":{"message_id":1,"date":1,"chat":{"id":-1001,"type":"channel"},"voice":{"file_id":"f1","file_unique_id":"u","duration":1}}}`),
		[]byte(`{"update_id":15,"message":{"message_id":0,"date":1,"from":{"id":4242,"is_bot":false,"first_name":"T"},"chat":{"id":0,"type":"private"},"voice":{"file_id":"","file_unique_id":"","duration":1,"file_size":-1}}}`),
		[]byte(`{"update_id":16,"message":{"message_id":17,"date":1,"from":{"id":4242,"is_bot":true,"first_name":"B"},"chat":{"id":4242,"type":"private"},"text":"/help"}}`),
		[]byte(`{"update_id":17}`),
		[]byte(`{"message":null}`),
		[]byte(`{"message":{}}`),
		[]byte(`{"callback_query":{}}`),
		[]byte(`{"update_id":"x"}`),
		[]byte(`[1,2,3]`),
		[]byte(`null`),
		[]byte(`not json`),
		[]byte(``),
	} {
		f.Add(seed)
	}

	h := newHarness(f)
	h.tg.AddFile("f1", []byte("OggS voice"))
	f.Fuzz(func(t *testing.T, body []byte) {
		before := len(h.tg.Calls())
		req := httptest.NewRequest(http.MethodPost, telegram.WebhookPath, bytes.NewReader(body))
		req.Header.Set(telegram.SecretHeader, secret)
		rec := httptest.NewRecorder()
		h.bot.ServeHTTP(rec, req)

		var upd models.Update
		decoded := json.Unmarshal(body, &upd) == nil
		switch {
		case !decoded && rec.Code != http.StatusBadRequest:
			t.Fatalf("a body that is no update answered %d, not 400", rec.Code)
		case rec.Code != http.StatusOK && rec.Code != http.StatusBadRequest && rec.Code != http.StatusServiceUnavailable:
			t.Fatalf("answered %d", rec.Code)
		}
		if !decoded || (upd.Message == nil && upd.CallbackQuery == nil) {
			if calls := h.tg.Calls()[before:]; len(calls) > 0 {
				t.Fatalf("a body the bot does not act on made Bot API calls: %v", calls)
			}
		}
	})
}
