package telegram

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"transcriber/internal/errs"
	"transcriber/internal/job"
)

// probe asks getFile about a file of unknown size so one too big for a bot
// gets the upload link at once: getFile answers it 400 "Bad Request: file is
// too big" (core.telegram.org/bots/api#getfile; the text as met at
// github.com/TelegramBotAPI/errors). A permanent failure is left to fetch.
func (b *Bot) probe(ctx context.Context, med media) (media, *models.File, error) {
	f, err := retry(ctx, b, b.callTimeout, func(ctx context.Context) (*models.File, error) {
		return b.api.GetFile(ctx, &bot.GetFileParams{FileID: med.FileID})
	})
	switch {
	case err == nil:
		med.Size = f.FileSize
		return med, f, nil
	case fileTooBig(err):
		med.TooBig = true
		return med, nil, nil
	}
	err = classify(b.scrubbed(err))
	if errs.KindOf(err) == errs.Permanent {
		return med, nil, nil
	}
	return med, nil, err
}

func fileTooBig(err error) bool {
	return errors.Is(err, bot.ErrorBadRequest) && strings.Contains(strings.ToLower(err.Error()), "file is too big")
}

// fetch streams the file into the job's source object, which starts
// ingest, unless it is there; f is probe's getFile answer, if any.
func (b *Bot) fetch(ctx context.Context, j job.Job, med media, f *models.File) error {
	if info, err := b.Objects.Head(ctx, job.SourceKey(j.ID)); err == nil && info.Size > 0 {
		return nil
	} else if err != nil && !errs.Is(err, errs.NotFound) {
		return err
	}
	if f == nil {
		var err error
		if f, err = b.api.GetFile(ctx, &bot.GetFileParams{FileID: med.FileID}); fileTooBig(err) {
			return errTooBigForBot
		} else if err != nil {
			return classify(b.scrubbed(err))
		}
	}
	if f.FileSize > maxDownloadBytes {
		return errTooBigForBot
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.api.FileDownloadLink(f), nil)
	if err != nil {
		return errs.New(errs.Internal, "telegram_download", "the file's download link could not be made")
	}
	resp, err := b.http.Do(req)
	if err != nil {
		return errs.New(errs.Unavailable, "telegram_download", "the file could not be downloaded from Telegram: "+b.scrub(unwrapURL(err)))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		kind := errs.Unavailable
		if resp.StatusCode >= 400 && resp.StatusCode < 500 && resp.StatusCode != http.StatusTooManyRequests {
			kind = errs.Permanent
		}
		return errs.New(kind, "telegram_download", fmt.Sprintf("Telegram answered %d to the file download", resp.StatusCode))
	}
	body := &capped{r: resp.Body, left: maxDownloadBytes}
	n, err := b.Objects.Upload(ctx, job.SourceKey(j.ID), body, med.ContentType)
	if err != nil {
		return b.scrubbed(err)
	}
	b.Log.InfoContext(ctx, "file fetched", "job_id", j.ID, "size_bytes", n)
	return nil
}

// unwrapURL is a transport error's text without the URL, which holds the token.
func unwrapURL(err error) string {
	var ue interface{ Unwrap() error }
	if errors.As(err, &ue) && ue.Unwrap() != nil {
		return ue.Unwrap().Error()
	}
	return err.Error()
}

// capped fails past left bytes: an oversized body aborts the upload, not lands cut.
type capped struct {
	r    io.Reader
	left int64
}

var errTooBigForBot = errs.New(errs.Permanent, "telegram_file_too_big", "Telegram says the file is larger than a bot may download")

var errCapped = errs.New(errs.Permanent, "telegram_file_too_big", "the file from Telegram is larger than a bot may download")

func (c *capped) Read(p []byte) (int, error) {
	if c.left < 0 {
		return 0, errCapped
	}
	if int64(len(p)) > c.left+1 {
		p = p[:c.left+1]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	if c.left < 0 {
		return n, errCapped
	}
	return n, err
}
