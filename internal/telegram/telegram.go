// Package telegram is the Telegram bot: the webhook that takes updates
// (intake of voice messages, audio, video and documents, and the commands),
// and the delivery of results back to the chat, which the pipeline calls
// through its Notifier when a job moves or ends.
//
// Intake is idempotent: a job is keyed by its (chat, message), and every
// message the bot posts is an outbox entry recorded before and after the
// send, so an update Telegram delivers again finds the job and the
// replies already made. The one exception is the answer to a user not
// allowed, which is kept as one mark a day, not per message (strangers.go).
// The webhook answers 200 only once the job is recorded and its file is in
// storage (or a link to upload it was given); a failure the next delivery
// may not meet answers 5xx, and Telegram sends the update again.
//
// What arrives and what the bot sends live apart. Intake, what arrives:
// webhook.go and poller.go take updates, intake.go reads messages, media
// and commands and makes a message's job, fetch.go brings its file into
// storage, commands.go answers the commands, strangers.go users not
// allowed. Delivery, what the bot sends: post.go sends a message once,
// with its record, retries and blocked chats, and deliver.go is the
// pipeline's Notifier, which posts progress and results through it.
// text.go holds the bot's words, measure.go how text is measured and cut.
//
// The bot token is in every Bot API URL and in file download links: no error
// or log line this package makes carries one (scrub removes it from any text
// that could, and a test scans every log line of the test run for it).
package telegram

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"transcriber/internal/botstate"
	"transcriber/internal/clock"
	"transcriber/internal/errs"
	"transcriber/internal/job"
	"transcriber/internal/outbox"
	"transcriber/internal/quota"
	"transcriber/internal/storage/s3"
	"transcriber/internal/telegram/tgconf"
)

// Objects is the object storage the bot streams files into and reads
// transcripts from. Missing objects are errs.NotFound.
type Objects interface {
	Upload(ctx context.Context, key string, r io.Reader, contentType string) (int64, error)
	Head(ctx context.Context, key string) (s3.ObjectInfo, error)
	Get(ctx context.Context, key string) (io.ReadCloser, error)
	Delete(ctx context.Context, key string) error
}

// Deps are the bot's collaborators.
type Deps struct {
	Jobs         job.Store
	State        botstate.Store
	Outbox       outbox.Store
	Objects      Objects
	Recognitions job.Deleter // for /forget
	// Counters keeps what is counted against the limits (package spend):
	// the user's unfinished jobs, which intake counts, and the audio,
	// which /usage reads; and the day's mark of a user not allowed who
	// was told so (strangers.go). Nil counts nothing: no limit of
	// unfinished jobs, no audio used, and nothing told to such users.
	Counters quota.Counters
	// Status reads the service's state for the owner's /status; nil
	// answers /status as an unknown command.
	Status StatusReader
	// Translations translates transcripts (translation.Service); nil: no
	// /translate and no translation button.
	Translations Translations
	// Reuser ends a job done with an earlier job's transcript of the same
	// file before the file is fetched (pipeline.Pipeline.Reuse); nil
	// fetches every file.
	Reuser Reuser
	Clock  clock.Clock  // default clock.System()
	Log    *slog.Logger // default slog.Default()
	// HTTPClient makes the Bot API calls and file downloads; default a
	// client with no overall timeout (calls are bounded by their context).
	HTTPClient *http.Client
	// Sleep waits for d or until ctx ends (waiting out a 429); tests pass
	// one that moves a fake clock.
	Sleep func(ctx context.Context, d time.Duration) error
}

// Reuser ends job j, waiting for its file, done with an earlier job's
// transcript when its reuse key has one (pipeline.Pipeline.Reuse), and
// reports whether it did.
type Reuser interface {
	Reuse(ctx context.Context, j job.Job) (bool, error)
}

// Bot is the Telegram bot of one instance.
type Bot struct {
	Deps
	cfg tgconf.Config
	api *bot.Bot
	// callTimeout bounds a call outside a delivery's window: callTimeout,
	// shorter in tests.
	callTimeout time.Duration
	me          struct {
		sync.Mutex
		name string // the bot's @username, once known
	}
}

// New returns the bot. No network call is made.
func New(d Deps, cfg tgconf.Config) (*Bot, error) {
	cfg = cfg.WithDefaults()
	if cfg.Token == "" {
		return nil, errs.New(errs.Invalid, "telegram_token_missing", "TELEGRAM_BOT_TOKEN is not set")
	}
	if d.Jobs == nil || d.State == nil || d.Outbox == nil || d.Objects == nil {
		return nil, errors.New("telegram: jobs, state, outbox and objects are required")
	}
	if d.Clock == nil {
		d.Clock = clock.System()
	}
	if d.Log == nil {
		d.Log = slog.Default()
	}
	if d.HTTPClient == nil {
		d.HTTPClient = &http.Client{}
	}
	if d.Sleep == nil {
		d.Sleep = clock.Sleep
	}
	b := &Bot{Deps: d, cfg: cfg, callTimeout: callTimeout}
	api, err := bot.New(cfg.Token,
		bot.WithSkipGetMe(),
		bot.WithServerURL(strings.TrimRight(cfg.APIURL, "/")),
		bot.WithNotAsyncHandlers(),
		bot.WithHTTPClient(time.Minute, d.HTTPClient),
		bot.WithDefaultHandler(b.handle),
		bot.WithErrorsHandler(func(err error) {
			d.Log.Warn("telegram client", "error", b.scrub(err.Error()))
		}),
	)
	if err != nil {
		return nil, fmt.Errorf("telegram client: %s", b.scrub(err.Error()))
	}
	b.api = api
	return b, nil
}

// scrub removes the bot token from text that may carry it (a URL in an
// error).
func (b *Bot) scrub(s string) string {
	if b.cfg.Token == "" {
		return s
	}
	return strings.ReplaceAll(s, b.cfg.Token, "<token>")
}

// scrubbed is an error whose text has had the token removed; it keeps the
// errs kind of the error it replaces.
func (b *Bot) scrubbed(err error) error {
	if err == nil {
		return nil
	}
	msg := b.scrub(err.Error())
	if msg == err.Error() {
		return err
	}
	return errs.New(errs.KindOf(err), errs.CodeOf(err), msg)
}

// ownerID is the job owner of a chat's jobs: the chat, so /forget finds
// them with job.Store.List. It never collides with an API token's id (a
// ULID).
func ownerID(chatID int64) string { return "tg:" + strconv.FormatInt(chatID, 10) }

// Private reports whether the chat is a one-to-one chat with the bot.
func private(c models.Chat) bool { return c.Type == models.ChatTypePrivate }
