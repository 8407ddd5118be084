package telegram

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"

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
