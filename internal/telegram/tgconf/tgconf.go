// Package tgconf is the bot's configuration, apart from internal/telegram
// so that the configuration loader, which every function runs, does not
// compile the Bot API client in.
package tgconf

import (
	"cmp"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"transcriber/internal/job"
	"transcriber/internal/spend"
)

// Config holds the bot's settings (docs/configuration.md, docs/settings.md);
// zero fields take defaults.
type Config struct {
	Token            string
	WebhookSecret    string // setWebhook's secret_token, sent back in SecretHeader
	APIURL           string
	Allowed          Allowed
	OwnerID          int64  // who alone gets /status and the alerts; 0: none
	DefaultLanguage  string // of a chat without /lang
	ValidLanguage    func(string) bool
	Summaries        bool           // a summary model is configured
	ReuseScope       job.ReuseScope // "": no reuse
	PublicURL        string         // where upload links point; "": where the webhook request came (the gateway's)
	UploadLinkSecret []byte         // signs upload links; without it files over DefaultMaxDownloadBytes are refused
	MaxSourceBytes   int64
	DownloadWindow   time.Duration // how long a fetched job waits for its file
	LinkWindow       time.Duration // how long an upload link works
	DeliveryLease    time.Duration
	Limits           spend.Limits
}

// Defaults; docs/settings.md says where each comes from.
const (
	DefaultAPIURL           = "https://api.telegram.org"
	DefaultMaxDownloadBytes = 20 << 20 // Bot API getFile limit
	DefaultDownloadWindow   = 15 * time.Minute
	DefaultLinkWindow       = 24 * time.Hour
	DefaultStatusEvery      = 3 * time.Second // the least time between status edits
	DefaultDeliveryLease    = 5 * time.Minute
	DefaultResultCheck      = 30 * time.Minute // after intake, and while the job runs, the sweep checks its result was delivered
	DefaultMaxRetryWait     = 30 * time.Second // the longest 429 retry_after waited out; past it, the sweep's
	// a message and a caption in UTF-16 code units, Telegram's unit (most emoji count two)
	MaxMessageUTF16 = 4096
	MaxCaptionUTF16 = 1024
)

func (c Config) WithDefaults() Config {
	c.APIURL, c.DefaultLanguage = cmp.Or(c.APIURL, DefaultAPIURL), cmp.Or(c.DefaultLanguage, "ru-RU")
	if c.ValidLanguage == nil {
		c.ValidLanguage = func(string) bool { return true }
	}
	c.MaxSourceBytes = cmp.Or(c.MaxSourceBytes, 5<<30)
	c.DownloadWindow, c.LinkWindow = cmp.Or(c.DownloadWindow, DefaultDownloadWindow), cmp.Or(c.LinkWindow, DefaultLinkWindow)
	c.DeliveryLease = cmp.Or(c.DeliveryLease, DefaultDeliveryLease)
	return c
}

type Allowed struct {
	Everyone bool
	Users    map[int64]bool
}

// ParseAllowed reads TELEGRAM_ALLOWED_USERS: "*", or ids separated by
// commas. Empty allows nobody, safer than answering all of Telegram.
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

func (a Allowed) Allows(userID int64) bool { return a.Everyone || a.Users[userID] }

// ParseOwnerID reads TELEGRAM_OWNER_ID; empty is 0, no owner.
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
