// Package telegram is the Telegram bot: the webhook takes updates (media
// and commands) and the pipeline's Notifier delivers results to the chat.
//
// Intake is idempotent: a job is keyed by its (chat, message) and every
// message posted is an outbox entry taken before the send and finished
// after, so a redelivered update finds both (a stranger's answer is a mark
// a day instead: refuse). The webhook answers 200 once the job is
// recorded and its file stored or a link given; a failure that may pass
// answers 5xx and Telegram sends the update again.
//
// Intake: webhook.go (or its long poll), intake.go, fetch.go, commands.go.
// Delivery: post.go sends once, deliver.go is the Notifier.
// text.go holds the bot's words.
//
// The bot token is in every Bot API URL: scrub keeps it out of every error
// and log line, and a test scans the run's logs for it.
package telegram

import (
	"cmp"
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

const maxDownloadBytes = tgconf.DefaultMaxDownloadBytes

// Objects is the object storage; missing objects are errs.NotFound.
type Objects interface {
	Upload(ctx context.Context, key string, r io.Reader, contentType string) (int64, error)
	Head(ctx context.Context, key string) (s3.ObjectInfo, error)
	Get(ctx context.Context, key string) (io.ReadCloser, error)
	Delete(ctx context.Context, key string) error
}

// Deps are the bot's collaborators. Nil Counters: no limit, no stranger
// told; nil Status: /status unknown; nil Translations: no /translate; nil
// Reuser: every file fetched.
type Deps struct {
	Jobs         job.Store
	State        botstate.Store
	Outbox       outbox.Store
	Objects      Objects
	Recognitions job.Deleter // for /forget
	Counters     quota.Counters
	Status       StatusReader
	Translations Translations
	Reuser       Reuser
	Clock        clock.Clock
	Log          *slog.Logger
	Sleep        func(ctx context.Context, d time.Duration) error
}

// Reuser is pipeline.Pipeline.Reuse: j done with an earlier transcript of its file, if any.
type Reuser interface {
	Reuse(ctx context.Context, j job.Job) (bool, error)
}

type Bot struct {
	Deps
	cfg         tgconf.Config
	api         *bot.Bot
	http        *http.Client  // no overall timeout: calls are bounded by their context
	callTimeout time.Duration // callTimeout, shorter in tests
	me          struct {
		sync.Mutex
		name string // the bot's @username, once known
	}
}

// New returns the bot without a network call.
func New(d Deps, cfg tgconf.Config) (*Bot, error) {
	cfg = cfg.WithDefaults()
	if cfg.Token == "" {
		return nil, errs.New(errs.Invalid, "telegram_token_missing", "TELEGRAM_BOT_TOKEN is not set")
	}
	if d.Jobs == nil || d.State == nil || d.Outbox == nil || d.Objects == nil {
		return nil, errors.New("telegram: jobs, state, outbox and objects are required")
	}
	d.Clock, d.Log = cmp.Or(d.Clock, clock.System()), cmp.Or(d.Log, slog.Default())
	d.Recognitions = cmp.Or[job.Deleter](d.Recognitions, noRecognitions{})
	if d.Sleep == nil {
		d.Sleep = clock.Sleep
	}
	b := &Bot{Deps: d, cfg: cfg, http: &http.Client{}, callTimeout: callTimeout}
	api, err := bot.New(cfg.Token,
		bot.WithSkipGetMe(),
		bot.WithServerURL(strings.TrimRight(cfg.APIURL, "/")),
		bot.WithNotAsyncHandlers(),
		bot.WithHTTPClient(time.Minute, b.http),
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

func (b *Bot) scrub(s string) string { // New refuses an empty token
	return strings.ReplaceAll(s, b.cfg.Token, "<token>")
}

// scrubbed is err without the token, of the same errs kind.
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

// ownerID is the chat, so /forget lists its jobs; never an API token's ULID.
func ownerID(chatID int64) string { return "tg:" + strconv.FormatInt(chatID, 10) }

func private(c models.Chat) bool { return c.Type == models.ChatTypePrivate }
