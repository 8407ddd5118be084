package telegram

import (
	"bytes"
	"context"
	"errors"
	"strings"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"transcriber/internal/botstate"
	"transcriber/internal/errs"
	"transcriber/internal/job"
	"transcriber/internal/telegram/tgconf"
	"transcriber/internal/transcript"
)

// /translate <lang> sends every transcript of the chat translated; a button
// under a transcript offers it in the chat's language. Each translation is
// a reply posted once per job and language (part "tr:<lang>").

// Translations is translation.Service.
type Translations interface {
	Of(ctx context.Context, j job.Job, t transcript.Transcript, lang string) (transcript.Transcript, error)
}

const cbTranslate = "tr:" // a button "tr:<job id>:<lang>"; a translation's part "tr:<lang>"

// buttonFor offers t in the chat's language, unless the chat has its own
// /translate or t is in it already.
func (b *Bot) buttonFor(j job.Job, t transcript.Transcript, chat botstate.Chat) models.ReplyMarkup {
	into := string(langOf(chat.UILang))
	if b.Translations == nil || chat.TranslateTo() != "" || chat.UILang == "" || codeOf(t.Language) == into {
		return nil
	}
	return &models.InlineKeyboardMarkup{InlineKeyboard: [][]models.InlineKeyboardButton{{
		{Text: txtTranslateButton.in(langOf(chat.UILang)), CallbackData: cbTranslate + j.ID + ":" + into},
	}}}
}

// codeOf is translation.Code, which the bot cannot import without the
// recognizer's gRPC client (app's TestStatusAndTheBotStayOffGRPC).
func codeOf(lang string) string {
	lang = strings.ToLower(strings.TrimSpace(lang))
	if i := strings.IndexAny(lang, "-_"); i > 0 {
		return lang[:i]
	}
	return lang
}

func (b *Bot) translateCommand(ctx context.Context, m *models.Message, arg string, chat botstate.Chat, l lang) error {
	state := func(to string) string {
		if to == "" {
			return txtTranslateOff.in(l)
		}
		return txtTranslateIs.f(l, to)
	}
	arg = strings.ToLower(strings.TrimSpace(arg))
	switch {
	case b.Translations == nil:
		return b.reply(ctx, m, txtNoTranslation.in(l), nil)
	case arg == "":
		return b.reply(ctx, m, state(chat.TranslateTo()), nil)
	case arg == "off":
		arg = ""
	case len(arg) > 8 || strings.Trim(arg, "abcdefghijklmnopqrstuvwxyz-") != "":
		return b.reply(ctx, m, txtTranslateBad.f(l, clip(arg, 16)), nil)
	default:
		arg = codeOf(arg)
	}
	return b.set(ctx, m, func(c *botstate.Chat) { c.Features = c.WithTranslate(arg) }, state(arg))
}

// onTranslateButton takes a press for a done job of the chat.
func (b *Bot) onTranslateButton(ctx context.Context, data string, chatID int64, answerWith func(string), l lang) error {
	id, into, ok := strings.Cut(strings.TrimPrefix(data, cbTranslate), ":")
	j, err := b.Jobs.Get(ctx, id)
	if !ok || errors.Is(err, job.ErrNotFound) || (err == nil && (j.TelegramChatID != chatID || j.State != job.Done || j.Deleted())) {
		answerWith(txtOldButton.in(l))
		return nil
	}
	if err != nil {
		return err
	}
	answerWith(txtTranslating.in(l))
	chat, err := b.State.Chat(ctx, chatID)
	if err != nil {
		return err
	}
	return b.sendTranslation(ctx, j, chat, codeOf(into))
}

// sendTranslation replies once with j's transcript in lang, or why not.
func (b *Bot) sendTranslation(ctx context.Context, j job.Job, chat botstate.Chat, lang string) error {
	k := ref{j.TelegramChatID, j.TelegramMessageID, cbTranslate + lang}
	l := langOf(chat.UILang)
	return b.postOnce(ctx, k, j.ID, func(ctx context.Context) (*models.Message, error) {
		reply := replyAt(j.TelegramMessageID)
		t, err := b.readTranscript(ctx, j.ID)
		if err == nil {
			t, err = b.Translations.Of(ctx, j, t, lang)
		}
		if err != nil {
			if errs.KindOf(err) == errs.Unavailable {
				return nil, err // the delivery tries again
			}
			return b.api.SendMessage(ctx, &bot.SendMessageParams{ChatID: j.TelegramChatID, ReplyParameters: reply,
				Text: txtTranslationFailed.f(l, lang, errs.MessageOf(err))})
		}
		txt, err := rendered(t, transcript.TXT)
		if err != nil {
			return nil, err
		}
		text := txtTranslationHead.f(l, lang) + "\n\n"
		if s := summaryText(j, t, l); s != "" {
			text += s + "\n\n"
		}
		text += strings.TrimSpace(string(txt))
		if utf16Len(text) <= tgconf.MaxMessageUTF16 {
			return b.api.SendMessage(ctx, &bot.SendMessageParams{ChatID: j.TelegramChatID, ReplyParameters: reply, Text: text})
		}
		f := formatOf(chat)
		doc, err := rendered(t, f)
		if err != nil {
			return nil, err
		}
		return b.api.SendDocument(ctx, &bot.SendDocumentParams{
			ChatID:          j.TelegramChatID,
			Document:        &models.InputFileUpload{Filename: "transcript." + lang + "." + string(f), Data: bytes.NewReader(doc)},
			Caption:         caption(text),
			ReplyParameters: reply,
		})
	})
}
