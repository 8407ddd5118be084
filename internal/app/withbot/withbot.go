// Package withbot adds the Telegram bot to an App: the option the telegram,
// ingest and poll functions and the local stack pass to app.CloudBuild or
// app.New. It is apart from internal/app so that the api function, which
// has no bot, does not compile the Bot API client.
package withbot

import (
	"context"

	"transcriber/internal/app"
	"transcriber/internal/botstate"
	"transcriber/internal/job"
	"transcriber/internal/outbox"
	"transcriber/internal/telegram"
)

// Option makes the App build its bot where TELEGRAM_BOT_TOKEN is set.
func Option(o *app.Options) { o.MakeBot = Make }

// Make builds the bot on the App's core.
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

// reuser is the App's pipeline as the bot's Reuser: the pipeline is made
// after the bot, which is one of its notifiers.
type reuser struct{ a *app.App }

func (r reuser) Reuse(ctx context.Context, j job.Job) (bool, error) {
	if r.a.Pipeline == nil {
		return false, nil
	}
	return r.a.Pipeline.Reuse(ctx, j)
}
