package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"time"

	"transcriber/internal/botstate"
	"transcriber/internal/callback"
	"transcriber/internal/clock"
	"transcriber/internal/errs"
	"transcriber/internal/httpapi"
	"transcriber/internal/job"
	"transcriber/internal/media/ffmpeg"
	"transcriber/internal/outbox"
	"transcriber/internal/pipeline"
	"transcriber/internal/pipeline/admission"
	"transcriber/internal/quota"
	"transcriber/internal/speechkit"
	"transcriber/internal/status"
	"transcriber/internal/storage/s3"
	"transcriber/internal/store"
	"transcriber/internal/transcript"
	"transcriber/internal/translate"
	"transcriber/internal/translation"
)

// App is one instance's service, its clients made once. Nil: Translations
// without SpeechKit credentials, API without a token store, Bot without
// TELEGRAM_BOT_TOKEN, a bot state store or Options.MakeBot, Status when the
// job store cannot read it, Counters (counts nothing), Callbacks without an
// outbox and a token store, Agenda (each part of the timer's call reads
// for itself).
type App struct {
	Config       Config
	Log          *slog.Logger
	Store        job.Store
	Objects      *s3.Store
	Recognizer   pipeline.Recognizer
	Translations *translation.Service
	Pipeline     *pipeline.Pipeline
	API          *httpapi.API
	Bot          Bot
	Status       *status.Reader
	Counters     quota.Counters
	Callbacks    *callback.Sender // the signed callbacks of API jobs
	Agenda       store.Agenda     // when the timer's earliest work is due, in one read
	Clock        clock.Clock
	Sleep        func(ctx context.Context, d time.Duration) error

	alertMu    sync.Mutex
	alertAsked time.Time      // the status.CheckEvery window alertOwner last asked in
	expirer    outbox.Expirer // the outbox, where it does not expire entries itself (the embedded store)
	closers    []func() error
}

// Options are what the caller supplies beyond the configuration.
type Options struct {
	// Stores are one database's, made by store.NewSet (counters spread),
	// closed by the caller. Jobs is required; without Tokens there is no
	// API, without Bot no bot; Outbox with Tokens makes App.Callbacks.
	Stores store.Set
	// MakeBot builds the bot (internal/app/withbot): leaving it nil never
	// compiles the Bot API client.
	MakeBot      func(a *App, state botstate.Store, box outbox.Store) (Bot, error)
	Recognizer   pipeline.Recognizer // replaces SpeechKit's client (the local stack without credentials)
	WithoutMedia bool                // the api function, which ships no ffmpeg
	Notifier     pipeline.Notifier
	Clock        clock.Clock
	Log          *slog.Logger
	Sleep        func(ctx context.Context, d time.Duration) error
}

// NewLogger logs JSON lines on stderr, which Cloud Logging reads.
func NewLogger(level slog.Level) *slog.Logger {
	return slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
}

// New builds the service without a network call.
func New(cfg Config, opt Options) (*App, error) {
	st := opt.Stores
	if st.Jobs == nil {
		return nil, fmt.Errorf("no job store")
	}
	if !st.Made() {
		return nil, fmt.Errorf("stores not made by store.NewSet: their counters are not spread")
	}
	log := opt.Log
	if log == nil {
		log = NewLogger(cfg.LogLevel)
	}
	clk := opt.Clock
	if clk == nil {
		clk = clock.System()
	}
	cfg.S3.Clock = clk
	objects, err := s3.New(cfg.S3)
	if err != nil {
		return nil, fmt.Errorf("object storage: %w", err)
	}
	var closers []func() error
	rec := opt.Recognizer
	var translator translation.Translator
	if rec == nil {
		cfg.SpeechKit.Clock = clk
		client, err := speechkit.New(cfg.SpeechKit)
		if err != nil {
			return nil, fmt.Errorf("speechkit: %w", err)
		}
		rec, closers = client, append(closers, client.Close)
		tr, err := translate.New(translate.Config{URL: cfg.TranslateURL, Insecure: cfg.SpeechKit.Insecure,
			Credentials: client.Authorizer(), Clock: clk, Sleep: opt.Sleep, Log: log})
		if err != nil {
			return nil, fmt.Errorf("translate: %w", err)
		}
		translator = tr
	}
	var media pipeline.Media = noMedia{}
	if !opt.WithoutMedia {
		tools, err := ffmpeg.Locate(cfg.FFmpegPath, cfg.FFprobePath, cfg.TaskRoot)
		if err != nil {
			return nil, fmt.Errorf("media tools: %w", err)
		}
		// ffmpeg may read only the storage's own URLs.
		mediaCfg := cfg.Media
		mediaCfg.InputOrigin, err = ffmpeg.OriginOf(objects.Origin())
		if err != nil {
			return nil, fmt.Errorf("media input origin: %w", err)
		}
		media = ffmpeg.New(tools, mediaCfg)
	}
	a := &App{Config: cfg, Log: log, Store: st.Jobs, Objects: objects, Recognizer: rec, Counters: st.Counters, Agenda: st.Agenda,
		Clock: clk, Sleep: opt.Sleep, closers: closers}
	a.Status = StatusReader(cfg, st)
	if translator != nil {
		a.Translations = &translation.Service{Translator: translator, Objects: objects, Counters: st.Counters,
			Limits: cfg.Limits, Clock: clk, Log: log}
	}
	ns := notifiers{}
	if opt.Notifier != nil {
		ns = append(ns, opt.Notifier)
	}
	if cfg.Telegram.Token != "" && st.Bot != nil && opt.MakeBot != nil {
		tg := &a.Config.Telegram
		tg.ValidLanguage = speechkit.ValidLanguage
		tg.Summaries = cfg.Pipeline.SummaryModel != ""
		tg.DefaultLanguage = cmp.Or(tg.DefaultLanguage, cfg.Pipeline.DefaultLanguage)
		tg.MaxSourceBytes = cmp.Or(tg.MaxSourceBytes, pipeline.DefaultMaxSourceBytes)
		if a.Bot, err = opt.MakeBot(a, st.Bot, st.Outbox); err != nil {
			return nil, err
		}
		warnOpenSpend(log, a.Config)
		ns = append(ns, a.Bot)
	}
	a.expirer, _ = st.Outbox.(outbox.Expirer)
	if st.Outbox != nil && st.Tokens != nil {
		client := callback.Client(callback.ClientOptions{AllowPrivate: cfg.API.CallbackAllowPrivate})
		if cfg.API.CallbackAllowPrivate {
			log.Warn("CALLBACK_ALLOW_PRIVATE=true: callbacks may be http and reach private and loopback addresses; for local use and tests only")
		}
		a.Callbacks = &callback.Sender{Store: st.Outbox, Jobs: st.Jobs, Tokens: st.Tokens, Client: client, Clock: clk, Log: log}
		ns = append(ns, a.Callbacks)
	}
	cfg.Pipeline.Counters = st.Counters
	cfg.Pipeline.SyncMaxDuration = cfg.SyncMaxDuration
	syncRec, _ := rec.(pipeline.SyncRecognizer)
	a.Pipeline = pipeline.New(pipeline.Deps{
		Store:          st.Jobs,
		Objects:        objects,
		Media:          media,
		Recognizer:     rec,
		SyncRecognizer: syncRec,
		Notifier:       ns,
		Clock:          clk,
		Log:            log,
		Sleep:          opt.Sleep,
	}, cfg.Pipeline)
	if st.Tokens != nil {
		api := cfg.API
		api.ValidLanguage = speechkit.ValidLanguage
		api.Summaries = cfg.Pipeline.SummaryModel != ""
		if len(api.UploadLinkSecret) == 0 {
			api.UploadLinkSecret = cfg.Telegram.UploadLinkSecret
		}
		api.DefaultLanguage = cmp.Or(api.DefaultLanguage, cfg.Pipeline.DefaultLanguage)
		deps := httpapi.Deps{
			Jobs: st.Jobs, Tokens: st.Tokens, Objects: objects, Recognitions: rec, Counters: st.Counters, Clock: clk, Log: log,
		}
		if a.Translations != nil {
			deps.Translations = a.Translations
		}
		if a.Callbacks != nil {
			deps.Callbacks = a.Callbacks
		}
		a.API = httpapi.New(deps, api)
	}
	if a.Callbacks != nil {
		a.Callbacks.View = a.API.JobView // Callbacks are made only with Tokens, so with the API
	}
	return a, nil
}

// warnOpenSpend warns of a bot open to everyone without a monthly cap:
// only each user's day is bounded (docs/deploy.md).
func warnOpenSpend(log *slog.Logger, cfg Config) {
	if !cfg.Telegram.Allowed.Everyone || cfg.Limits.AudioPerMonth > 0 || cfg.Limits.BudgetPerMonth > 0 {
		return
	}
	log.Warn("open bot without a monthly cap (LIMIT_AUDIO_PER_MONTH, LIMIT_BUDGET_PER_MONTH)",
		"limit_audio_per_day", cfg.Limits.AudioPerDay.String(), "limit_active_jobs", cfg.Limits.ActiveJobs)
}

// Bot is the Telegram bot: the webhook, a notifier, the timer's sweep.
type Bot interface {
	http.Handler
	pipeline.Notifier
	Sweep(ctx context.Context) (int, error)
	// TellOwner sends the owner an alert of window, once.
	TellOwner(ctx context.Context, a status.Alert, window time.Time) error
}

// StatusConfig holds the windows the pipeline's admission counts in;
// unpaced, the default quota's, with no limit.
func StatusConfig(cfg Config) status.Config {
	p := cfg.Pipeline
	length, limit := admission.SubmissionWindows(cmp.Or(max(p.RequestsPerHour, 0), admission.DefaultRequestsPerHour))
	if p.RequestsPerHour <= 0 {
		limit = 0
	}
	return status.Config{
		Windows: status.Windows{
			RequestsKey:   admission.RequestsKey,
			RequestLength: length,
			RequestLimit:  limit,
		},
		QuotaCode:      speechkit.CodeRecognitionQuota,
		AudioPerMonth:  cfg.Limits.AudioPerMonth,
		BudgetPerMonth: cfg.Limits.BudgetPerMonth,
	}
}

// StatusReader reads the service's state over s; nil when its job store
// cannot.
func StatusReader(cfg Config, s store.Set) *status.Reader {
	jobs, ok := s.Jobs.(status.Jobs)
	if !ok {
		return nil
	}
	r := &status.Reader{Jobs: jobs, Counters: s.Counters, Config: StatusConfig(cfg)}
	if o, ok := s.Outbox.(status.Outbox); ok {
		r.Outbox = o
	}
	return r
}

type notifiers []pipeline.Notifier

func (ns notifiers) Moved(ctx context.Context, j job.Job) error {
	return each(ns, func(n pipeline.Notifier) error { return n.Moved(ctx, j) })
}

func (ns notifiers) Finished(ctx context.Context, j job.Job) error {
	return each(ns, func(n pipeline.Notifier) error { return n.Finished(ctx, j) })
}

func (a *App) Close() error { return each(a.closers, func(c func() error) error { return c() }) }

// each runs f on every one of list, joining the errors.
func each[T any](list []T, f func(T) error) error {
	var all []error
	for _, v := range list {
		all = append(all, f(v))
	}
	return errors.Join(all...)
}

var ErrRecognitionNotConfigured = errs.New(errs.Permanent, "recognition_not_configured",
	"speech recognition is not configured on this installation (set SPEECHKIT_API_KEY)")

// Unconfigured is the recognizer of the local stack without SpeechKit
// credentials: every job fails ErrRecognitionNotConfigured.
type Unconfigured struct{}

func (Unconfigured) Submit(context.Context, speechkit.Request) (string, error) {
	return "", ErrRecognitionNotConfigured
}

func (Unconfigured) Check(context.Context, string) (bool, error) {
	return false, ErrRecognitionNotConfigured
}

func (Unconfigured) Result(context.Context, string) (transcript.Transcript, error) {
	return transcript.Transcript{}, ErrRecognitionNotConfigured
}

func (Unconfigured) Delete(context.Context, string) error { return nil }

func (Unconfigured) RecognizeSync(context.Context, speechkit.SyncRequest) (speechkit.SyncResult, error) {
	return speechkit.SyncResult{}, ErrRecognitionNotConfigured
}

// errNoMedia: only the api function is WithoutMedia, and it never ingests.
var errNoMedia = errs.New(errs.Internal, "media_tools_missing", "this function has no media tools")

type noMedia struct{}

func (noMedia) Probe(context.Context, string) (ffmpeg.Probe, error) {
	return ffmpeg.Probe{}, errNoMedia
}
func (noMedia) PlanFor(ffmpeg.Probe, bool) (ffmpeg.Plan, error) { return ffmpeg.Plan{}, errNoMedia }
func (noMedia) Convert(context.Context, string, ffmpeg.Segment, io.Writer) error {
	return errNoMedia
}
func (noMedia) ConvertMono(context.Context, string, ffmpeg.Segment, io.Writer) error {
	return errNoMedia
}
func (noMedia) Split(context.Context, string, ffmpeg.Plan, func(ffmpeg.Segment, io.Reader) error) error {
	return errNoMedia
}
