// Package translation translates a done job's transcript once per
// language and keeps it with the job (job.TranslationsKey). Utterances keep
// their times, speaker and channel but lose their word timings; a summary
// is translated too. The characters are reserved before the call
// (spend.ReserveTranslation) and what it did not bill given back.
package translation

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"transcriber/internal/clock"
	"transcriber/internal/errs"
	"transcriber/internal/job"
	"transcriber/internal/quota"
	"transcriber/internal/spend"
	"transcriber/internal/transcript"
	"transcriber/internal/translate"
)

type Translator interface {
	Translate(ctx context.Context, texts []string, target, source string) (translate.Result, error)
}

// Objects keeps the translations; missing objects are errs.NotFound.
type Objects interface {
	Get(ctx context.Context, key string) (io.ReadCloser, error)
	Put(ctx context.Context, key string, body []byte, contentType string) error
}

type Service struct {
	Translator Translator
	Objects    Objects
	Counters   quota.Counters // nil: nothing counted or limited
	Limits     spend.Limits
	Clock      clock.Clock
	Log        *slog.Logger
}

var (
	ErrOff      = errs.New(errs.Invalid, "translation_unavailable", "translation is not set up on this installation")
	ErrLanguage = errs.New(errs.Invalid, "unknown_language", "the language is not one the translator knows")
)

// Code is lang as the translator names it: "en" for "en-US".
func Code(lang string) string {
	lang = strings.ToLower(strings.TrimSpace(lang))
	if i := strings.IndexAny(lang, "-_"); i > 0 {
		lang = lang[:i]
	}
	return lang
}

// Of returns done job j's transcript t in lang, kept or translated now.
func (s *Service) Of(ctx context.Context, j job.Job, t transcript.Transcript, lang string) (transcript.Transcript, error) {
	if s == nil || s.Translator == nil {
		return transcript.Transcript{}, ErrOff
	}
	code := Code(lang)
	if !translate.Supported(code) {
		return transcript.Transcript{}, ErrLanguage
	}
	kept, err := s.kept(ctx, j)
	if err != nil {
		return transcript.Transcript{}, err
	}
	if tr, ok := kept[code]; ok {
		return tr, nil
	}
	texts := textsOf(t)
	chars := translate.Estimate(texts)
	res, err := spend.ReserveTranslation(ctx, s.Counters, s.Limits, j.ChargedTo, chars, s.Clock.Now())
	if err != nil {
		return transcript.Transcript{}, err
	}
	out, terr := s.Translator.Translate(ctx, texts, code, Code(t.Language))
	s.settle(ctx, j, res, out)
	if terr != nil {
		return transcript.Transcript{}, terr
	}
	tr := withTexts(t, out.Texts, code)
	kept[code] = tr
	// of two kept at once one may be lost and translated again: a call more, never a wrong text
	b, err := json.Marshal(kept)
	if err == nil {
		err = s.Objects.Put(ctx, job.TranslationsKey(j.ID), b, "application/json")
	}
	if err != nil {
		s.Log.WarnContext(ctx, "translation not kept", "job_id", j.ID, "lang", code, "error", err.Error())
	}
	return tr, nil
}

// settle gives back what the call did not bill; what was sent unanswered
// counts as billed.
func (s *Service) settle(ctx context.Context, j job.Job, res spend.Translating, out translate.Result) {
	billed := out.BilledChars + out.UnsureChars
	left := res
	left.Chars = max(res.Chars-billed, 0)
	left.Micros = max(res.Micros-s.Limits.Prices.Translation(billed), 0)
	if err := left.Release(ctx, s.Counters); err != nil {
		s.Log.WarnContext(ctx, "translation reservation not given back", "job_id", j.ID, "error", err.Error())
	}
	paid := res
	paid.Chars, paid.Micros = billed, res.Micros-left.Micros
	if err := paid.Billed(ctx, s.Counters); err != nil {
		s.Log.WarnContext(ctx, "translation spend not counted", "job_id", j.ID, "error", err.Error())
	}
}

// textsOf is each utterance's text (normalized if it can be), then the summary.
func textsOf(t transcript.Transcript) []string {
	texts := make([]string, 0, len(t.Utterances)+1)
	for _, u := range t.Utterances {
		texts = append(texts, cmp.Or(u.Normal, u.Text))
	}
	if t.Summary != nil {
		texts = append(texts, t.Summary.Text)
	}
	return texts
}

func withTexts(t transcript.Transcript, texts []string, lang string) transcript.Transcript {
	out := t
	out.Language = lang
	out.Utterances = make([]transcript.Utterance, len(t.Utterances))
	for i, u := range t.Utterances {
		u.Text, u.Normal, u.Words = texts[i], texts[i], nil
		out.Utterances[i] = u
	}
	if t.Summary != nil {
		s := *t.Summary
		s.Text = texts[len(t.Utterances)]
		out.Summary = &s
	}
	return out
}

func (s *Service) kept(ctx context.Context, j job.Job) (map[string]transcript.Transcript, error) {
	kept := map[string]transcript.Transcript{}
	rc, err := s.Objects.Get(ctx, job.TranslationsKey(j.ID))
	switch {
	case errs.Is(err, errs.NotFound):
		return kept, nil
	case err != nil:
		return nil, err
	}
	defer rc.Close()
	if err := json.NewDecoder(rc).Decode(&kept); err != nil {
		return nil, fmt.Errorf("read translations of job %s: %w", j.ID, err)
	}
	return kept, nil
}
