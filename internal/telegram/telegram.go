// Package telegram is the Telegram bot: the webhook that takes updates
// (intake of voice messages, audio, video and documents, and the commands),
// and the delivery of results back to the chat, which the pipeline calls
// through its Notifier when a job moves or ends.
//
// Intake is idempotent: a job is keyed by its (chat, message), and every
// message the bot posts is a delivery recorded in botstate before and after
// the send, so an update Telegram delivers again finds the job and the
// replies already made. The webhook answers 200 only once the job is
// recorded and its file is in storage (or a link to upload it was given); a
// failure the next delivery may not meet answers 5xx, and Telegram sends the
// update again.
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
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"transcriber/internal/clock"
	"transcriber/internal/errs"
	"transcriber/internal/job"
	"transcriber/internal/storage/s3"
	"transcriber/internal/telegram/botstate"
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
	Objects      Objects
	Recognitions job.Deleter  // for /forget
	Clock        clock.Clock  // default clock.System()
	Log          *slog.Logger // default slog.Default()
	// HTTPClient makes the Bot API calls and file downloads; default a
	// client with no overall timeout (calls are bounded by their context).
	HTTPClient *http.Client
	// Sleep waits for d or until ctx ends (waiting out a 429); tests pass
	// one that moves a fake clock.
	Sleep func(ctx context.Context, d time.Duration) error
}

// Config holds the bot's settings; see docs/configuration.md and
// docs/settings.md for each number and where it comes from.
type Config struct {
	// Token is the bot's token from @BotFather (TELEGRAM_BOT_TOKEN).
	Token string
	// WebhookSecret is the secret_token given to setWebhook; Telegram sends
	// it in X-Telegram-Bot-Api-Secret-Token (TELEGRAM_WEBHOOK_SECRET).
	WebhookSecret string
	// APIURL is the Bot API server (TELEGRAM_API_URL).
	APIURL string
	// Allowed says who may use the bot (TELEGRAM_ALLOWED_USERS).
	Allowed Allowed
	// DefaultLanguage is the recognition language of a chat without /lang.
	DefaultLanguage string
	// ValidLanguage tells the recognizer's language codes.
	ValidLanguage func(string) bool
	// PublicURL is the API's public base URL, where upload links point.
	PublicURL string
	// UploadLinkSecret signs upload links (UPLOAD_LINK_SECRET). Without it
	// files over MaxDownloadBytes are refused.
	UploadLinkSecret []byte
	// MaxDownloadBytes is the largest file the Bot API lets a bot download.
	MaxDownloadBytes int64
	// MaxSourceBytes is the largest file a job takes (via an upload link).
	MaxSourceBytes int64
	// DownloadWindow is how long a job made from a message waits for its
	// file when the bot fetches it: past it, with no file, the job fails.
	DownloadWindow time.Duration
	// LinkWindow is how long an upload link stays usable.
	LinkWindow time.Duration
	// StatusEvery is the least time between two edits of a status message.
	StatusEvery time.Duration
	// DeliveryLease is how long a sender holds a delivery.
	DeliveryLease time.Duration
	// ResultCheck is how long after intake the timer's sweep first looks
	// whether a job's result was delivered, and how often after that while
	// the job runs: the net under a delivery the pipeline's call never made
	// (it crashed between finishing the job and telling the bot).
	ResultCheck time.Duration
	// MaxRetryWait is the longest 429 retry_after waited out in the call;
	// a longer one leaves the delivery to the sweep.
	MaxRetryWait time.Duration
}

// Defaults of Config; docs/settings.md says where each comes from.
const (
	DefaultAPIURL           = "https://api.telegram.org"
	DefaultMaxDownloadBytes = 20 << 20 // Bot API getFile limit
	DefaultDownloadWindow   = 15 * time.Minute
	DefaultLinkWindow       = 24 * time.Hour
	DefaultStatusEvery      = 3 * time.Second
	DefaultDeliveryLease    = 2 * time.Minute
	DefaultResultCheck      = 30 * time.Minute
	DefaultMaxRetryWait     = 30 * time.Second
	// MaxMessageRunes is the longest text message (sendMessage: 4096
	// characters after entities parsing).
	MaxMessageRunes = 4096
	// MaxCaptionRunes is the longest caption of a document.
	MaxCaptionRunes = 1024
)

func (c Config) withDefaults() Config {
	if c.APIURL == "" {
		c.APIURL = DefaultAPIURL
	}
	if c.DefaultLanguage == "" {
		c.DefaultLanguage = "ru-RU"
	}
	if c.ValidLanguage == nil {
		c.ValidLanguage = func(string) bool { return true }
	}
	if c.MaxDownloadBytes == 0 {
		c.MaxDownloadBytes = DefaultMaxDownloadBytes
	}
	if c.MaxSourceBytes == 0 {
		c.MaxSourceBytes = 5 << 30
	}
	if c.DownloadWindow == 0 {
		c.DownloadWindow = DefaultDownloadWindow
	}
	if c.LinkWindow == 0 {
		c.LinkWindow = DefaultLinkWindow
	}
	if c.StatusEvery == 0 {
		c.StatusEvery = DefaultStatusEvery
	}
	if c.DeliveryLease == 0 {
		c.DeliveryLease = DefaultDeliveryLease
	}
	if c.ResultCheck == 0 {
		c.ResultCheck = DefaultResultCheck
	}
	if c.MaxRetryWait == 0 {
		c.MaxRetryWait = DefaultMaxRetryWait
	}
	return c
}

// Allowed is the allow-list: user ids, or everyone.
type Allowed struct {
	Everyone bool
	Users    map[int64]bool
}

// ParseAllowed reads TELEGRAM_ALLOWED_USERS: "*" for everyone, or user ids
// separated by commas. Empty allows nobody: the bot then refuses politely,
// which is safer than answering the whole of Telegram by accident.
func ParseAllowed(s string) (Allowed, error) {
	a := Allowed{Users: map[int64]bool{}}
	for _, f := range strings.Split(s, ",") {
		switch f = strings.TrimSpace(f); f {
		case "":
		case "*":
			a.Everyone = true
		default:
			id, err := strconv.ParseInt(f, 10, 64)
			if err != nil || id <= 0 {
				return Allowed{}, fmt.Errorf("TELEGRAM_ALLOWED_USERS: %q is not a user id (want ids separated by commas, or *)", f)
			}
			a.Users[id] = true
		}
	}
	return a, nil
}

// Allows reports whether the user may use the bot.
func (a Allowed) Allows(userID int64) bool { return a.Everyone || a.Users[userID] }

// Bot is the Telegram bot of one instance.
type Bot struct {
	Deps
	cfg Config
	api *bot.Bot
}

// New returns the bot. No network call is made.
func New(d Deps, cfg Config) (*Bot, error) {
	cfg = cfg.withDefaults()
	if cfg.Token == "" {
		return nil, errs.New(errs.Invalid, "telegram_token_missing", "TELEGRAM_BOT_TOKEN is not set")
	}
	if d.Jobs == nil || d.State == nil || d.Objects == nil {
		return nil, errors.New("telegram: jobs, state and objects are required")
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
	b := &Bot{Deps: d, cfg: cfg}
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
