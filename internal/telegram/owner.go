package telegram

import (
	"context"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"transcriber/internal/status"
)

type StatusReader interface {
	Read(ctx context.Context, now time.Time) (status.Status, error)
}

func (b *Bot) isOwner(id int64) bool { return b.cfg.OwnerID != 0 && id == b.cfg.OwnerID }

// statusCommand answers /status to the owner in a private chat; anyone
// else is answered as for an unknown command.
func (b *Bot) statusCommand(ctx context.Context, m *models.Message, l lang) (handled bool, err error) {
	if !b.isOwner(m.From.ID) || !private(m.Chat) || b.Status == nil {
		return false, nil
	}
	s, err := b.Status.Read(ctx, b.Clock.Now())
	if err != nil {
		return true, err
	}
	return true, b.reply(ctx, m, statusBrief(l, s), nil)
}

// TellOwner sends the owner an alert once, keyed by its kind and window
// (the hour, or the month); a failed send is taken again by the next call
// deciding the same alert.
func (b *Bot) TellOwner(ctx context.Context, a status.Alert, window time.Time) error {
	if b.cfg.OwnerID == 0 {
		return nil
	}
	k := ref{b.cfg.OwnerID, -window.Unix(), "alert:" + string(a.Kind)}
	l := langOf(b.cfg.DefaultLanguage) // the owner set it
	return b.postOnce(ctx, k, "", func(ctx context.Context) (*models.Message, error) {
		return b.api.SendMessage(ctx, &bot.SendMessageParams{ChatID: b.cfg.OwnerID, Text: alertText(l, a)})
	})
}
