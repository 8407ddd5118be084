package telegram

import (
	"context"
	"errors"
	"strings"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"transcriber/internal/job"
	"transcriber/internal/telegram/botstate"
)

// Formats a long transcript may come in (/formats).
var docFormats = []string{"txt", "srt", "vtt"}

// Callback data of the inline buttons.
const (
	cbFormat    = "fmt:"
	cbForgetYes = "forget:yes"
	cbForgetNo  = "forget:no"
)

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
	case "transcribe":
		target := m.ReplyToMessage
		med, ok := mediaOf(target)
		if !ok {
			return b.reply(ctx, m, txtNotMedia.in(l), nil)
		}
		if target.Chat.ID == 0 {
			target.Chat = m.Chat
		}
		return b.intake(ctx, target, med, chat, l)
	case "forget":
		return b.reply(ctx, m, txtForgetQ.in(l), &models.InlineKeyboardMarkup{InlineKeyboard: [][]models.InlineKeyboardButton{{
			{Text: txtForgetYes.in(l), CallbackData: cbForgetYes},
			{Text: txtForgetNo.in(l), CallbackData: cbForgetNo},
		}}})
	}
	if private(m.Chat) {
		return b.reply(ctx, m, txtUnknownCmd.in(l), nil)
	}
	return nil // in a group it may be another bot's command
}

func (b *Bot) helpText(l lang) string {
	return txtHelp.f(l, humanBytes(b.cfg.MaxDownloadBytes), humanBytes(b.cfg.MaxSourceBytes), b.cfg.DefaultLanguage)
}

func (b *Bot) langCommand(ctx context.Context, m *models.Message, arg string, chat botstate.Chat, l lang) error {
	cur := chat.Language
	if cur == "" {
		cur = b.cfg.DefaultLanguage
	}
	switch {
	case arg == "":
		return b.reply(ctx, m, txtLangIs.f(l, cur, b.cfg.DefaultLanguage), nil)
	case strings.EqualFold(arg, "default"):
		arg = ""
	case !b.cfg.ValidLanguage(arg):
		return b.reply(ctx, m, txtLangBad.f(l, arg), nil)
	}
	if _, err := b.State.UpdateChat(ctx, m.Chat.ID, b.Clock.Now(), func(c *botstate.Chat) { c.Language = arg }); err != nil {
		return err
	}
	if arg == "" {
		arg = b.cfg.DefaultLanguage
	}
	return b.reply(ctx, m, txtLangSet.f(l, arg), nil)
}

func (b *Bot) formatsCommand(ctx context.Context, m *models.Message, arg string, chat botstate.Chat, l lang) error {
	if f := strings.ToLower(arg); validFormat(f) {
		if _, err := b.State.UpdateChat(ctx, m.Chat.ID, b.Clock.Now(), func(c *botstate.Chat) { c.Format = f }); err != nil {
			return err
		}
		return b.reply(ctx, m, txtFormatSet.f(l, f), nil)
	}
	row := make([]models.InlineKeyboardButton, 0, len(docFormats))
	for _, f := range docFormats {
		row = append(row, models.InlineKeyboardButton{Text: f, CallbackData: cbFormat + f})
	}
	return b.reply(ctx, m, txtFormats.f(l, formatOf(chat)), &models.InlineKeyboardMarkup{InlineKeyboard: [][]models.InlineKeyboardButton{row}})
}

func validFormat(f string) bool {
	for _, v := range docFormats {
		if f == v {
			return true
		}
	}
	return false
}

func formatOf(c botstate.Chat) string {
	if validFormat(c.Format) {
		return c.Format
	}
	return "txt"
}

func (b *Bot) autoCommand(ctx context.Context, m *models.Message, arg string, chat botstate.Chat, l lang) error {
	mode := botstate.Auto(strings.ToLower(arg))
	if mode == botstate.AutoOn || mode == botstate.AutoOff {
		var err error
		if chat, err = b.State.UpdateChat(ctx, m.Chat.ID, b.Clock.Now(), func(c *botstate.Chat) { c.Auto = mode }); err != nil {
			return err
		}
	}
	on := chat.Auto == botstate.AutoOn || (chat.Auto == botstate.AutoDefault && private(m.Chat))
	state := txtOff.in(l)
	if on {
		state = txtOn.in(l)
	}
	return b.reply(ctx, m, txtAutoIs.f(l, state), nil)
}

// onCallback handles the inline buttons: a document format, /forget's
// confirmation.
func (b *Bot) onCallback(ctx context.Context, q *models.CallbackQuery) error {
	answer := func() {
		if _, err := b.api.AnswerCallbackQuery(ctx, &bot.AnswerCallbackQueryParams{CallbackQueryID: q.ID}); err != nil {
			b.Log.WarnContext(ctx, "could not answer a button press", "error", b.scrub(err.Error()))
		}
	}
	msg := q.Message.Message
	if msg == nil {
		answer()
		return nil // the message with the buttons is too old to touch
	}
	l := langOf(q.From.LanguageCode)
	if !b.cfg.Allowed.Allows(q.From.ID) {
		answer()
		return nil
	}
	var text string
	switch {
	case strings.HasPrefix(q.Data, cbFormat):
		f := strings.TrimPrefix(q.Data, cbFormat)
		if !validFormat(f) {
			answer()
			return nil
		}
		if _, err := b.State.UpdateChat(ctx, msg.Chat.ID, b.Clock.Now(), func(c *botstate.Chat) { c.Format = f }); err != nil {
			return err
		}
		text = txtFormatSet.f(l, f)
	case q.Data == cbForgetYes:
		n, err := b.Forget(ctx, msg.Chat.ID)
		if err != nil {
			return err
		}
		text = txtForgotten.f(l, n)
	case q.Data == cbForgetNo:
		text = txtCancelled.in(l)
	default:
		answer()
		return nil
	}
	answer()
	_, err := b.api.EditMessageText(ctx, &bot.EditMessageTextParams{ChatID: msg.Chat.ID, MessageID: msg.ID, Text: text})
	if err != nil && !notModified(err) {
		b.Log.WarnContext(ctx, "could not edit the message with the buttons", "error", b.scrub(err.Error()))
	}
	return nil
}

// Forget deletes a chat's jobs with their files and recognitions, and the
// chat's settings and delivery records, and returns how many jobs were
// deleted. Deleting is marking: a step running on one of them sees the mark
// and removes what it made (see pipeline).
func (b *Bot) Forget(ctx context.Context, chatID int64) (int, error) {
	n, cursor := 0, ""
	for {
		page, err := b.Jobs.List(ctx, ownerID(chatID), cursor, job.MaxListLimit)
		if err != nil {
			return n, err
		}
		for _, j := range page.Jobs {
			if j.Deleted() {
				continue
			}
			d, err := b.Jobs.Delete(ctx, j.ID)
			if errors.Is(err, job.ErrNotFound) {
				continue
			}
			if err != nil {
				return n, err
			}
			job.Purge(ctx, b.Objects, b.recognitions(), b.Log, d)
			n++
		}
		if page.Next == "" {
			break
		}
		cursor = page.Next
	}
	if err := b.State.ForgetChat(ctx, chatID); err != nil {
		return n, err
	}
	b.Log.InfoContext(ctx, "chat forgotten", "chat_id", chatID, "jobs", n)
	return n, nil
}

func (b *Bot) recognitions() job.Deleter {
	if b.Recognitions == nil {
		return noRecognitions{}
	}
	return b.Recognitions
}

type noRecognitions struct{}

func (noRecognitions) Delete(context.Context, string) error { return nil }
