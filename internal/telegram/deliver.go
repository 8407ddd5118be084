package telegram

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"transcriber/internal/errs"
	"transcriber/internal/job"
	"transcriber/internal/telegram/botstate"
	"transcriber/internal/transcript"
)

// The bot is the pipeline's Notifier: Moved edits the status message as a
// job moves, Finished delivers an ended job. Both run in the ingest and poll
// functions; Sweep, on the timer, delivers what they could not.

// MaxDeliveryAttempts is how many times a result is tried before it is
// given up (with a pause that doubles from a minute: about 8.5 hours).
const MaxDeliveryAttempts = 10

// Moved edits a Telegram job's status message to say where the job is,
// at most once every StatusEvery. Progress is a courtesy: a failed edit is
// reported and not tried again.
func (b *Bot) Moved(ctx context.Context, j job.Job) error {
	if j.Source != job.SourceTelegram {
		return nil
	}
	var label text
	switch j.State {
	case job.Created:
		label = txtConverting
	case job.Converted, job.Transcribe:
		label = txtRecognizing
	default:
		return nil
	}
	k := botstate.Key{ChatID: j.TelegramChatID, MessageID: j.TelegramMessageID, Part: partStatus}
	st, err := b.State.Get(ctx, k)
	if errors.Is(err, botstate.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	now := b.Clock.Now()
	if st.State != botstate.Sent || st.SentID == 0 || now.Sub(st.UpdatedAt) < b.cfg.StatusEvery {
		return nil
	}
	chat, err := b.State.Chat(ctx, j.TelegramChatID)
	if err != nil || !chat.BlockedAt.IsZero() {
		return err
	}
	_, err = b.api.EditMessageText(ctx, &bot.EditMessageTextParams{
		ChatID: j.TelegramChatID, MessageID: int(st.SentID), Text: label.in(chatLang(chat)),
	})
	if err != nil && !notModified(err) {
		return classify(b.scrubbed(err))
	}
	_, err = b.State.Finish(ctx, k, botstate.Outcome{State: botstate.Sent}, now)
	return err
}

// Finished delivers an ended Telegram job: the transcript, or what went
// wrong. A delivery that fails is left to the sweep; the error says why.
func (b *Bot) Finished(ctx context.Context, j job.Job) error {
	if j.Source != job.SourceTelegram {
		return nil
	}
	k := botstate.Key{ChatID: j.TelegramChatID, MessageID: j.TelegramMessageID, Part: partResult}
	d, taken, err := b.State.Begin(ctx, k, j.ID, b.Clock.Now(), b.cfg.DeliveryLease)
	if err != nil || !taken {
		return err
	}
	return b.deliver(ctx, j, d)
}

// Sweep delivers the results that are due: those whose delivery failed and
// waits to be tried again, and those the pipeline never handed over. It
// returns how many it sent.
func (b *Bot) Sweep(ctx context.Context) (int, error) {
	sent := 0
	for ctx.Err() == nil {
		due, err := b.State.ClaimDue(ctx, b.Clock.Now(), b.cfg.DeliveryLease, 20)
		if err != nil || len(due) == 0 {
			return sent, err
		}
		for _, d := range due {
			if d.Part != partResult || d.JobID == "" {
				// A status or a reply whose send failed: the update it
				// answers was delivered again, or never will be.
				b.finish(ctx, d.Key, botstate.Outcome{State: botstate.Abandoned})
				continue
			}
			j, err := b.Jobs.Get(ctx, d.JobID)
			if errors.Is(err, job.ErrNotFound) || (err == nil && j.Deleted()) {
				b.finish(ctx, d.Key, botstate.Outcome{State: botstate.Abandoned})
				continue
			}
			if err != nil {
				b.finish(ctx, d.Key, botstate.Outcome{State: botstate.Pending, NextAt: b.Clock.Now().Add(time.Minute)})
				return sent, err
			}
			if err := b.deliver(ctx, j, d); err != nil {
				b.Log.WarnContext(ctx, "delivery failed", "job_id", j.ID, "error", b.scrub(err.Error()))
				continue
			}
			if j.State.Terminal() {
				sent++
			}
		}
	}
	return sent, nil
}

func (b *Bot) finish(ctx context.Context, k botstate.Key, o botstate.Outcome) {
	if _, err := b.State.Finish(ctx, k, o, b.Clock.Now()); err != nil {
		b.Log.WarnContext(ctx, "could not record a delivery", "chat_id", k.ChatID, "part", k.Part, "error", err.Error())
	}
}

// deliver sends the result of job j under delivery d, which the caller
// holds, and records the outcome.
func (b *Bot) deliver(ctx context.Context, j job.Job, d botstate.Delivery) error {
	log := b.Log.With("job_id", j.ID, "chat_id", j.TelegramChatID)
	if !j.State.Terminal() {
		// Not ended yet: look again later.
		b.finish(ctx, d.Key, botstate.Outcome{State: botstate.Pending, NextAt: b.Clock.Now().Add(b.cfg.ResultCheck)})
		return nil
	}
	chat, err := b.State.Chat(ctx, j.TelegramChatID)
	if err != nil {
		b.finish(ctx, d.Key, botstate.Outcome{State: botstate.Pending, NextAt: b.Clock.Now().Add(time.Minute)})
		return err
	}
	if !chat.BlockedAt.IsZero() {
		log.InfoContext(ctx, "not delivered: the bot is blocked in this chat")
		b.finish(ctx, d.Key, botstate.Outcome{State: botstate.Abandoned})
		return nil
	}
	status := int64(0)
	if st, err := b.State.Get(ctx, botstate.Key{ChatID: j.TelegramChatID, MessageID: j.TelegramMessageID, Part: partStatus}); err == nil && st.State == botstate.Sent {
		status = st.SentID
	}
	var sentID int64
	if j.State == job.Done {
		sentID, err = b.sendResult(ctx, j, chat, status)
	} else {
		sentID, err = b.sendOrEdit(ctx, j, status, failureText(chatLang(chat), j))
	}
	switch {
	case err == nil:
		log.InfoContext(ctx, "result delivered", "state", string(j.State), "attempt", d.Attempts)
		b.finish(ctx, d.Key, botstate.Outcome{State: botstate.Sent, SentID: sentID})
		return nil
	case errors.Is(err, bot.ErrorForbidden):
		return b.blocked(ctx, d.Key)
	case errs.KindOf(classify(err)) == errs.Permanent, d.Attempts >= MaxDeliveryAttempts:
		log.ErrorContext(ctx, "result not delivered; giving up", "error", b.scrub(err.Error()), "attempt", d.Attempts)
		b.finish(ctx, d.Key, botstate.Outcome{State: botstate.Abandoned})
		return classify(b.scrubbed(err))
	}
	next := b.Clock.Now().Add(retryPause(d.Attempts))
	var tooMany *bot.TooManyRequestsError
	if errors.As(err, &tooMany) {
		next = b.Clock.Now().Add(time.Duration(tooMany.RetryAfter) * time.Second)
	}
	b.finish(ctx, d.Key, botstate.Outcome{State: botstate.Pending, NextAt: next})
	return classify(b.scrubbed(err))
}

// retryPause is the wait before a delivery's next try: a minute, doubling
// with each attempt, at most an hour.
func retryPause(attempts int) time.Duration {
	p := time.Minute
	for i := 1; i < attempts && p < time.Hour; i++ {
		p *= 2
	}
	if p > time.Hour {
		p = time.Hour
	}
	return p
}

// sendResult delivers a transcript: into the status message when it fits
// one message, or as a document in the chat's format with its first lines
// as the caption.
func (b *Bot) sendResult(ctx context.Context, j job.Job, chat botstate.Chat, status int64) (int64, error) {
	l := chatLang(chat)
	t, err := b.readTranscript(ctx, j.ID)
	if err != nil {
		return 0, err
	}
	var txt bytes.Buffer
	if err := transcript.Render(&txt, t, transcript.TXT); err != nil {
		return 0, err
	}
	plain := strings.TrimSpace(txt.String())
	if plain == "" || t.Empty() {
		return b.sendOrEdit(ctx, j, status, txtNoSpeech.in(l))
	}
	if utf8.RuneCountInString(plain) <= MaxMessageRunes {
		return b.sendOrEdit(ctx, j, status, plain)
	}
	f, _ := transcript.ParseFormat(formatOf(chat))
	var doc bytes.Buffer
	if err := transcript.Render(&doc, t, f); err != nil {
		return 0, err
	}
	msg, err := withRetry(ctx, b, func(ctx context.Context) (*models.Message, error) {
		return b.api.SendDocument(ctx, &bot.SendDocumentParams{
			ChatID:          j.TelegramChatID,
			Document:        &models.InputFileUpload{Filename: "transcript." + string(f), Data: bytes.NewReader(doc.Bytes())},
			Caption:         caption(plain),
			ReplyParameters: &models.ReplyParameters{MessageID: int(j.TelegramMessageID), AllowSendingWithoutReply: true},
		})
	})
	if err != nil {
		return 0, err
	}
	if status != 0 {
		if _, err := b.api.EditMessageText(ctx, &bot.EditMessageTextParams{ChatID: j.TelegramChatID, MessageID: int(status), Text: txtLongDone.in(l)}); err != nil && !notModified(err) {
			b.Log.WarnContext(ctx, "could not edit the status message", "job_id", j.ID, "error", b.scrub(err.Error()))
		}
	}
	return int64(msg.ID), nil
}

// caption is a document's caption: the transcript's first lines, cut at a
// line or word under the caption limit.
func caption(plain string) string {
	const limit = MaxCaptionRunes - 1 // room for the ellipsis
	if utf8.RuneCountInString(plain) <= limit {
		return plain
	}
	cut := string([]rune(plain)[:limit])
	if i := strings.LastIndexAny(cut, "\n "); i > limit/2 {
		cut = cut[:i]
	}
	return strings.TrimSpace(cut) + "…"
}

func (b *Bot) readTranscript(ctx context.Context, id string) (transcript.Transcript, error) {
	rc, err := b.Objects.Get(ctx, job.ResultKey(id))
	if err != nil {
		return transcript.Transcript{}, err
	}
	defer rc.Close()
	var t transcript.Transcript
	if err := json.NewDecoder(rc).Decode(&t); err != nil {
		return transcript.Transcript{}, fmt.Errorf("read transcript of job %s: %w", id, err)
	}
	return t, nil
}

// sendOrEdit puts text into the status message, or, when there is none or
// it is gone, sends it as a reply to the job's message (without the reply
// when that message was deleted too).
func (b *Bot) sendOrEdit(ctx context.Context, j job.Job, status int64, text string) (int64, error) {
	if status != 0 {
		_, err := withRetry(ctx, b, func(ctx context.Context) (*models.Message, error) {
			return b.api.EditMessageText(ctx, &bot.EditMessageTextParams{ChatID: j.TelegramChatID, MessageID: int(status), Text: text})
		})
		switch {
		case err == nil, notModified(err):
			return status, nil
		case !errors.Is(err, bot.ErrorBadRequest):
			return 0, err
		}
		// The status message was deleted or can no longer be edited.
	}
	msg, err := withRetry(ctx, b, func(ctx context.Context) (*models.Message, error) {
		return b.api.SendMessage(ctx, &bot.SendMessageParams{
			ChatID:          j.TelegramChatID,
			Text:            text,
			ReplyParameters: &models.ReplyParameters{MessageID: int(j.TelegramMessageID), AllowSendingWithoutReply: true},
		})
	})
	if err != nil {
		return 0, err
	}
	return int64(msg.ID), nil
}

// notModified: an edit to the text the message already has.
func notModified(err error) bool {
	return errors.Is(err, bot.ErrorBadRequest) && strings.Contains(err.Error(), "message is not modified")
}

func chatLang(c botstate.Chat) lang {
	if c.UILang == string(ru) {
		return ru
	}
	return en
}
