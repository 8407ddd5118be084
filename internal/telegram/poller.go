package telegram

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/go-telegram/bot/models"

	"transcriber/internal/errs"
)

const (
	LongPollTimeout = 50 * time.Second
	maxUpdateTries  = 5 // as Telegram redelivers to a webhook
)

// LongPoll handles getUpdates until ctx ends, for a bot without a public
// URL (TELEGRAM_POLL=true), confirming an update only once handled. A set
// webhook is reported, not deleted: that would take the bot from its
// deployment.
func (b *Bot) LongPoll(ctx context.Context) error {
	var offset int64
	pause := time.Second
	for ctx.Err() == nil {
		updates, err := b.getUpdates(ctx, offset)
		if ctx.Err() != nil {
			return nil
		}
		if k := errs.KindOf(err); k == errs.Conflict || k == errs.Unauthorized {
			return err
		}
		if err != nil {
			b.Log.WarnContext(ctx, "getUpdates failed", "error", b.scrub(err.Error()), "pause", pause.String())
			if b.Sleep(ctx, pause) != nil {
				return nil
			}
			pause = min(pause*2, time.Minute)
			continue
		}
		pause = time.Second
		for _, u := range updates {
			b.handlePolled(ctx, u)
			offset = u.ID + 1
		}
	}
	return nil
}

func (b *Bot) handlePolled(ctx context.Context, u *models.Update) {
	for try := 1; ; try++ {
		err := b.Process(ctx, u)
		if err == nil || ctx.Err() != nil {
			return
		}
		if !retryable(err) || try == maxUpdateTries {
			b.Log.ErrorContext(ctx, "update failed", "update_id", u.ID, "error", b.scrub(err.Error()), "tries", try)
			return
		}
		b.Log.WarnContext(ctx, "update retried", "update_id", u.ID, "error", b.scrub(err.Error()))
		if b.Sleep(ctx, time.Duration(try)*time.Second) != nil {
			return
		}
	}
}

// getUpdates is one long poll; the library's own confirms before handling.
func (b *Bot) getUpdates(ctx context.Context, offset int64) ([]*models.Update, error) {
	body, _ := json.Marshal(map[string]any{
		"offset": offset, "timeout": int(LongPollTimeout.Seconds()),
		"allowed_updates": []string{"message", "callback_query"},
	})
	cctx, cancel := context.WithTimeout(ctx, LongPollTimeout+10*time.Second)
	defer cancel()
	u := strings.TrimRight(b.cfg.APIURL, "/") + "/bot" + b.cfg.Token + "/getUpdates"
	req, err := http.NewRequestWithContext(cctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return nil, errs.New(errs.Invalid, "telegram_api_url", "TELEGRAM_API_URL is not a URL")
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := b.http.Do(req)
	if err != nil {
		return nil, errs.New(errs.Unavailable, "telegram_unavailable", "getUpdates: "+b.scrub(unwrapURL(err)))
	}
	defer resp.Body.Close()
	var r struct {
		OK          bool             `json:"ok"`
		Result      []*models.Update `json:"result"`
		ErrorCode   int              `json:"error_code"`
		Description string           `json:"description"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<20)).Decode(&r); err != nil {
		return nil, errs.New(errs.Unavailable, "telegram_unavailable", fmt.Sprintf("getUpdates: HTTP %d with a body that is not the Bot API's", resp.StatusCode))
	}
	switch {
	case r.OK:
		return r.Result, nil
	case r.ErrorCode == http.StatusConflict:
		return nil, errs.New(errs.Conflict, "telegram_webhook_set",
			"Telegram refuses getUpdates: "+r.Description+" (a webhook is set for this bot: use another bot for local polling, or delete the webhook)")
	case r.ErrorCode == http.StatusUnauthorized:
		return nil, errs.New(errs.Unauthorized, "telegram_unauthorized", "Telegram does not know this bot token (TELEGRAM_BOT_TOKEN)")
	}
	return nil, errs.New(errs.Unavailable, "telegram_unavailable", fmt.Sprintf("getUpdates: %d %s", r.ErrorCode, r.Description))
}
