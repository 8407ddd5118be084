package telegram

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"transcriber/internal/botstate"
	"transcriber/internal/errs"
	"transcriber/internal/outbox"
	"transcriber/internal/telegram/tgconf"
)

// Every message goes through post: its outbox entry taken before the send
// and finished after, short 429s waited out, a gone chat marked blocked;
// deliver.go does the same for a result, within its entry's lease.

const ( // parts of a message's deliveries
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

// ref names a message the bot posts: the part for message msg of chat.
type ref struct {
	chat, msg int64
	part      string
}

func key(m *models.Message, part string) ref { return ref{m.Chat.ID, int64(m.ID), part} }

// key is r's outbox key: "<chat>/<message>/<part>" (botstate.ChatPrefix).
func (r ref) key() string {
	return botstate.ChatPrefix(r.chat) + strconv.FormatInt(r.msg, 10) + "/" + r.part
}

func (r ref) entry(jobID string) outbox.Entry {
	return outbox.Entry{Kind: outbox.Telegram, Key: r.key(), JobID: jobID}
}

func replyTo(m *models.Message, text string) *bot.SendMessageParams {
	return &bot.SendMessageParams{ChatID: m.Chat.ID, Text: text, ReplyParameters: replyAt(m.ID)}
}

// errBusy: another call sends it now (the update came twice at once); the
// 5xx brings the update back should that call fail.
var errBusy = errs.New(errs.Unavailable, "delivery_busy", "another call is sending this message")

// postOnce sends message r unless it was sent already, and records the
// outcome. A chat gone (chatGone) is final; other failures leave the
// message to the update's next delivery.
func (b *Bot) postOnce(ctx context.Context, r ref, jobID string, send func(context.Context) (*models.Message, error)) error {
	_, err := b.post(ctx, r, jobID, send, nil)
	return err
}

// post is postOnce that also reports whether the chat was gone. stop, if
// not nil, runs after the chat is marked blocked and before the message is
// recorded failed; should it fail, the message stays pending for the
// update to come again, so a message failed for a block had its stop done.
func (b *Bot) post(ctx context.Context, r ref, jobID string, send func(context.Context) (*models.Message, error), stop func(context.Context) error) (gone bool, err error) {
	d, taken, err := b.Outbox.Begin(ctx, r.entry(jobID), b.Clock.Now(), b.cfg.DeliveryLease)
	if err != nil {
		return false, err
	}
	if !taken {
		if d.State == outbox.Pending {
			return false, errBusy
		}
		return false, nil
	}
	msg, err := retry(ctx, b, b.callTimeout, send)
	if err == nil {
		_, err = b.box().Record(ctx, d.Key, outbox.Outcome{State: outbox.Delivered, SentID: int64(msg.ID), Attempt: b.attempt(nil)})
		return false, err
	}
	if chatGone(err) {
		err = b.blocked(ctx, r.chat, d.Key, err, stop)
		if err == nil {
			return true, nil
		}
	}
	// free at once for the update's return; else the sweep drops it
	o := outbox.Outcome{State: outbox.Pending, NextAt: b.Clock.Now().Add(tgconf.DefaultResultCheck), Attempt: b.attempt(err)}
	b.box().Finish(ctx, d.Key, o)
	return false, classify(err)
}

// attempt is a send made now that failed with err (nil: it did not).
func (b *Bot) attempt(err error) *outbox.Attempt {
	a := &outbox.Attempt{At: b.Clock.Now()}
	if err != nil {
		a.Error = errs.CodeOf(classify(err))
	}
	return a
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

// blocked marks the chat blocked (why: Telegram's answer), runs stop (if
// not nil), and fails the message key.
func (b *Bot) blocked(ctx context.Context, chat int64, key string, why error, stop func(context.Context) error) error {
	b.Log.InfoContext(ctx, "bot blocked in chat", "chat_id", chat, "error", b.scrub(why.Error()))
	now := b.Clock.Now()
	if _, err := b.State.UpdateChat(ctx, chat, now, func(c *botstate.Chat) { c.BlockedAt = now }); err != nil {
		return err
	}
	if stop != nil {
		if err := stop(ctx); err != nil {
			return err
		}
	}
	_, err := b.box().Record(ctx, key, outbox.Outcome{State: outbox.Failed})
	return err
}

const recordTimeout = outbox.RecordTimeout

// callTimeout bounds a Bot API call outside a delivery's window (the
// webhook has 60 s in all, no deadline to read); a later answer is given
// up, so a slow Telegram can post a message twice there.
const callTimeout = 40 * time.Second

// retry calls send, each within limit if positive (b.callTimeout, or 0 in
// a delivery's window, which a call may take all of), waiting out a 429
// that is short enough and leaves time before the deadline to call again.
func retry[T any](ctx context.Context, b *Bot, limit time.Duration, send func(context.Context) (T, error)) (T, error) {
	for i := 0; ; i++ {
		cctx, cancel := ctx, context.CancelFunc(func() {})
		if limit > 0 {
			cctx, cancel = context.WithTimeout(ctx, limit)
		}
		v, err := send(cctx)
		cancel()
		wait, tooMany := retryAfter(err)
		if !tooMany || i == 2 || wait > tgconf.DefaultMaxRetryWait {
			return v, err
		}
		if d, ok := ctx.Deadline(); ok && d.Sub(b.Clock.Now()) < max(wait, time.Second)+b.callTimeout {
			return v, err // no time to wait and call again
		}
		b.Log.InfoContext(ctx, "telegram rate limited", "retry_after_s", int(wait/time.Second))
		if serr := b.Sleep(ctx, max(wait, time.Second)); serr != nil {
			return v, err
		}
	}
}

// retryAfter is a 429's retry_after, if err is one.
func retryAfter(err error) (time.Duration, bool) {
	var tooMany *bot.TooManyRequestsError
	if !errors.As(err, &tooMany) {
		return 0, false
	}
	return time.Duration(tooMany.RetryAfter) * time.Second, true
}

// classify: what Telegram refuses (400, 403, 404) is permanent, the rest may pass.
func classify(err error) error {
	if err == nil {
		return nil
	}
	var migrated *bot.MigrateError
	switch _, tooMany := retryAfter(err); {
	case tooMany:
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
