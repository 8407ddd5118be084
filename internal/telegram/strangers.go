package telegram

import (
	"context"

	"github.com/go-telegram/bot/models"

	"transcriber/internal/errs"
	"transcriber/internal/spend"
)

// refuse answers a stranger (not on TELEGRAM_ALLOWED_USERS) in a private
// chat once a UTC day, with their id; nothing else is kept but the day's
// mark, a counter reserved up to 1 before the answer (of many messages at
// once exactly one answers). A failure that may pass gives the mark back
// for a redelivery; a refusal keeps it.
func (b *Bot) refuse(ctx context.Context, m *models.Message, l lang) error {
	if !private(m.Chat) || b.Counters == nil {
		return nil
	}
	day, _ := spend.Day(b.Clock.Now())
	key := "refused_day:" + spend.Telegram(m.From.ID)
	_, first, err := b.Counters.Reserve(ctx, key, day, 1, 1)
	if err != nil {
		return err
	}
	if !first {
		b.Log.DebugContext(ctx, "stranger not answered", "reason", "told_today", "user_id", m.From.ID)
		return nil
	}
	_, err = withRetry(ctx, b, func(ctx context.Context) (*models.Message, error) {
		return b.api.SendMessage(ctx, replyTo(m, txtRefusal.f(l, m.From.ID)))
	})
	if err == nil {
		b.Log.InfoContext(ctx, "stranger told", "user_id", m.From.ID)
		return nil
	}
	if chatGone(err) {
		b.Log.InfoContext(ctx, "stranger not answered", "reason", "chat_gone", "user_id", m.From.ID, "error", b.scrub(err.Error()))
		return nil
	}
	err = classify(b.scrubbed(err))
	if errs.KindOf(err) == errs.Permanent {
		return err // it would meet the same refusal today
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	if rerr := b.Counters.Release(rctx, key, day, 1); rerr != nil {
		b.Log.WarnContext(ctx, "stranger mark not released", "user_id", m.From.ID, "error", rerr.Error())
	}
	return err
}
