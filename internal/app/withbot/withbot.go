// Package withbot adds the Telegram bot to an App, apart from internal/app
// so that the api function does not compile the Bot API client.
package withbot

import (
	"context"

	"transcriber/internal/app"
	"transcriber/internal/botstate"
	"transcriber/internal/job"
	"transcriber/internal/outbox"
	"transcriber/internal/telegram"
)

func Option(o *app.Options) { o.MakeBot = Make }

func Make(a *app.App, state botstate.Store, box outbox.Store) (app.Bot, error) {
	var st telegram.StatusReader
	if a.Status != nil {
		st = a.Status
	}
	var tr telegram.Translations
	if a.Translations != nil {
		tr = a.Translations
	}
	return telegram.New(telegram.Deps{
		Jobs:         a.Store,
		State:        state,
		Outbox:       box,
		Objects:      a.Objects,
		Recognitions: a.Recognizer,
		Counters:     a.Counters,
		Status:       st,
		Reuser:       reuser{a},
		Translations: tr,
		Clock:        a.Clock,
		Log:          a.Log,
		Sleep:        a.Sleep,
	}, a.Config.Telegram)
}

// reuser reads a.Pipeline late: it is made after the bot, its notifier.
type reuser struct{ a *app.App }

func (r reuser) Reuse(ctx context.Context, j job.Job) (bool, error) {
	if r.a.Pipeline == nil {
		return false, nil
	}
	return r.a.Pipeline.Reuse(ctx, j)
}
