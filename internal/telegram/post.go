package telegram

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"transcriber/internal/botstate"
	"transcriber/internal/errs"
)

// Every message goes through post: the delivery recorded before and after
// the send, short 429s waited out, a gone chat marked blocked.

// Parts of a message's deliveries.
const (
	partStatus = "status" // the status message, edited as the job moves
	partResult = "result" // the transcript or the failure
	partReply  = "reply"  // a command's answer
)

// reply answers a message once, however often Telegram delivers it.
func (b *Bot) reply(ctx context.Context, m *models.Message, text string, markup models.ReplyMarkup) error {
	return b.postOnce(ctx, key(m, partReply), "", func(ctx context.Context) (*models.Message, error) {
		p := replyTo(m, text)
		p.ReplyMarkup = markup
		return b.api.SendMessage(ctx, p)
	})
}

func key(m *models.Message, part string) botstate.Key {
	return botstate.Key{ChatID: m.Chat.ID, MessageID: int64(m.ID), Part: part}
}

func replyTo(m *models.Message, text string) *bot.SendMessageParams {
	return &bot.SendMessageParams{
		ChatID:          m.Chat.ID,
		Text:            text,
		ReplyParameters: &models.ReplyParameters{MessageID: m.ID, AllowSendingWithoutReply: true},
	}
}

// errBusy: another call sends the delivery now (the update came twice at
// once); a 5xx brings the update back if that call fails.
var errBusy = errs.New(errs.Unavailable, "delivery_busy", "another call is sending this message")

// postOnce sends a message for delivery k unless it was sent already, and
// records the outcome. A chat gone (chatGone: the user blocked the bot,
// the bot was kicked) is final for the chat; other failures leave the
// delivery to the next delivery of the update and return the error.
func (b *Bot) postOnce(ctx context.Context, k botstate.Key, jobID string, send func(context.Context) (*models.Message, error)) error {
	_, err := b.post(ctx, k, jobID, send, nil)
	return err
}

// post is postOnce that also reports whether this send found the chat
// gone. stop, when not nil, then runs after the chat is marked blocked and
// before the delivery is recorded abandoned: if it fails, the delivery is
// left pending and the error returned, so the update comes again, sends
// again, and meets the block again — a delivery abandoned for a block
// always had its stop done.
func (b *Bot) post(ctx context.Context, k botstate.Key, jobID string, send func(context.Context) (*models.Message, error), stop func(context.Context) error) (gone bool, err error) {
	d, taken, err := b.State.Begin(ctx, k, jobID, b.Clock.Now(), b.cfg.DeliveryLease)
	if err != nil {
		return false, err
	}
	if !taken {
		if d.State == botstate.Pending {
			return false, errBusy
		}
		return false, nil
	}
	msg, err := withRetry(ctx, b, send)
	if err == nil {
		_, err = b.record(ctx, k, botstate.Outcome{State: botstate.Sent, SentID: int64(msg.ID)})
		return false, err
	}
	if chatGone(err) {
		err = b.blocked(ctx, k, err, stop)
		if err == nil {
			return true, nil
		}
	}
	// The update comes again: the delivery is free for it at once, and
	// otherwise the sweep drops it after a while.
	o := botstate.Outcome{State: botstate.Pending, NextAt: b.Clock.Now().Add(b.cfg.ResultCheck)}
	if _, ferr := b.record(ctx, k, o); ferr != nil {
		b.Log.WarnContext(ctx, "could not record a failed send", "error", ferr.Error())
	}
	return false, classify(err)
}

// chatGone: the bot can no longer post to the chat: every 403 (blocked,
// kicked, deactivated…) and the 400s "chat not found" and "group chat was
// deactivated", as met at github.com/TelegramBotAPI/errors (no list is
// published). A group become a supergroup is a MigrateError instead.
func chatGone(err error) bool {
	msg := strings.ToLower(err.Error())
	return errors.Is(err, bot.ErrorForbidden) || errors.Is(err, bot.ErrorBadRequest) &&
		(strings.Contains(msg, "chat not found") || strings.Contains(msg, "group chat was deactivated"))
}

// blocked records that the chat blocked the bot (Telegram's answer was
// why), runs stop (when not nil), and drops the delivery.
func (b *Bot) blocked(ctx context.Context, k botstate.Key, why error, stop func(context.Context) error) error {
	b.Log.InfoContext(ctx, "the bot is blocked in this chat; delivery stops", "chat_id", k.ChatID, "error", b.scrub(why.Error()))
	now := b.Clock.Now()
	if _, err := b.State.UpdateChat(ctx, k.ChatID, now, func(c *botstate.Chat) { c.BlockedAt = now }); err != nil {
		return err
	}
	if stop != nil {
		if err := stop(ctx); err != nil {
			return err
		}
	}
	_, err := b.record(ctx, k, botstate.Outcome{State: botstate.Abandoned})
	return err
}

// recordTimeout bounds recording a send's outcome after the call's own
// context has ended.
const recordTimeout = 5 * time.Second

// record writes a send's outcome even when the call's context has ended
// (a timeout, a cancelled request) after the send: unrecorded, a sent
// message would be sent again once its lease ran out.
func (b *Bot) record(ctx context.Context, k botstate.Key, o botstate.Outcome) (botstate.Delivery, error) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	return b.State.Finish(rctx, k, o, b.Clock.Now())
}

// callTimeout bounds a Bot API call outside a delivery's window, as on the
// webhook's path (60 s in all, no deadline to read); a later answer is
// given up, so a slow Telegram can post a message twice there.
const callTimeout = 40 * time.Second

// withRetry calls send within callTimeout, waiting out a short 429.
func withRetry[T any](ctx context.Context, b *Bot, send func(context.Context) (T, error)) (T, error) {
	return retry(ctx, b, b.callTimeout, send)
}

// withRetryIn is withRetry in a delivery's window, which a call may take
// all of: a slow answer is waited for, not sent again.
func withRetryIn[T any](ctx context.Context, b *Bot, send func(context.Context) (T, error)) (T, error) {
	return retry(ctx, b, 0, send)
}

// retry calls send, each within limit if positive, waiting out a 429 that
// is short enough and leaves time before the deadline to call again.
func retry[T any](ctx context.Context, b *Bot, limit time.Duration, send func(context.Context) (T, error)) (T, error) {
	for i := 0; ; i++ {
		cctx, cancel := ctx, context.CancelFunc(func() {})
		if limit > 0 {
			cctx, cancel = context.WithTimeout(ctx, limit)
		}
		v, err := send(cctx)
		cancel()
		var tooMany *bot.TooManyRequestsError
		if err == nil || !errors.As(err, &tooMany) || i == 2 {
			return v, err
		}
		wait := time.Duration(tooMany.RetryAfter) * time.Second
		if wait <= 0 {
			wait = time.Second
		}
		if wait > maxRetryWait {
			return v, err
		}
		if d, ok := ctx.Deadline(); ok && d.Sub(b.Clock.Now()) < wait+b.callTimeout {
			return v, err // no time to wait and call again
		}
		b.Log.InfoContext(ctx, "telegram rate limited", "retry_after_s", tooMany.RetryAfter)
		if serr := b.Sleep(ctx, wait); serr != nil {
			return v, err
		}
	}
}

// classify: what Telegram refuses (400, 403, 404) is permanent, the rest may pass.
func classify(err error) error {
	if err == nil {
		return nil
	}
	var (
		tooMany  *bot.TooManyRequestsError
		migrated *bot.MigrateError
	)
	switch {
	case errors.As(err, &tooMany):
		return errs.Wrap(err, errs.Unavailable, "telegram_rate_limited", "Telegram asked to slow down")
	case errors.As(err, &migrated):
		return errs.Wrap(err, errs.Permanent, "telegram_chat_migrated", "the group moved to a new chat id")
	case errors.Is(err, bot.ErrorBadRequest), errors.Is(err, bot.ErrorForbidden), errors.Is(err, bot.ErrorNotFound), errors.Is(err, bot.ErrorUnauthorized):
		return errs.Wrap(err, errs.Permanent, "telegram_refused", "Telegram refused the request")
	}
	if errs.KindOf(err) != errs.Internal {
		return err
	}
	return errs.Wrap(err, errs.Unavailable, "telegram_unavailable", "Telegram could not be reached")
}
