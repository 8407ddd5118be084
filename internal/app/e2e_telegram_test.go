package app_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	stt "github.com/yandex-cloud/go-genproto/yandex/cloud/ai/stt/v3"

	"transcriber/internal/app"
	"transcriber/internal/httpapi"
	"transcriber/internal/httpapi/openapitest"
	"transcriber/internal/job"
	"transcriber/internal/outbox"
	"transcriber/internal/pipeline"
	"transcriber/internal/speechkit/speechkittest"
	"transcriber/internal/telegram"
	"transcriber/internal/telegram/telegramtest"
	"transcriber/internal/telegram/tgconf"
	"transcriber/internal/transcript"
)

const webhookSecret = "e2e-webhook-secret"

// botStack is the stack with the Telegram bot on: a fake Bot API, and the
// API served over HTTP for upload links.
type botStack struct {
	*stack
	tg  *telegramtest.Server
	api *httptest.Server
}

func newBotStack(t *testing.T) *botStack { return newBotStackWith(t, nil) }

// newBotStackWith is newBotStack with more options (newStackWith) and
// more settings, applied after the bot's own.
func newBotStackWith(t *testing.T, more func(*app.Options), tune ...func(*app.Config)) *botStack {
	tg := telegramtest.Start(t)
	api := httptest.NewUnstartedServer(nil)
	st := newStackWith(t, more, append([]func(*app.Config){func(c *app.Config) {
		c.Telegram.Token = telegramtest.Token
		c.Telegram.WebhookSecret = webhookSecret
		c.Telegram.APIURL = tg.URL
		c.Telegram.Allowed = tgconf.Allowed{Everyone: true}
		c.Telegram.PublicURL = "http://" + api.Listener.Addr().String()
		c.Telegram.UploadLinkSecret = []byte(strings.Repeat("u", 32))
	}}, tune...)...)
	require.NotNil(t, st.app.Bot)
	api.Config.Handler = openapitest.Handler(t, st.app.API)
	api.Start()
	t.Cleanup(api.Close)
	return &botStack{stack: st, tg: tg, api: api}
}

// webhook delivers an update to the telegram function's handler as API
// Gateway does, and returns the status it answered.
func (b *botStack) webhook(update []byte, secret string) int {
	b.t.Helper()
	ev := &httpapi.GatewayRequest{
		HTTPMethod: http.MethodPost,
		Path:       telegram.WebhookPath,
		Headers:    map[string]string{"Content-Type": "application/json", telegram.SecretHeader: secret},
		Body:       string(update),
	}
	resp, err := b.app.OnTelegram(b.ctx, ev)
	require.NoError(b.t, err)
	openapitest.Gateway(b.t, ev, resp)
	return resp.StatusCode
}

func (b *botStack) event() []byte {
	b.t.Helper()
	select {
	case ev := <-b.events:
		return ev
	default:
		b.t.Fatal("no ObjectCreate event")
		return nil
	}
}

func TestTelegramVoiceNoteComesBackInTheStatusMessage(t *testing.T) {
	b := newBotStack(t)
	// A voice note is short: it is answered by synchronous recognition.
	b.sk.SyncScript(func(speechkittest.SyncCall) speechkittest.SyncPlan {
		return speechkittest.SyncPlan{Text: "Привет, мир!"}
	})
	voice, err := os.ReadFile(fixtures(t)["voice.ogg"])
	require.NoError(t, err)
	b.tg.AddFile("voice-1", voice)
	update := telegramtest.Voice(1, 501, 77, "voice-1", len(voice), "ru")

	require.Equal(t, http.StatusUnauthorized, b.webhook(update, "wrong"))
	require.Empty(t, b.tg.Calls())
	for i := 0; i < 3; i++ {
		require.Equal(t, http.StatusOK, b.webhook(update, webhookSecret))
	}
	b.ingest(b.event())
	select {
	case ev := <-b.events:
		t.Fatalf("a second upload for one message: %s", ev)
	default:
	}

	page, err := b.store.List(b.ctx, "tg:501", "", 10)
	require.NoError(t, err)
	require.Len(t, page.Jobs, 1)
	j := b.job(page.Jobs[0].ID)
	require.Equal(t, job.Done, j.State, "%s %s", j.ErrorCode, j.ErrorMessage)

	sends := b.tg.Calls("sendMessage")
	require.Len(t, sends, 1, "one status message")
	require.EqualValues(t, 77, sends[0].ReplyTo())
	edits := b.tg.Calls("editMessageText")
	require.NotEmpty(t, edits)
	require.Equal(t, "Привет, мир!", edits[len(edits)-1].Params["text"], "the status message became the transcript")
	require.Equal(t, []job.State{job.Done}, b.ended.of(j.ID))
	require.Equal(t, 1, b.sk.SyncCallCount(), "one recognition for the three deliveries")

	// The timer's sweep finds nothing more to deliver.
	b.poll()
	require.Len(t, b.tg.Calls("editMessageText"), len(edits))
	require.Len(t, b.tg.Calls("sendMessage"), 1)
}

var linkRE = regexp.MustCompile(`https?://\S+/upload/\S+`)

func TestTelegramLargeVideoComesThroughTheUploadLink(t *testing.T) {
	b := newBotStack(t)
	b.sk.Script(func(*stt.RecognizeFileRequest) speechkittest.Plan {
		p := speechkittest.DefaultPlan()
		p.Utterances = []transcript.Utterance{{StartMs: 0, EndMs: 3000, Text: "большое видео", Normal: "Большое видео."}}
		return p
	})
	// A real video over the Bot API's 20 MB: a tiny picture over 160 s of
	// uncompressed stereo sound.
	path := fixture(t, "big.mov", "-f", "lavfi", "-i", "testsrc=size=64x48:rate=1:duration=160",
		"-f", "lavfi", "-i", "sine=frequency=300:duration=160:sample_rate=48000", "-ac", "2",
		"-c:v", "libx264", "-pix_fmt", "yuv420p", "-c:a", "pcm_s16le")
	video, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Greater(t, len(video), 20<<20)

	require.Equal(t, http.StatusOK, b.webhook(telegramtest.Video(1, 502, 90, "big-1", int64(len(video))), webhookSecret))
	require.Empty(t, b.tg.Calls("getFile"))
	sends := b.tg.Calls("sendMessage")
	require.Len(t, sends, 1)
	link := linkRE.FindString(sends[0].Params["text"])
	require.NotEmpty(t, link, "the status message carries the upload link: %s", sends[0].Params["text"])

	// What the upload page does: ask for a presigned PUT, then PUT.
	body, _ := json.Marshal(map[string]any{"size_bytes": len(video), "content_type": "video/quicktime"})
	resp, err := http.Post(link, "application/json", bytes.NewReader(body))
	require.NoError(t, err)
	var got struct {
		Upload struct {
			Method  string            `json:"method"`
			URL     string            `json:"url"`
			Headers map[string]string `json:"headers"`
		} `json:"upload"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&got))
	_ = resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	req, err := http.NewRequest(got.Upload.Method, got.Upload.URL, bytes.NewReader(video))
	require.NoError(t, err)
	for k, v := range got.Upload.Headers {
		req.Header.Set(k, v)
	}
	put, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_ = put.Body.Close()
	require.Equal(t, http.StatusOK, put.StatusCode)

	b.ingest(b.event())
	page, err := b.store.List(b.ctx, "tg:502", "", 10)
	require.NoError(t, err)
	require.Len(t, page.Jobs, 1)
	id := page.Jobs[0].ID
	if b.job(id).State == job.Transcribe {
		b.poll()
	}
	j := b.job(id)
	require.Equal(t, job.Done, j.State, "%s %s", j.ErrorCode, j.ErrorMessage)
	require.InDelta(t, 160000, j.DurationMs, 500)
	edits := b.tg.Calls("editMessageText")
	require.NotEmpty(t, edits)
	require.Equal(t, "Большое видео.", edits[len(edits)-1].Params["text"], "the transcript arrives in the chat")
	require.Len(t, b.tg.Calls("sendMessage"), 1)
}

// The timer removes outbox entries once they are a retention old, where
// the store keeps them (the embedded one), idle call or not, and keeps the
// newer ones.
func TestTheTimerExpiresOldTelegramDeliveries(t *testing.T) {
	b := newBotStack(t)
	old := outbox.Entry{Kind: outbox.Telegram, Key: "5/9/reply"}
	recent := outbox.Entry{Kind: outbox.Telegram, Key: "5/10/reply"}
	_, _, err := b.box.Begin(b.ctx, old, b.clk.Now(), time.Minute)
	require.NoError(t, err)
	b.clk.Advance(pipeline.DefaultJobRetention)
	_, _, err = b.box.Begin(b.ctx, recent, b.clk.Now(), time.Minute)
	require.NoError(t, err)
	b.clk.Advance(time.Hour)

	b.poll()
	_, err = b.box.Get(b.ctx, old.Kind, old.Key)
	require.ErrorIs(t, err, outbox.ErrNotFound, "a retention old")
	_, err = b.box.Get(b.ctx, recent.Kind, recent.Key)
	require.NoError(t, err)
}
