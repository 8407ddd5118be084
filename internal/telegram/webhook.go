package telegram

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"transcriber/internal/errs"
)

const (
	SecretHeader   = "X-Telegram-Bot-Api-Secret-Token"
	MaxUpdateBytes = 1 << 20 // updates carry file ids, never files
	WebhookPath    = "/telegram/webhook"
)

// ServeHTTP is the webhook: 401 without the secret; else the update is
// handled to the end, then 200, or 5xx for Telegram to send it again.
func (b *Bot) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeStatus(w, http.StatusMethodNotAllowed, "method not allowed")
		return
	}
	got := r.Header.Get(SecretHeader)
	if b.cfg.WebhookSecret == "" || subtle.ConstantTimeCompare([]byte(got), []byte(b.cfg.WebhookSecret)) != 1 {
		writeStatus(w, http.StatusUnauthorized, "wrong or missing "+SecretHeader)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxUpdateBytes+1))
	if err != nil || len(body) > MaxUpdateBytes {
		writeStatus(w, http.StatusBadRequest, "the update could not be read")
		return
	}
	var upd models.Update
	if err := json.Unmarshal(body, &upd); err != nil {
		writeStatus(w, http.StatusBadRequest, "the update is not valid JSON")
		return
	}
	ctx := context.WithValue(r.Context(), baseKey{}, requestBase(r))
	if err := b.Process(ctx, &upd); err != nil {
		if retryable(err) {
			b.Log.WarnContext(r.Context(), "update retried",
				"update_id", upd.ID, "error", b.scrub(err.Error()), "code", errs.CodeOf(err))
			writeStatus(w, http.StatusServiceUnavailable, "try again")
			return
		}
		// it would fail again the same way
		b.Log.ErrorContext(r.Context(), "update failed", "update_id", upd.ID, "error", b.scrub(err.Error()), "code", errs.CodeOf(err))
	}
	writeStatus(w, http.StatusOK, "ok")
}

func writeStatus(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, msg+"\n")
}

// retryable: a failed update may pass when sent again.
func retryable(err error) bool {
	switch errs.KindOf(err) {
	case errs.Unavailable, errs.Internal:
		return true
	}
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)
}

type baseKey struct{}

// requestBase is the public address the request came to; https (Telegram
// calls webhooks only so) unless the request says otherwise.
func requestBase(r *http.Request) string {
	if r.Host == "" || strings.ContainsAny(r.Host, "/\\@ ") {
		return ""
	}
	scheme := "https"
	if p := r.Header.Get("X-Forwarded-Proto"); p == "http" || p == "https" {
		scheme = p
	} else if r.TLS == nil && isLoopback(r.Host) {
		scheme = "http"
	}
	return scheme + "://" + r.Host
}

func isLoopback(host string) bool {
	h, _, err := net.SplitHostPort(host)
	if err != nil {
		h = host
	}
	ip := net.ParseIP(h)
	return h == "localhost" || (ip != nil && ip.IsLoopback())
}

// publicBase is where upload links point.
func (b *Bot) publicBase(ctx context.Context) string {
	if b.cfg.PublicURL != "" {
		return b.cfg.PublicURL
	}
	base, _ := ctx.Value(baseKey{}).(string)
	return base
}

type outcomeKey struct{} // carries a handler's error (*error) out of ProcessUpdate

// Process handles one update to the end and returns its error.
func (b *Bot) Process(ctx context.Context, upd *models.Update) error {
	var err error
	b.api.ProcessUpdate(context.WithValue(ctx, outcomeKey{}, &err), upd)
	return err
}

func (b *Bot) handle(ctx context.Context, _ *bot.Bot, upd *models.Update) {
	var err error
	switch { // edits, channel posts and the rest are ignored
	case upd.Message != nil:
		err = b.onMessage(ctx, upd.Message)
	case upd.CallbackQuery != nil:
		err = b.onCallback(ctx, upd.CallbackQuery)
	}
	if out, ok := ctx.Value(outcomeKey{}).(*error); ok {
		*out = b.scrubbed(err)
	}
}

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
