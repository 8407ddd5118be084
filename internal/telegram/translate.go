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

// Translations of transcripts: /translate <lang> makes every transcript of
// the chat come with its translation; a button under a transcript offers
// one into the chat's language. Each is a reply to the recording's
// message, posted once per job and language (a delivery of its own, part
// "tr:<lang>"), whatever presses or redeliveries ask for it again. A
// translation that fails says so; the transcript stands.

// Translations gives a done job's transcript in another language,
// translated once and kept (translation.Service.Of).
type Translations interface {
	Of(ctx context.Context, j job.Job, t transcript.Transcript, lang string) (transcript.Transcript, error)
}

// cbTranslate starts a translation button's data: "tr:<job id>:<lang>".
const cbTranslate = "tr:"

// partTranslation is the delivery of a job's translation into lang.
func partTranslation(lang string) string { return cbTranslate + lang }

// translateButton offers j's transcript in lang.
func translateButton(j job.Job, l lang, into string) models.ReplyMarkup {
	return &models.InlineKeyboardMarkup{InlineKeyboard: [][]models.InlineKeyboardButton{{
		{Text: txtTranslateButton.in(l), CallbackData: cbTranslate + j.ID + ":" + into},
	}}}
}

// buttonFor is the translation button under job j's transcript t in chat:
// into the chat's language, when the bot can translate, the chat has no
// /translate of its own, and the transcript is in another language.
func (b *Bot) buttonFor(j job.Job, t transcript.Transcript, chat botstate.Chat) models.ReplyMarkup {
	into := string(chatLang(chat))
	if b.Translations == nil || chat.TranslateTo() != "" || chat.UILang == "" || codeOf(t.Language) == into {
		return nil
	}
	return translateButton(j, chatLang(chat), into)
}

// codeOf is a language as the translator names it: "en" for "en-US".
func codeOf(lang string) string {
	lang = strings.ToLower(lang)
	if i := strings.IndexAny(lang, "-_"); i > 0 {
		return lang[:i]
	}
	return lang
}

// translateCommand shows or sets the chat's /translate: a language code
// ("en", "de"), or "off".
func (b *Bot) translateCommand(ctx context.Context, m *models.Message, arg string, chat botstate.Chat, l lang) error {
	arg = strings.ToLower(strings.TrimSpace(arg))
	switch {
	case b.Translations == nil:
		return b.reply(ctx, m, txtNoTranslation.in(l), nil)
	case arg == "":
		if to := chat.TranslateTo(); to != "" {
			return b.reply(ctx, m, txtTranslateIs.f(l, to), nil)
		}
		return b.reply(ctx, m, txtTranslateOff.in(l), nil)
	case arg == "off":
		arg = ""
	case len(arg) > 8 || strings.Trim(arg, "abcdefghijklmnopqrstuvwxyz-") != "":
		return b.reply(ctx, m, txtTranslateBad.f(l, clip(arg, 16)), nil)
	default:
		arg = codeOf(arg)
	}
	if _, err := b.State.UpdateChat(ctx, m.Chat.ID, b.Clock.Now(), func(c *botstate.Chat) { c.Features = c.WithTranslate(arg) }); err != nil {
		return err
	}
	if arg == "" {
		return b.reply(ctx, m, txtTranslateOff.in(l), nil)
	}
	return b.reply(ctx, m, txtTranslateIs.f(l, arg), nil)
}

// onTranslateButton handles a press of a translation button in the chat
// of msg: the job must be that chat's and done.
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

// sendTranslation posts done job j's transcript translated into lang, or
// why it could not be, as a reply to the job's message: once.
func (b *Bot) sendTranslation(ctx context.Context, j job.Job, chat botstate.Chat, lang string) error {
	k := ref{j.TelegramChatID, j.TelegramMessageID, partTranslation(lang)}
	l := chatLang(chat)
	return b.postOnce(ctx, k, j.ID, func(ctx context.Context) (*models.Message, error) {
		reply := &models.ReplyParameters{MessageID: int(j.TelegramMessageID), AllowSendingWithoutReply: true}
		t, err := b.readTranscript(ctx, j.ID)
		if err == nil {
			t, err = b.Translations.Of(ctx, j, t, lang)
		}
		if err != nil {
			if errs.KindOf(err) == errs.Unavailable {
				return nil, err // tried again with the delivery
			}
			return b.api.SendMessage(ctx, &bot.SendMessageParams{ChatID: j.TelegramChatID, ReplyParameters: reply,
				Text: txtTranslationFailed.f(l, lang, errs.MessageOf(err))})
		}
		var txt bytes.Buffer
		if err := transcript.Render(&txt, t, transcript.TXT); err != nil {
			return nil, err
		}
		text := txtTranslationHead.f(l, lang) + "\n\n"
		if s := summaryText(j, t, l); s != "" {
			text += s + "\n\n"
		}
		text += strings.TrimSpace(txt.String())
		if utf16Len(text) <= tgconf.MaxMessageUTF16 {
			return b.api.SendMessage(ctx, &bot.SendMessageParams{ChatID: j.TelegramChatID, ReplyParameters: reply, Text: text})
		}
		f, _ := transcript.ParseFormat(formatOf(chat))
		var doc bytes.Buffer
		if err := transcript.Render(&doc, t, f); err != nil {
			return nil, err
		}
		return b.api.SendDocument(ctx, &bot.SendDocumentParams{
			ChatID:          j.TelegramChatID,
			Document:        &models.InputFileUpload{Filename: "transcript." + lang + "." + string(f), Data: bytes.NewReader(doc.Bytes())},
			Caption:         caption(text),
			ReplyParameters: reply,
		})
	})
}
