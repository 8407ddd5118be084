package app

import (
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
	"transcriber/internal/pipeline"
	"transcriber/internal/quota"
	"transcriber/internal/speechkit"
	"transcriber/internal/status"
	"transcriber/internal/storage/s3"
	"transcriber/internal/store"
	"transcriber/internal/transcript"
	"transcriber/internal/translate"
	"transcriber/internal/translation"
)

// App is one instance's service: its clients are made once and reused by
// every call.
type App struct {
	Config     Config
	Log        *slog.Logger
	Store      job.Store
	Objects    *s3.Store
	Recognizer pipeline.Recognizer
	// Translations translates transcripts; nil without a translator (no
	// SpeechKit credentials: the local stack without them).
	Translations *translation.Service
	Pipeline     *pipeline.Pipeline
	// API is the HTTP API; nil when no token store was given.
	API *httpapi.API
	// Bot is the Telegram bot; nil without TELEGRAM_BOT_TOKEN, a bot
	// state store or Options.MakeBot.
	Bot Bot
	// Status reads the service's state for the owner (/status and the
	// alerts); nil when the job store cannot read it.
	Status *status.Reader
	// alertAsked is the window of status.CheckEvery this instance last
	// asked whether to decide the owner's alerts in (alertOwner).
	alertMu    sync.Mutex
	alertAsked time.Time
	// Counters keeps the usage counters (Options.Stores, spread); nil
	// counts nothing.
	Counters quota.Counters
	// Callbacks sends the signed callbacks of API jobs; nil without a
	// callback store or a token store.
	Callbacks *callback.Sender
	// Agenda tells the timer when its earliest work is due, in one read
	// (Options.Stores); nil has each part of the timer's call read for
	// itself.
	Agenda store.Agenda
	// deliveries is the bot's state where its deliveries do not expire by
	// themselves (the embedded store); nil otherwise.
	deliveries botstate.Expirer
	// Clock and Sleep are the instance's time, for what is built on it.
	Clock clock.Clock
	Sleep func(ctx context.Context, d time.Duration) error

	closers []func() error
}

// Options are what the caller supplies beyond the configuration: the
// stores (embedded locally, YDB in the cloud) and, for tests, the clock and
// the sleeper.
type Options struct {
	// Stores are the stores of one database, made by store.NewSet (the
	// backends' OpenSet): its counters spread. Jobs is required; without
	// Tokens there is no API, without Bot no bot, without Counters nothing
	// is counted, and Callbacks with Tokens make App.Callbacks. The caller
	// closes them.
	Stores store.Set
	// CallbackClient replaces the client callbacks are sent with
	// (callback.Client of the configuration): tests.
	CallbackClient *http.Client
	// MakeBot builds the bot on the App's core (internal/app/withbot): a
	// function without a bot leaves it nil and never compiles the Bot API
	// client. It is called with TELEGRAM_BOT_TOKEN set and Stores.Bot given.
	MakeBot func(a *App, state botstate.Store) (Bot, error)
	// Recognizer replaces the SpeechKit client built from the
	// configuration (the local stack without credentials).
	Recognizer pipeline.Recognizer
	// WithoutMedia builds no media tools: for a function that never
	// converts (api), whose package ships no ffmpeg.
	WithoutMedia bool
	Notifier     pipeline.Notifier
	Clock        clock.Clock
	Log          *slog.Logger
	Sleep        func(ctx context.Context, d time.Duration) error
}

// NewLogger returns the service's logger: JSON lines on stderr, which Cloud
// Logging reads (level and msg).
func NewLogger(level slog.Level) *slog.Logger {
	return slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
}

// New builds the service. No network call is made: clients connect on first
// use.
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
		// Translate takes SpeechKit's credentials, and shares its IAM token.
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
		// ffmpeg may read only the storage's own URLs: the origin of every
		// URL the store makes, path-style or virtual-hosted alike.
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
		if tg.DefaultLanguage == "" {
			tg.DefaultLanguage = cfg.Pipeline.DefaultLanguage
		}
		if tg.MaxSourceBytes == 0 {
			tg.MaxSourceBytes = pipeline.DefaultMaxSourceBytes
		}
		if a.Bot, err = opt.MakeBot(a, st.Bot); err != nil {
			return nil, err
		}
		a.deliveries, _ = st.Bot.(botstate.Expirer)
		warnOpenSpend(log, a.Config)
		ns = append(ns, a.Bot)
	}
	if st.Callbacks != nil && st.Tokens != nil {
		client := opt.CallbackClient
		if client == nil {
			client = callback.Client(callback.ClientOptions{AllowPrivate: cfg.API.CallbackAllowPrivate})
		}
		if cfg.API.CallbackAllowPrivate {
			log.Warn("CALLBACK_ALLOW_PRIVATE=true: callbacks may be http and reach private and loopback addresses; for local use and tests only")
		}
		a.Callbacks = &callback.Sender{Store: st.Callbacks, Jobs: st.Jobs, Tokens: st.Tokens, Client: client, Clock: clk, Log: log}
		ns = append(ns, a.Callbacks)
	}
	cfg.Pipeline.Counters = st.Counters
	cfg.Pipeline.SyncMaxDuration = cfg.SyncMaxDuration
	// SpeechKit's client answers short recordings synchronously too; a
	// recognizer given instead does when it can.
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
		if api.DefaultLanguage == "" {
			api.DefaultLanguage = cfg.Pipeline.DefaultLanguage
		}
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

// warnOpenSpend says at start that a bot open to everyone with no monthly
// cap has its spend bounded only per user: anyone on Telegram may use
// LIMIT_AUDIO_PER_DAY of recognition a day, and nothing bounds how many
// do (docs/deploy.md).
func warnOpenSpend(log *slog.Logger, cfg Config) {
	if !cfg.Telegram.Allowed.Everyone || cfg.Limits.AudioPerMonth > 0 || cfg.Limits.BudgetPerMonth > 0 {
		return
	}
	log.Warn("open bot without a monthly cap (LIMIT_AUDIO_PER_MONTH, LIMIT_BUDGET_PER_MONTH)",
		"limit_audio_per_day", cfg.Limits.AudioPerDay.String(), "limit_active_jobs", cfg.Limits.ActiveJobs)
}

// Bot is the Telegram bot as the App uses it: the webhook, the pipeline's
// notifier, and the delivery sweep the timer runs.
type Bot interface {
	http.Handler
	pipeline.Notifier
	Sweep(ctx context.Context) (int, error)
	// TellOwner sends the owner an alert of window (the hour or month it
	// belongs to), once.
	TellOwner(ctx context.Context, a status.Alert, window time.Time) error
}

// StatusConfig is what the owner's status needs of the service's
// settings: its windows and limits.
func StatusConfig(cfg Config) status.Config {
	return status.Config{
		Windows:        statusWindows(cfg.Pipeline),
		QuotaCode:      speechkit.CodeRecognitionQuota,
		AudioPerMonth:  cfg.Limits.AudioPerMonth,
		BudgetPerMonth: cfg.Limits.BudgetPerMonth,
	}
}

// StatusReader is the reader of the service's state over the stores s
// (the App's, transcriber status), or nil when its job store cannot read
// it.
func StatusReader(cfg Config, s store.Set) *status.Reader {
	jobs, ok := s.Jobs.(status.Jobs)
	if !ok {
		return nil
	}
	r := &status.Reader{Jobs: jobs, Counters: s.Counters, Config: StatusConfig(cfg)}
	if d, ok := s.Bot.(status.Deliveries); ok {
		r.Deliveries = d
	}
	if c, ok := s.Callbacks.(status.Callbacks); ok {
		r.Callbacks = c
	}
	return r
}

// notifiers tells each of its notifiers in turn.
type notifiers []pipeline.Notifier

func (ns notifiers) Moved(ctx context.Context, j job.Job) error {
	var all []error
	for _, n := range ns {
		all = append(all, n.Moved(ctx, j))
	}
	return errors.Join(all...)
}

func (ns notifiers) Finished(ctx context.Context, j job.Job) error {
	var all []error
	for _, n := range ns {
		all = append(all, n.Finished(ctx, j))
	}
	return errors.Join(all...)
}

// Close releases the instance's connections.
func (a *App) Close() error {
	var errs []error
	for _, c := range a.closers {
		errs = append(errs, c())
	}
	return errors.Join(errs...)
}

// ErrRecognitionNotConfigured is how a job fails where no recognizer is
// configured: the local stack started without SpeechKit credentials.
var ErrRecognitionNotConfigured = errs.New(errs.Permanent, "recognition_not_configured",
	"speech recognition is not configured on this installation (set SPEECHKIT_API_KEY)")

// Unconfigured is the recognizer of an installation without one: every
// submission fails the job, plainly, and nothing is invented.
type Unconfigured struct{}

// Submit fails with ErrRecognitionNotConfigured.
func (Unconfigured) Submit(context.Context, speechkit.Request) (string, error) {
	return "", ErrRecognitionNotConfigured
}

// Check fails with ErrRecognitionNotConfigured.
func (Unconfigured) Check(context.Context, string) (bool, error) {
	return false, ErrRecognitionNotConfigured
}

// Result fails with ErrRecognitionNotConfigured.
func (Unconfigured) Result(context.Context, string) (transcript.Transcript, error) {
	return transcript.Transcript{}, ErrRecognitionNotConfigured
}

// Delete has nothing to delete.
func (Unconfigured) Delete(context.Context, string) error { return nil }

// RecognizeSync fails with ErrRecognitionNotConfigured.
func (Unconfigured) RecognizeSync(context.Context, speechkit.SyncRequest) (speechkit.SyncResult, error) {
	return speechkit.SyncResult{}, ErrRecognitionNotConfigured
}

// errNoMedia is what a pipeline without media tools answers; only a
// function built WithoutMedia has one, and it never runs ingest.
var errNoMedia = errs.New(errs.Internal, "media_tools_missing", "this function has no media tools")

// noMedia is the media of an App built WithoutMedia.
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
