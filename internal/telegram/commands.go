package telegram

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"transcriber/internal/botstate"
	"transcriber/internal/job"
	"transcriber/internal/spend"
	"transcriber/internal/transcript"
)

var docFormats = []string{"txt", "srt", "vtt"}

// Callback data of the buttons; /forget's carry the asker's id
// ("forget:yes:<user id>"): in a group only they may answer.
const (
	cbFormat    = "fmt:"
	cbForgetYes = "forget:yes"
	cbForgetNo  = "forget:no"
)

// parseForget reads a /forget button; asker 0 is a button older than askers.
func parseForget(data string) (answer string, asker int64, ok bool) {
	for _, a := range []string{cbForgetYes, cbForgetNo} {
		if data == a {
			return a, 0, true
		}
		if rest, found := strings.CutPrefix(data, a+":"); found {
			id, err := strconv.ParseInt(rest, 10, 64)
			if err != nil || id == 0 {
				return "", 0, false
			}
			return a, id, true
		}
	}
	return "", 0, false
}

func (b *Bot) command(ctx context.Context, m *models.Message, cmd, arg string, chat botstate.Chat, l lang) error {
	switch cmd {
	case "start", "help":
		return b.reply(ctx, m, b.helpText(l), nil)
	case "lang":
		return b.langCommand(ctx, m, arg, chat, l)
	case "formats", "format":
		return b.formatsCommand(ctx, m, arg, chat, l)
	case "auto":
		return b.autoCommand(ctx, m, arg, chat, l)
	case "mode":
		return b.modeCommand(ctx, m, arg, chat, l)
	case "speakers":
		return b.featureCommand(ctx, m, arg, chat, l, botstate.FeatureSpeakers, txtSpeakers)
	case "summary":
		return b.featureCommand(ctx, m, arg, chat, l, botstate.FeatureSummary, txtSummaryFeature)
	case "translate":
		return b.translateCommand(ctx, m, arg, chat, l)
	case "transcribe":
		target := m.ReplyToMessage
		med, ok := mediaOf(target)
		if !ok {
			return b.reply(ctx, m, txtNotMedia.in(l), nil)
		}
		if target.Chat.ID == 0 {
			target.Chat = m.Chat
		}
		return b.intake(ctx, target, m.From.ID, med, chat, l)
	case "usage":
		u, err := spend.Report(ctx, b.Counters, b.Jobs, b.cfg.Limits, spend.Telegram(m.From.ID), b.Clock.Now())
		if err != nil {
			return err
		}
		return b.reply(ctx, m, usageText(l, u), nil)
	case "status": // the owner's, in a private chat; anyone else's is unknown
		if b.cfg.OwnerID != 0 && m.From.ID == b.cfg.OwnerID && private(m.Chat) && b.Status != nil {
			s, err := b.Status.Read(ctx, b.Clock.Now())
			if err != nil {
				return err
			}
			return b.reply(ctx, m, statusBrief(l, s), nil)
		}
	case "forget":
		asker := ":" + strconv.FormatInt(m.From.ID, 10)
		return b.reply(ctx, m, txtForgetQ.in(l), &models.InlineKeyboardMarkup{InlineKeyboard: [][]models.InlineKeyboardButton{{
			{Text: txtForgetYes.in(l), CallbackData: cbForgetYes + asker},
			{Text: txtForgetNo.in(l), CallbackData: cbForgetNo + asker},
		}}})
	}
	if private(m.Chat) {
		return b.reply(ctx, m, txtUnknownCmd.in(l), nil)
	}
	return nil // in a group it may be another bot's command
}

// set changes the chat's settings and replies text.
func (b *Bot) set(ctx context.Context, m *models.Message, change func(*botstate.Chat), text string) error {
	if _, err := b.State.UpdateChat(ctx, m.Chat.ID, b.Clock.Now(), change); err != nil {
		return err
	}
	return b.reply(ctx, m, text, nil)
}

func (b *Bot) helpText(l lang) string {
	return txtHelp.f(l, humanBytes(maxDownloadBytes), humanBytes(b.cfg.MaxSourceBytes), b.cfg.DefaultLanguage)
}

func (b *Bot) langCommand(ctx context.Context, m *models.Message, arg string, chat botstate.Chat, l lang) error {
	switch {
	case arg == "":
		return b.reply(ctx, m, txtLangIs.f(l, cmp.Or(chat.Language, b.cfg.DefaultLanguage), b.cfg.DefaultLanguage), nil)
	case strings.EqualFold(arg, "default"):
		arg = ""
	case !b.cfg.ValidLanguage(arg):
		// quoted in part, so the reply fits a message
		return b.reply(ctx, m, txtLangBad.f(l, clip(arg, 32)), nil)
	}
	return b.set(ctx, m, func(c *botstate.Chat) { c.Language = arg }, txtLangSet.f(l, cmp.Or(arg, b.cfg.DefaultLanguage)))
}

func (b *Bot) modeCommand(ctx context.Context, m *models.Message, arg string, chat botstate.Chat, l lang) error {
	p := job.Priority(strings.ToLower(arg))
	switch {
	case arg == "":
		return b.reply(ctx, m, txtModeIs.f(l, either(priorityOf(chat) == job.PriorityDeferred, txtModeDeferred, txtModeNormal, l)), nil)
	case p != job.PriorityNormal && p != job.PriorityDeferred:
		return b.reply(ctx, m, txtModeBad.f(l, clip(arg, 32)), nil)
	}
	mode := string(p)
	if p == job.PriorityNormal {
		mode = "" // the default
	}
	return b.set(ctx, m, func(c *botstate.Chat) { c.Mode = mode }, txtModeSet.f(l, either(p == job.PriorityDeferred, txtModeDeferred, txtModeNormal, l)))
}

// featureCommand shows or sets /speakers or /summary.
func (b *Bot) featureCommand(ctx context.Context, m *models.Message, arg string, chat botstate.Chat, l lang, feature string, name text) error {
	state := func(on bool) string { return either(on, txtFeatureOn, txtFeatureOff, l) }
	switch strings.ToLower(arg) {
	case "":
		return b.reply(ctx, m, txtFeatureIs.f(l, name.in(l), state(chat.Has(feature)), feature, feature), nil)
	case "on", "off":
	default:
		return b.reply(ctx, m, txtFeatureBad.f(l, feature, feature), nil)
	}
	on := strings.EqualFold(arg, "on")
	if on && feature == botstate.FeatureSummary && !b.cfg.Summaries {
		return b.reply(ctx, m, txtNoSummaries.in(l), nil)
	}
	return b.set(ctx, m, func(c *botstate.Chat) { c.Features = c.WithFeature(feature, on) }, txtFeatureSet.f(l, name.in(l), state(on)))
}

func priorityOf(c botstate.Chat) job.Priority {
	if job.Priority(c.Mode) == job.PriorityDeferred {
		return job.PriorityDeferred
	}
	return job.PriorityNormal
}

func (b *Bot) formatsCommand(ctx context.Context, m *models.Message, arg string, chat botstate.Chat, l lang) error {
	if f := strings.ToLower(arg); validFormat(f) {
		return b.set(ctx, m, func(c *botstate.Chat) { c.Format = f }, txtFormatSet.f(l, f))
	}
	row := make([]models.InlineKeyboardButton, 0, len(docFormats))
	for _, f := range docFormats {
		row = append(row, models.InlineKeyboardButton{Text: f, CallbackData: cbFormat + f})
	}
	return b.reply(ctx, m, txtFormats.f(l, formatOf(chat)), &models.InlineKeyboardMarkup{InlineKeyboard: [][]models.InlineKeyboardButton{row}})
}

func validFormat(f string) bool { return slices.Contains(docFormats, f) }

func formatOf(c botstate.Chat) transcript.Format {
	if validFormat(c.Format) {
		return transcript.Format(c.Format)
	}
	return transcript.TXT
}

func (b *Bot) autoCommand(ctx context.Context, m *models.Message, arg string, chat botstate.Chat, l lang) error {
	mode := botstate.Auto(strings.ToLower(arg))
	if mode == botstate.AutoOn || mode == botstate.AutoOff {
		var err error
		if chat, err = b.State.UpdateChat(ctx, m.Chat.ID, b.Clock.Now(), func(c *botstate.Chat) { c.Auto = mode }); err != nil {
			return err
		}
	}
	return b.reply(ctx, m, txtAutoIs.f(l, either(autoOn(chat, m.Chat), txtOn, txtOff, l)), nil)
}

// autoOn: the chat's media are transcribed unasked (/auto; by default in private chats).
func autoOn(c botstate.Chat, in models.Chat) bool {
	return c.Auto == botstate.AutoOn || (c.Auto == botstate.AutoDefault && private(in))
}

func either(on bool, yes, no text, l lang) string {
	if on {
		return yes.in(l)
	}
	return no.in(l)
}

func (b *Bot) onCallback(ctx context.Context, q *models.CallbackQuery) error {
	answerWith := func(text string) {
		if _, err := b.api.AnswerCallbackQuery(ctx, &bot.AnswerCallbackQueryParams{CallbackQueryID: q.ID, Text: text}); err != nil {
			b.Log.WarnContext(ctx, "answer button failed", "error", b.scrub(err.Error()))
		}
	}
	msg := q.Message.Message
	if msg == nil || !b.cfg.Allowed.Allows(q.From.ID) { // nil: too old to touch
		answerWith("")
		return nil
	}
	l := langOf(q.From.LanguageCode)
	forget, asker, isForget := parseForget(q.Data)
	if isForget && asker != q.From.ID {
		// only the asker answers; a button without one, only in the presser's private chat
		if asker != 0 || msg.Chat.ID != q.From.ID {
			b.Log.InfoContext(ctx, "forget refused", "reason", "not_asker",
				"user_id", q.From.ID, "asker_id", asker, "chat_id", msg.Chat.ID)
			answerWith(either(asker != 0, txtNotYours, txtOldButton, l))
			return nil
		}
	}
	if strings.HasPrefix(q.Data, cbTranslate) {
		return b.onTranslateButton(ctx, q.Data, msg.Chat.ID, answerWith, l)
	}
	var text string
	switch f, isFormat := strings.CutPrefix(q.Data, cbFormat); {
	case isFormat && validFormat(f):
		if _, err := b.State.UpdateChat(ctx, msg.Chat.ID, b.Clock.Now(), func(c *botstate.Chat) { c.Format = f }); err != nil {
			return err
		}
		text = txtFormatSet.f(l, f)
	case isForget && forget == cbForgetYes:
		n, err := b.Forget(ctx, msg.Chat.ID)
		if err != nil {
			return err
		}
		text = txtForgotten.f(l, n)
	case isForget && forget == cbForgetNo:
		text = txtCancelled.in(l)
	}
	if answerWith(""); text == "" {
		return nil
	}
	if err := b.editText(ctx, msg.Chat.ID, int64(msg.ID), text); err != nil {
		b.Log.WarnContext(ctx, "edit buttons failed", "error", b.scrub(err.Error()))
	}
	return nil
}

// Forget deletes a chat's jobs (returning how many), files, recognitions,
// settings and outbox entries; a step running on a job sees its deletion
// mark and removes what it made.
func (b *Bot) Forget(ctx context.Context, chatID int64) (int, error) {
	n := 0
	for cursor, more := "", true; more; more = cursor != "" {
		page, err := b.Jobs.List(ctx, ownerID(chatID), cursor, job.MaxListLimit)
		if err != nil {
			return n, err
		}
		for _, j := range page.Jobs {
			// one deleted before deletion forgot the sender is forgotten now
			d, err := b.Jobs.Delete(ctx, j.ID)
			if errors.Is(err, job.ErrNotFound) || (err == nil && j.Deleted()) {
				continue
			}
			if err != nil {
				return n, err
			}
			spend.Deleted(ctx, b.Counters, b.cfg.Limits, j, d, b.Log)
			job.Purge(ctx, b.Objects, b.Recognitions, b.Log, d)
			n++
		}
		cursor = page.Next
	}
	if err := b.State.ForgetChat(ctx, chatID); err != nil {
		return n, err
	}
	b.Log.InfoContext(ctx, "chat forgotten", "chat_id", chatID, "jobs", n)
	return n, nil
}

type noRecognitions struct{}

func (noRecognitions) Delete(context.Context, string) error { return nil }
