package telegram

import (
	"context"

	"github.com/go-telegram/bot/models"

	"transcriber/internal/errs"
	"transcriber/internal/spend"
)

// A user not on TELEGRAM_ALLOWED_USERS (a stranger) costs next to nothing,
// however much they write: in a private chat they are told once a UTC day
// that the bot is not open to them, with their id to give the owner, and
// every other message of theirs that day gets no answer; in a group they
// are not answered at all. Nothing is kept for them but the day's mark: no
// job, no chat settings, no delivery record per message.
//
// The mark is a usage counter (quota.Counters), refusedKey of the user over
// the UTC day (spend.Day's window, as the audio limits count), reserved up
// to 1 before the answer is sent. A reservation is one atomic step, so of
// twenty messages of one stranger handled at once exactly one finds the day
// unmarked and answers; the rest answer nothing and are handled (200), with
// no redelivery. The counter expires as every counter does, quota.Retention
// after its day: by the table's TTL in YDB, by the poll function's sweep in
// the embedded store. A bot without counters (some tests) keeps no mark, so
// it tells strangers nothing.

// refusedKey is the counter of the days a user not allowed was told so.
func refusedKey(userID int64) string { return "refused_day:" + spend.Telegram(userID) }

// refuse answers a message from a user not allowed: once a UTC day in a
// private chat, never in a group. A send that fails for now gives the
// day's mark back and returns the error, so the update, sent again, or the
// user's next message answers; a send Telegram refuses for good (the user
// blocked the bot) keeps it, so nothing is tried again that day.
func (b *Bot) refuse(ctx context.Context, m *models.Message, l lang) error {
	if !private(m.Chat) || b.Counters == nil {
		return nil
	}
	day, _ := spend.Day(b.Clock.Now())
	key := refusedKey(m.From.ID)
	_, first, err := b.Counters.Reserve(ctx, key, day, 1, 1)
	if err != nil {
		return err
	}
	if !first {
		b.Log.DebugContext(ctx, "a user not allowed wrote again today; not answered", "user_id", m.From.ID)
		return nil
	}
	_, err = withRetry(ctx, b, func(ctx context.Context) (*models.Message, error) {
		return b.api.SendMessage(ctx, replyTo(m, txtRefusal.f(l, m.From.ID)))
	})
	if err == nil {
		b.Log.InfoContext(ctx, "told a user not allowed that the bot is private; no more answers today", "user_id", m.From.ID)
		return nil
	}
	if chatGone(err) {
		b.Log.InfoContext(ctx, "a user not allowed cannot be told: the chat is gone", "user_id", m.From.ID, "error", b.scrub(err.Error()))
		return nil
	}
	err = classify(b.scrubbed(err))
	if errs.KindOf(err) == errs.Permanent {
		return err // the same refusal would meet it again today
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	if rerr := b.Counters.Release(rctx, key, day, 1); rerr != nil {
		b.Log.WarnContext(ctx, "could not give back the day's mark of a refusal not sent", "user_id", m.From.ID, "error", rerr.Error())
	}
	return err
}
