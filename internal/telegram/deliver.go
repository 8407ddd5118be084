package telegram

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"transcriber/internal/botstate"
	"transcriber/internal/errs"
	"transcriber/internal/job"
	"transcriber/internal/outbox"
	"transcriber/internal/telegram/tgconf"
	"transcriber/internal/transcript"
)

// The bot is the pipeline's Notifier (Moved, Finished); Sweep, on the
// timer, delivers what they could not.

const (
	DeliveryGiveUp = 12 * time.Hour // how long after a job ended its result is still tried
	// a sweep takes no new result with less left before its deadline, so the
	// one it holds is recorded in time
	sweepBudget = 15 * time.Second
)

// Moved edits a Telegram job's status message to say where the job is, at
// most once every DefaultStatusEvery; a failed edit is reported, not retried.
func (b *Bot) Moved(ctx context.Context, j job.Job) error {
	if j.Source != job.SourceTelegram {
		return nil
	}
	// telling: the text says how long the wait is (a long recording, a
	// deferred job), worth an edit however soon after the last.
	label, telling := txtConverting.in, false
	switch j.State {
	case job.Created:
	case job.Converted, job.Transcribe:
		label = func(l lang) string { return recognizingText(j, l) }
		telling = j.DurationMs > 0 && (j.Deferred() || time.Duration(j.DurationMs)*time.Millisecond > longWait)
	default:
		return nil
	}
	st, err := b.Outbox.Get(ctx, outbox.Telegram, ref{j.TelegramChatID, j.TelegramMessageID, partStatus}.key())
	if errors.Is(err, outbox.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if st.State != outbox.Delivered || st.SentID == 0 || (!telling && b.Clock.Now().Sub(st.UpdatedAt) < tgconf.DefaultStatusEvery) {
		return nil
	}
	chat, err := b.State.Chat(ctx, j.TelegramChatID)
	if err != nil || !chat.BlockedAt.IsZero() {
		return err
	}
	if err := b.editText(ctx, j.TelegramChatID, st.SentID, label(langOf(chat.UILang))); err != nil {
		return classify(b.scrubbed(err))
	}
	_, err = b.box().Record(ctx, st.Key, outbox.Outcome{State: outbox.Delivered})
	return err
}

// Finished delivers an ended Telegram job's transcript or failure; one that
// fails is left to the sweep.
func (b *Bot) Finished(ctx context.Context, j job.Job) error {
	if j.Source != job.SourceTelegram {
		return nil
	}
	r := ref{j.TelegramChatID, j.TelegramMessageID, partResult}
	d, taken, err := b.Outbox.Begin(ctx, r.entry(j.ID), b.Clock.Now(), b.cfg.DeliveryLease)
	if err != nil || !taken {
		return err
	}
	_, err = b.deliver(ctx, j, d)
	return err
}

// Sweep delivers the due results (failed, or never handed over) and returns
// how many it sent.
func (b *Bot) Sweep(ctx context.Context) (int, error) {
	box := b.box()
	return box.Sweep(ctx, sweepBudget, func(ctx context.Context, d outbox.Entry) (bool, error) {
		if !strings.HasSuffix(d.Key, "/"+partResult) || d.JobID == "" {
			// a failed status or reply: its update came again or never will
			box.Finish(ctx, d.Key, outbox.Outcome{State: outbox.Failed})
			return false, nil
		}
		j, ok, err := box.Job(ctx, b.Jobs, d)
		if !ok {
			return false, err
		}
		delivered, err := b.deliver(ctx, j, d)
		if err != nil {
			b.Log.WarnContext(ctx, "result not delivered", "job_id", j.ID, "error", b.scrub(err.Error()))
			if errors.Is(err, context.DeadlineExceeded) {
				// Telegram did not answer within the window: the rest wait
				// for the next pass rather than each hold this call as long
				return false, outbox.ErrStop
			}
		}
		return delivered, nil
	})
}

func (b *Bot) box() outbox.Sender {
	return outbox.Sender{Store: b.Outbox, Kind: outbox.Telegram, Now: b.Clock.Now, Lease: b.cfg.DeliveryLease, Log: b.Log}
}

// deliver sends job j's result under entry d, which the caller holds,
// records the outcome, and reports whether it sent the result.
func (b *Bot) deliver(ctx context.Context, j job.Job, d outbox.Entry) (bool, error) {
	log, box := b.Log.With("job_id", j.ID, "chat_id", j.TelegramChatID), b.box()
	if !j.State.Terminal() {
		box.Retry(ctx, d.Key, tgconf.DefaultResultCheck)
		return false, nil
	}
	chat, err := b.State.Chat(ctx, j.TelegramChatID)
	if err != nil {
		box.Retry(ctx, d.Key, time.Minute)
		return false, err
	}
	if !chat.BlockedAt.IsZero() {
		log.InfoContext(ctx, "result not delivered", "reason", "bot_blocked")
		box.Finish(ctx, d.Key, outbox.Outcome{State: outbox.Failed})
		return false, nil
	}
	status := int64(0)
	st, err := b.Outbox.Get(ctx, outbox.Telegram, ref{j.TelegramChatID, j.TelegramMessageID, partStatus}.key())
	if err == nil && st.State == outbox.Delivered {
		status = st.SentID
	}
	wctx, cancel := b.deliveryWindow(ctx, d.LeaseUntil)
	defer cancel()
	var sentID int64
	if j.State == job.Done {
		sentID, err = b.sendResult(wctx, j, chat, status, d)
	} else {
		sentID, err = b.sendOrEdit(wctx, j, status, failureText(langOf(chat.UILang), j), nil)
	}
	since := b.Clock.Now().Sub(j.UpdatedAt) // decides the give-up and the pause
	switch {
	case errors.Is(err, errNotHeld):
		// another sender has it now, or the sweep will: its record stands
		log.WarnContext(ctx, "result not held at its send", "error", b.scrub(err.Error()))
		return false, nil
	case err == nil:
		log.InfoContext(ctx, "result delivered", "state", string(j.State), "attempt", d.Attempts+1)
		box.Finish(ctx, d.Key, outbox.Outcome{State: outbox.Delivered, SentID: sentID, Attempt: b.attempt(nil)})
		if to := chat.TranslateTo(); to != "" && j.State == job.Done && b.Translations != nil {
			if err := b.sendTranslation(wctx, j, chat, to); err != nil {
				log.WarnContext(ctx, "translation not delivered", "lang", to, "error", b.scrub(err.Error()))
			}
		}
		return true, nil
	case chatGone(err):
		return false, b.blocked(ctx, j.TelegramChatID, d.Key, err, nil)
	case errs.KindOf(classify(err)) == errs.Permanent, since >= DeliveryGiveUp:
		log.ErrorContext(ctx, "result given up", "error", b.scrub(err.Error()), "since_end", since.String())
		box.Finish(ctx, d.Key, outbox.Outcome{State: outbox.Failed, Attempt: b.attempt(err)})
		return false, classify(b.scrubbed(err))
	}
	pause, ok := retryAfter(err)
	if !ok {
		pause = retryPause(since)
	}
	box.Finish(ctx, d.Key, outbox.Outcome{State: outbox.Pending, NextAt: b.Clock.Now().Add(pause), Attempt: b.attempt(err)})
	return false, classify(b.scrubbed(err))
}

// deliveryWindow ends recordTimeout before the lease until leaseUntil (or
// ctx's deadline), so the outcome is recorded while the lease holds. Its
// calls have no bound of their own (retry's limit 0): a slow answer is
// waited for, not given up and sent again.
func (b *Bot) deliveryWindow(ctx context.Context, leaseUntil time.Time) (context.Context, context.CancelFunc) {
	left := leaseUntil.Sub(b.Clock.Now()) - recordTimeout
	if d, ok := ctx.Deadline(); ok {
		left = min(left, d.Sub(b.Clock.Now())-recordTimeout)
	}
	return context.WithTimeout(ctx, left)
}

// mayHaveLanded is the SentID a pending result records before a send that
// would show twice if made again (a new message where an edit of the status
// message could carry the result); a try of a result so marked edits the
// status message instead. Message ids are positive.
const mayHaveLanded int64 = -1

// errNotHeld: markLanding lost the entry (taken by another sender, or not
// taken again); nothing is sent or recorded, and it is due at its lease's end.
var errNotHeld = errors.New("the delivery is no longer held")

// markLanding records mayHaveLanded on result d. Finish ends the lease, so
// d is taken again at once until the same end: should this sender stop, it
// is due then.
func (b *Bot) markLanding(ctx context.Context, d outbox.Entry) error {
	now := b.Clock.Now()
	left := d.LeaseUntil.Sub(now)
	if left <= 0 {
		return errNotHeld
	}
	o := outbox.Outcome{State: outbox.Pending, SentID: mayHaveLanded, NextAt: d.LeaseUntil}
	if _, err := b.Outbox.Finish(ctx, outbox.Telegram, d.Key, o, now); err != nil {
		return err
	}
	_, taken, err := b.Outbox.Begin(ctx, d, now, left)
	switch {
	case err != nil:
		return fmt.Errorf("%w: %w", errNotHeld, err)
	case !taken:
		return errNotHeld
	}
	return nil
}

// retryPause is the wait before a result's next try: as long as the job
// has waited, within a minute and an hour, so tries double in spacing.
func retryPause(since time.Duration) time.Duration {
	return min(max(since, time.Minute), time.Hour)
}

const summaryAfter = 2 * time.Minute // a shorter recording reads faster than its summary

// summaryText is a heading and the job's summary cut to one message, or "".
func summaryText(j job.Job, t transcript.Transcript, l lang) string {
	if t.Summary == nil || time.Duration(j.DurationMs)*time.Millisecond <= summaryAfter {
		return ""
	}
	body := strings.TrimSpace(t.Summary.Text)
	if body == "" {
		return ""
	}
	s := txtSummaryHead.in(l) + "\n" + body
	if utf16Len(s) > tgconf.MaxMessageUTF16 {
		s = strings.TrimSpace(prefixUTF16(s, tgconf.MaxMessageUTF16-1)) + "…"
	}
	return s
}

// sendResult delivers a transcript under entry d: into the status message
// when it fits one message, else as a document in the chat's format, its
// first lines the caption. A summary goes at the head of the one message,
// else into the status message (or a message just before the document).
// A document sent again shows twice: with a status message, d is marked
// first (markLanding), and a try of a marked result edits the status
// message into the document; Telegram refusing that edit sends it anew.
func (b *Bot) sendResult(ctx context.Context, j job.Job, chat botstate.Chat, status int64, d outbox.Entry) (int64, error) {
	l := langOf(chat.UILang)
	t, err := b.readTranscript(ctx, j.ID)
	if err != nil {
		return 0, err
	}
	txt, err := rendered(t, transcript.TXT)
	plain := strings.TrimSpace(string(txt))
	if err != nil {
		return 0, err
	} else if plain == "" || t.Empty() {
		return b.sendOrEdit(ctx, j, status, txtNoSpeech.in(l), nil)
	}
	markup := b.buttonFor(j, t, chat)
	summary := summaryText(j, t, l)
	whole := plain
	if summary != "" {
		whole = summary + "\n\n" + plain
	}
	if utf16Len(whole) <= tgconf.MaxMessageUTF16 {
		return b.sendOrEdit(ctx, j, status, whole, markup)
	}
	f := formatOf(chat)
	doc, err := rendered(t, f)
	if err != nil {
		return 0, err
	}
	name := "transcript." + string(f)
	if status != 0 && d.SentID == mayHaveLanded {
		_, err := retry(ctx, b, 0, func(ctx context.Context) (*models.Message, error) {
			return b.api.EditMessageMedia(ctx, &bot.EditMessageMediaParams{
				ChatID: j.TelegramChatID, MessageID: int(status), ReplyMarkup: markup,
				Media: &models.InputMediaDocument{Media: "attach://" + name, Caption: caption(cmp.Or(summary, plain)), MediaAttachment: bytes.NewReader(doc)},
			})
		})
		if done, ferr := edited(err); done || ferr != nil {
			return status, ferr
		}
		b.Log.InfoContext(ctx, "document sent anew", "reason", "status_not_editable", "job_id", j.ID, "error", b.scrub(err.Error()))
	}
	if summary != "" && status == 0 {
		if _, err := b.sendOrEdit(ctx, j, 0, summary, nil); err != nil {
			return 0, err
		}
	}
	if status != 0 && d.SentID != mayHaveLanded {
		if err := b.markLanding(ctx, d); err != nil {
			return 0, err
		}
	}
	msg, err := retry(ctx, b, 0, func(ctx context.Context) (*models.Message, error) {
		return b.api.SendDocument(ctx, &bot.SendDocumentParams{
			ChatID: j.TelegramChatID, Caption: caption(plain), ReplyParameters: replyAt(j.TelegramMessageID), ReplyMarkup: markup,
			Document: &models.InputFileUpload{Filename: name, Data: bytes.NewReader(doc)},
		})
	})
	if err != nil {
		return 0, err
	}
	if status != 0 {
		if err := b.editText(ctx, j.TelegramChatID, status, cmp.Or(summary, txtLongDone.in(l))); err != nil {
			b.Log.WarnContext(ctx, "status message not edited", "job_id", j.ID, "error", b.scrub(err.Error()))
		}
	}
	return int64(msg.ID), nil
}

// rendered is t in format f.
func rendered(t transcript.Transcript, f transcript.Format) ([]byte, error) {
	var buf bytes.Buffer
	err := transcript.Render(&buf, t, f)
	return buf.Bytes(), err
}

// caption is the transcript's first lines, cut at a line or word within
// the caption limit (UTF-16 units, never splitting a character).
func caption(plain string) string {
	if utf16Len(plain) <= tgconf.MaxCaptionUTF16 {
		return plain
	}
	const limit = tgconf.MaxCaptionUTF16 - 1 // room for the ellipsis, one unit
	cut := prefixUTF16(plain, limit)
	if i := strings.LastIndexAny(cut, "\n "); i >= 0 && utf16Len(cut[:i]) > limit/2 {
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
// it is gone, sends it as a reply to the job's message. Its calls are a
// delivery's (deliveryWindow).
func (b *Bot) sendOrEdit(ctx context.Context, j job.Job, status int64, text string, markup models.ReplyMarkup) (int64, error) {
	if status != 0 {
		_, err := retry(ctx, b, 0, func(ctx context.Context) (*models.Message, error) {
			return b.api.EditMessageText(ctx, &bot.EditMessageTextParams{ChatID: j.TelegramChatID, MessageID: int(status), Text: text, ReplyMarkup: markup})
		})
		if done, ferr := edited(err); done || ferr != nil {
			return status, ferr
		}
	}
	msg, err := retry(ctx, b, 0, func(ctx context.Context) (*models.Message, error) {
		return b.api.SendMessage(ctx, &bot.SendMessageParams{ChatID: j.TelegramChatID, Text: text, ReplyParameters: replyAt(j.TelegramMessageID), ReplyMarkup: markup})
	})
	if err != nil {
		return 0, err
	}
	return int64(msg.ID), nil
}

// edited sorts an edit's error: done (none, or the text was there already),
// refused (a 400: the message deleted or no longer editable; neither), or
// failed (ferr).
func edited(err error) (done bool, ferr error) {
	switch {
	case err == nil, notModified(err):
		return true, nil
	case errors.Is(err, bot.ErrorBadRequest):
		return false, nil
	}
	return false, err
}

// editText edits message id of chat to text, once; the text it has already is no error.
func (b *Bot) editText(ctx context.Context, chat, id int64, text string) error {
	_, err := b.api.EditMessageText(ctx, &bot.EditMessageTextParams{ChatID: chat, MessageID: int(id), Text: text})
	if notModified(err) {
		return nil
	}
	return err
}

// notModified: an edit to the text the message already has.
func notModified(err error) bool {
	return errors.Is(err, bot.ErrorBadRequest) && strings.Contains(err.Error(), "message is not modified")
}

// replyAt replies to message msg, or without the reply when it was deleted.
func replyAt[T int | int64](msg T) *models.ReplyParameters {
	return &models.ReplyParameters{MessageID: int(msg), AllowSendingWithoutReply: true}
}
