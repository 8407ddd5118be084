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

// SecretHeader carries the webhook's secret_token in every update.
const SecretHeader = "X-Telegram-Bot-Api-Secret-Token"

// MaxUpdateBytes bounds an update's body. Updates are small JSON (a message
// with file ids, never the file), far under this.
const MaxUpdateBytes = 1 << 20

// WebhookPath is where the webhook is served: by API Gateway in the cloud
// and by the local stack's HTTP server.
const WebhookPath = "/telegram/webhook"

// ServeHTTP is the webhook. A request without the secret, or with a wrong
// one, gets 401 and nothing else happens; an update is processed to the
// end before the answer, which is 200 when it is safely handled and 5xx
// when Telegram should send it again.
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
			b.Log.WarnContext(r.Context(), "update not handled; Telegram will send it again",
				"update_id", upd.ID, "error", b.scrub(err.Error()), "code", errs.CodeOf(err))
			writeStatus(w, http.StatusServiceUnavailable, "try again")
			return
		}
		// Sending it again would fail the same way.
		b.Log.ErrorContext(r.Context(), "update failed", "update_id", upd.ID, "error", b.scrub(err.Error()), "code", errs.CodeOf(err))
	}
	writeStatus(w, http.StatusOK, "ok")
}

func writeStatus(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, msg+"\n")
}

// retryable reports whether a failed update may pass when Telegram sends it
// again: the store or a service was unavailable, or the call was cut short.
func retryable(err error) bool {
	switch errs.KindOf(err) {
	case errs.Unavailable, errs.Internal:
		return true
	}
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)
}

type baseKey struct{}

// requestBase is the public address a webhook request came to: the
// gateway's domain in the cloud. Telegram calls webhooks only over HTTPS,
// so https unless the request itself says otherwise (the local stack).
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

// publicBase is where upload links point: PUBLIC_URL, or the address the
// update came to.
func (b *Bot) publicBase(ctx context.Context) string {
	if b.cfg.PublicURL != "" {
		return b.cfg.PublicURL
	}
	base, _ := ctx.Value(baseKey{}).(string)
	return base
}

// outcome carries a handler's error out of ProcessUpdate, whose handlers
// return nothing.
type outcome struct{ err error }

type outcomeKey struct{}

// Process handles one update to the end (the client's handlers run
// synchronously) and returns its error.
func (b *Bot) Process(ctx context.Context, upd *models.Update) error {
	out := &outcome{}
	b.api.ProcessUpdate(context.WithValue(ctx, outcomeKey{}, out), upd)
	return out.err
}

// handle is the client's one handler: every update comes here.
func (b *Bot) handle(ctx context.Context, _ *bot.Bot, upd *models.Update) {
	err := b.dispatch(ctx, upd)
	if out, ok := ctx.Value(outcomeKey{}).(*outcome); ok {
		out.err = b.scrubbed(err)
	}
}

func (b *Bot) dispatch(ctx context.Context, upd *models.Update) error {
	switch {
	case upd.Message != nil:
		return b.onMessage(ctx, upd.Message)
	case upd.CallbackQuery != nil:
		return b.onCallback(ctx, upd.CallbackQuery)
	}
	return nil // edits, channel posts and the rest are not for this bot
}
