// Package tgconf is the Telegram bot's configuration: its settings, their
// defaults and the allow-list. It is apart from the bot (internal/telegram)
// so that the configuration loader, which every function runs, does not
// compile the Bot API client into functions that have no bot.
package tgconf

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"transcriber/internal/job"
	"transcriber/internal/spend"
)

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
	// OwnerID is the owner's Telegram user id (TELEGRAM_OWNER_ID), who
	// alone gets /status and the alerts; 0: no owner.
	OwnerID int64
	// DefaultLanguage is the recognition language of a chat without /lang.
	DefaultLanguage string
	// ValidLanguage tells the recognizer's language codes.
	ValidLanguage func(string) bool
	// Summaries says whether jobs may ask for a summary: a summary model
	// is configured (SUMMARY_MODEL_URI). Without one /summary on is
	// refused.
	Summaries bool
	// ReuseScope is how far a done job's transcript is reused for a file
	// sent again (REUSE_SCOPE, job.ReuseKeyOf); empty is off.
	ReuseScope job.ReuseScope
	// PublicURL is the API's public base URL, where upload links point
	// (PUBLIC_URL). Empty: the address the webhook request came to, which
	// behind API Gateway is the gateway's, where the upload page is served.
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
	// Limits are the spend limits (package spend): a user with
	// Limits.ActiveJobs unfinished jobs (counted in the bot's Counters) is
	// told to wait and no job is made; /usage shows them.
	Limits spend.Limits
}

// Defaults of Config; docs/settings.md says where each comes from.
const (
	DefaultAPIURL           = "https://api.telegram.org"
	DefaultMaxDownloadBytes = 20 << 20 // Bot API getFile limit
	DefaultDownloadWindow   = 15 * time.Minute
	DefaultLinkWindow       = 24 * time.Hour
	DefaultStatusEvery      = 3 * time.Second
	DefaultDeliveryLease    = 5 * time.Minute
	DefaultResultCheck      = 30 * time.Minute
	DefaultMaxRetryWait     = 30 * time.Second
	// MaxMessageUTF16 is the longest text message (sendMessage: "1-4096
	// characters after entities parsing"), in UTF-16 code units, the unit
	// Telegram measures text in: a character outside the Basic
	// Multilingual Plane, such as most emoji, counts two.
	MaxMessageUTF16 = 4096
	// MaxCaptionUTF16 is the longest caption of a document ("0-1024
	// characters after entities parsing"), in UTF-16 code units.
	MaxCaptionUTF16 = 1024
)

// WithDefaults returns c with its zero fields set to their defaults.
func (c Config) WithDefaults() Config {
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

// ParseOwnerID reads TELEGRAM_OWNER_ID: the owner's numeric Telegram user
// id, who alone gets /status and the alerts. Empty is 0: no owner, no
// alerts, and /status answers nobody.
func ParseOwnerID(v string) (int64, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, nil
	}
	id, err := strconv.ParseInt(v, 10, 64)
	if err != nil || id <= 0 {
		return 0, errors.New("TELEGRAM_OWNER_ID: want the owner's numeric Telegram user id, such as 123456789 " +
			"(the bot tells a user not on TELEGRAM_ALLOWED_USERS their id)")
	}
	return id, nil
}
