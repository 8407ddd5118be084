package telegram

import (
	"cmp"
	"context"
	"errors"
	"strings"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"transcriber/internal/botstate"
	"transcriber/internal/errs"
	"transcriber/internal/job"
	"transcriber/internal/outbox"
	"transcriber/internal/spend"
	"transcriber/internal/telegram/tgconf"
	"transcriber/internal/uploadlink"
)

func (b *Bot) onMessage(ctx context.Context, m *models.Message) error {
	if m.From == nil || m.From.IsBot {
		return nil
	}
	l := langOf(m.From.LanguageCode)
	if !b.cfg.Allowed.Allows(m.From.ID) {
		// before any read: a stranger costs at most a day's one answer
		return b.refuse(ctx, m, l)
	}
	cmd, arg, to := command(m.Text)
	if cmd != "" && to != "" { // a command to no bot is everyone's
		name, err := b.username(ctx)
		if err != nil || !strings.EqualFold(to, name) {
			return err // nil: another bot's command, in a group
		}
	}
	med, isMedia := mediaOf(m)
	chat, err := b.State.Chat(ctx, m.Chat.ID)
	if err != nil {
		return err
	}
	addressed := cmd != "" || (isMedia && autoOn(chat, m.Chat)) || private(m.Chat)
	if !addressed {
		return nil // group chatter; not for the bot
	}
	if chat.UILang != string(l) || !chat.BlockedAt.IsZero() { // its reply language; it writes again: no block
		chat, err = b.State.UpdateChat(ctx, m.Chat.ID, b.Clock.Now(), func(c *botstate.Chat) { c.UILang, c.BlockedAt = string(l), time.Time{} })
		if err != nil {
			return err
		}
	}
	switch {
	case cmd != "":
		return b.command(ctx, m, cmd, arg, chat, l)
	case isMedia:
		return b.intake(ctx, m, m.From.ID, med, chat, l)
	case private(m.Chat):
		return b.reply(ctx, m, b.helpText(l), nil)
	}
	return nil
}

// refuse tells a stranger (not on TELEGRAM_ALLOWED_USERS) their id in a
// private chat once a UTC day, keeping only the day's mark, a counter
// reserved up to 1 before the answer (one answer of many messages at once);
// a failure that may pass gives the mark back for a redelivery.
func (b *Bot) refuse(ctx context.Context, m *models.Message, l lang) error {
	if !private(m.Chat) || b.Counters == nil {
		return nil
	}
	day, _ := spend.Day(b.Clock.Now())
	key := "refused_day:" + spend.Telegram(m.From.ID)
	_, first, err := b.Counters.Reserve(ctx, key, day, 1, 1)
	if err != nil {
		return err
	}
	if !first {
		b.Log.DebugContext(ctx, "stranger not answered", "reason", "told_today", "user_id", m.From.ID)
		return nil
	}
	_, err = retry(ctx, b, b.callTimeout, func(ctx context.Context) (*models.Message, error) {
		return b.api.SendMessage(ctx, replyTo(m, txtRefusal.f(l, m.From.ID)))
	})
	if err == nil {
		b.Log.InfoContext(ctx, "stranger told", "user_id", m.From.ID)
		return nil
	}
	if chatGone(err) {
		b.Log.InfoContext(ctx, "stranger not answered", "reason", "chat_gone", "user_id", m.From.ID, "error", b.scrub(err.Error()))
		return nil
	}
	err = classify(b.scrubbed(err))
	if errs.KindOf(err) == errs.Permanent {
		return err // it would meet the same refusal today
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	if rerr := b.Counters.Release(rctx, key, day, 1); rerr != nil {
		b.Log.WarnContext(ctx, "stranger mark not released", "user_id", m.From.ID, "error", rerr.Error())
	}
	return err
}

// command splits "/cmd@bot arg"; not a command is "".
func command(text string) (cmd, arg, to string) {
	if !strings.HasPrefix(text, "/") {
		return "", "", ""
	}
	word, arg, _ := strings.Cut(strings.TrimSpace(text[1:]), " ")
	word, to, _ = strings.Cut(word, "@")
	return strings.ToLower(word), strings.TrimSpace(arg), to
}

// username is the bot's @username, asked (getMe) once per instance.
func (b *Bot) username(ctx context.Context) (string, error) {
	b.me.Lock()
	defer b.me.Unlock()
	if b.me.name != "" {
		return b.me.name, nil
	}
	u, err := retry(ctx, b, b.callTimeout, func(ctx context.Context) (*models.User, error) { return b.api.GetMe(ctx) })
	if err != nil {
		return "", classify(b.scrubbed(err))
	}
	b.me.name = u.Username
	return u.Username, nil
}

// media is the file a message carries, if the bot transcribes it.
type media struct {
	FileID      string
	UniqueID    string // the same file whoever sends it: the reuse key
	Size        int64  // 0: unknown
	ContentType string
	Filename    string
	TooBig      bool // getFile refused it, saying no size (probe)
}

// mediaOf returns the message's voice, audio, video, video note, or audio
// or video document, its name cleaned (job.CleanFilename).
func mediaOf(m *models.Message) (media, bool) {
	switch {
	case m == nil:
	case m.Voice != nil:
		v := m.Voice
		return media{v.FileID, v.FileUniqueID, v.FileSize, cmp.Or(v.MimeType, "audio/ogg"), "voice.ogg", false}, true
	case m.Audio != nil:
		a := m.Audio
		return media{a.FileID, a.FileUniqueID, a.FileSize, cmp.Or(a.MimeType, "audio/mpeg"), job.CleanFilename(a.FileName), false}, true
	case m.Video != nil:
		v := m.Video
		return media{v.FileID, v.FileUniqueID, v.FileSize, cmp.Or(v.MimeType, "video/mp4"), job.CleanFilename(v.FileName), false}, true
	case m.VideoNote != nil:
		v := m.VideoNote
		return media{v.FileID, v.FileUniqueID, int64(v.FileSize), "video/mp4", "video_note.mp4", false}, true
	case m.Document != nil:
		d, ct := m.Document, strings.ToLower(m.Document.MimeType)
		if strings.HasPrefix(ct, "audio/") || strings.HasPrefix(ct, "video/") {
			return media{d.FileID, d.FileUniqueID, d.FileSize, ct, job.CleanFilename(d.FileName), false}, true
		}
	}
	return media{}, false
}

// intake makes or finds m's job, paid by payer (who sent it or asked
// /transcribe), posts its status, and fetches the file or gives an upload
// link; a chat found blocked ends the job unfetched (endJob).
func (b *Bot) intake(ctx context.Context, m *models.Message, payer int64, med media, chat botstate.Chat, l lang) error {
	var file *models.File
	if med.Size <= 0 {
		med.Size = 0 // a negative file_size says nothing
		var err error
		if med, file, err = b.probe(ctx, med); err != nil {
			return err
		}
	}
	byLink := med.Size > maxDownloadBytes || med.TooBig
	refusal, noLink := "", byLink && (len(b.cfg.UploadLinkSecret) == 0 || b.publicBase(ctx) == "")
	switch {
	case med.Size > b.cfg.MaxSourceBytes:
		refusal = txtTooLarge.f(l, humanBytes(med.Size), humanBytes(b.cfg.MaxSourceBytes))
	case noLink && med.Size > 0:
		refusal = txtNoLink.f(l, humanBytes(med.Size), humanBytes(maxDownloadBytes))
	case noLink:
		refusal = txtNoLinkUnsized.f(l, humanBytes(maxDownloadBytes))
	}
	if refusal != "" {
		return b.postOnce(ctx, key(m, partStatus), "", func(ctx context.Context) (*models.Message, error) {
			return b.api.SendMessage(ctx, replyTo(m, refusal))
		})
	}
	window := b.cfg.DownloadWindow
	if byLink {
		window = b.cfg.LinkWindow
	}
	d := job.Draft{
		Source:            job.SourceTelegram,
		OwnerID:           ownerID(m.Chat.ID),
		ChargedTo:         spend.Telegram(payer),
		Language:          chat.Language,
		Speakers:          chat.Has(botstate.FeatureSpeakers),
		Summary:           chat.Has(botstate.FeatureSummary) && b.cfg.Summaries,
		Filename:          med.Filename,
		SizeBytes:         med.Size,
		ContentType:       med.ContentType,
		TelegramChatID:    m.Chat.ID,
		TelegramMessageID: int64(m.ID),
		UploadWindow:      window,
	}
	d.Priority = draftPriority(chat, d)
	if b.Reuser != nil && med.UniqueID != "" {
		d.ReuseKey = job.ReuseKeyOfDraft(b.cfg.ReuseScope, d, job.MediaOfTelegram(med.UniqueID), cmp.Or(d.Language, b.cfg.DefaultLanguage))
	}
	// within the payer's limit of unfinished jobs, at which a redelivery goes on
	made := func(j job.Job) bool { return j.TelegramChatID == m.Chat.ID && j.TelegramMessageID == int64(m.ID) }
	j, created, err := spend.Create(ctx, b.Counters, b.Jobs, b.cfg.Limits, d.ChargedTo, b.Clock.Now(), made,
		func() (job.Job, bool, error) { return b.Jobs.CreateForMessage(ctx, d) }, b.Log)
	if errs.CodeOf(err) == spend.CodeTooManyActive {
		b.Log.InfoContext(ctx, "job refused", "reason", "too_many_active", "user_id", payer, "chat_id", m.Chat.ID)
		// a reply, not the status, which stays free for a later /transcribe
		return b.reply(ctx, m, txtTooManyActive.f(l, b.cfg.Limits.ActiveJobs), nil)
	}
	if err != nil {
		return err
	}
	log := b.Log.With("job_id", j.ID, "chat_id", m.Chat.ID, "message_id", m.ID)
	if created {
		log.InfoContext(ctx, "job made", "size_bytes", med.Size, "content_type", med.ContentType, "by_link", byLink)
	}
	if j.Deleted() {
		return nil
	}
	now := b.Clock.Now()
	if _, _, err := b.Outbox.Put(ctx, key(m, partResult).entry(j.ID), now.Add(tgconf.DefaultResultCheck), now); err != nil {
		return err
	}
	status := txtReceived.in(l)
	if byLink {
		link := uploadlink.URL(b.publicBase(ctx), b.cfg.UploadLinkSecret, j.ID)
		hours := text{"%d h", "%d ч"}.f(l, int(b.cfg.LinkWindow.Hours()))
		status = txtLinkUnsized.f(l, humanBytes(maxDownloadBytes), hours, link)
		if med.Size > 0 {
			status = txtLink.f(l, humanBytes(med.Size), humanBytes(maxDownloadBytes), hours, link)
		}
	}
	gone, err := b.post(ctx, key(m, partStatus), j.ID, func(ctx context.Context) (*models.Message, error) {
		p := replyTo(m, status)
		p.LinkPreviewOptions = &models.LinkPreviewOptions{IsDisabled: bot.True()}
		return b.api.SendMessage(ctx, p)
	}, func(ctx context.Context) error { return b.endJob(ctx, j) })
	if err != nil || gone {
		return err
	}
	if byLink || j.State != job.AwaitingUpload {
		return nil
	}
	if j.ReuseKey != "" {
		switch reused, err := b.Reuser.Reuse(ctx, j); {
		case err != nil:
			log.WarnContext(ctx, "reuse failed", "error", err.Error())
		case reused:
			return nil
		}
	}
	return b.fetch(ctx, j, med, file)
}

// draftPriority is deferred under /mode deferred, else fast (synchronous
// when short) unless speakers or a summary are asked, which sync lacks.
func draftPriority(chat botstate.Chat, d job.Draft) job.Priority {
	switch p := priorityOf(chat); {
	case p == job.PriorityDeferred:
		return p
	case d.Speakers || d.Summary:
		return job.PriorityNormal
	}
	return job.PriorityFast
}

var errChatGone = errs.New(errs.Permanent, "chat_gone", "the bot can no longer write to this chat")

// endJob fails the unfetched job of a chat found gone, its result
// undelivered; not deleted, which would free the message for a redelivery
// to make a new job and fetch. A job held by another claim is left to a
// redelivery: the status stays pending, so each meets the block again.
func (b *Bot) endJob(ctx context.Context, j job.Job) error {
	c, err := b.Jobs.Claim(ctx, j.ID, job.Ingest)
	if errors.Is(err, job.ErrNotClaimable) {
		cur, gerr := b.Jobs.Get(ctx, j.ID)
		switch {
		case errors.Is(gerr, job.ErrNotFound):
			return nil
		case gerr != nil:
			return gerr
		case cur.State.Terminal() || cur.Deleted():
			return nil
		}
		return errs.New(errs.Unavailable, "job_busy", "the job is held by another step; its chat is gone")
	}
	if errors.Is(err, job.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	f := job.FailureOf(errChatGone)
	c.State, c.ErrorCode, c.ErrorMessage = job.Failed, f.Code, f.Message
	ended, err := b.Jobs.Save(ctx, c, job.Next{})
	if err != nil {
		return err
	}
	spend.Ended(ctx, b.Counters, b.cfg.Limits, ended, b.Log)
	b.box().Finish(ctx, ref{j.TelegramChatID, j.TelegramMessageID, partResult}.key(), outbox.Outcome{State: outbox.Failed})
	b.Log.InfoContext(ctx, "job ended", "reason", "chat_gone", "job_id", j.ID, "chat_id", j.TelegramChatID)
	return nil
}
