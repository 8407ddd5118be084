// Package app wires the service once per instance: configuration from the
// environment, the adapters and the use cases. The functions, the local
// stack and the end-to-end tests all build it here.
package app

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"time"

	"transcriber/internal/httpapi"
	"transcriber/internal/job"
	"transcriber/internal/media/ffmpeg"
	"transcriber/internal/pipeline"
	"transcriber/internal/speechkit"
	"transcriber/internal/spend"
	"transcriber/internal/storage/s3"
	"transcriber/internal/telegram/tgconf"
	"transcriber/internal/translate"
	"transcriber/internal/uploadlink"
)

// Config is everything the service is told from outside
// (docs/configuration.md).
type Config struct {
	S3        s3.Config
	SpeechKit speechkit.Config
	// SyncMaxDuration (SPEECHKIT_SYNC_MAX_DURATION, at most and by default
	// speechkit.MaxSyncDuration; 0: off).
	SyncMaxDuration                   time.Duration
	TranslateURL                      string
	FFmpegPath, FFprobePath, TaskRoot string
	Media                             ffmpeg.Config
	Pipeline                          pipeline.Config
	API                               httpapi.Config
	Telegram                          tgconf.Config
	Limits                            spend.Limits // given to the pipeline, the API and the bot
	LogLevel                          slog.Level
}

// FromEnv reads the configuration, reporting every malformed variable at
// once and never echoing a secret.
func FromEnv(getenv func(string) string) (Config, error) {
	r := envReader{get: getenv}
	c := Config{
		S3: s3.Config{
			Endpoint:        r.str("S3_ENDPOINT", s3.DefaultEndpoint),
			Region:          r.str("S3_REGION", s3.DefaultRegion),
			Bucket:          r.str("S3_BUCKET", ""),
			AccessKeyID:     r.str("S3_ACCESS_KEY_ID", ""),
			SecretAccessKey: r.str("S3_SECRET_ACCESS_KEY", ""),
			PathStyle:       r.boolean("S3_PATH_STYLE", false),
		},
		SpeechKit: speechkit.Config{
			Endpoint:          r.str("SPEECHKIT_ENDPOINT", ""),
			OperationEndpoint: r.str("SPEECHKIT_OPERATION_ENDPOINT", ""),
			APIKey:            r.str("SPEECHKIT_API_KEY", ""),
			FolderID:          r.str("SPEECHKIT_FOLDER_ID", ""),
			Insecure:          r.boolean("SPEECHKIT_INSECURE", false),
			Model:             r.str("SPEECHKIT_MODEL", ""),
			MetadataURL:       r.str("SPEECHKIT_METADATA_URL", ""),
			SyncURL:           r.str("SPEECHKIT_SYNC_URL", ""),
		},
		FFmpegPath:  r.str("FFMPEG_PATH", ""),
		FFprobePath: r.str("FFPROBE_PATH", ""),
		TaskRoot:    r.str("LAMBDA_TASK_ROOT", ""),
		Media: ffmpeg.Config{
			MaxDuration:   r.duration("MAX_AUDIO_DURATION", limitMaxDuration),
			SegmentLength: r.duration("SEGMENT_LENGTH", limitSegmentLength),
			PieceLength:   r.duration("PIECE_LENGTH", limitPieceLength),
			ParallelFrom:  r.duration("PARALLEL_FROM", limitParallelFrom),
			MaxPieces:     r.count("MAX_PIECES", ffmpeg.DefaultMaxPieces, 1, maxPieces, ""),
		},
		Pipeline: pipeline.Config{
			DefaultLanguage: r.str("DEFAULT_LANGUAGE", ""),
			InlineAudio:     r.boolean("SPEECHKIT_INLINE_AUDIO", false),
			PollFor:         r.duration("POLL_FOR", limitPollFor),
			JobRetention:    r.duration("JOB_RETENTION", limitJobRetention),
			RequestsPerHour: r.requestsPerHour("SPEECHKIT_REQUESTS_PER_HOUR"),
			SummaryModel:    r.str("SUMMARY_MODEL_URI", ""),
		},
		API: httpapi.Config{
			UploadURLTTL:         r.duration("UPLOAD_URL_TTL", limitUploadURLTTL),
			CORSOrigins:          r.list("CORS_ALLOWED_ORIGINS"),
			CallbackAllowPrivate: r.boolean("CALLBACK_ALLOW_PRIVATE", false),
		},
	}
	c.Telegram = tgconf.Config{
		Token:            r.str("TELEGRAM_BOT_TOKEN", ""),
		WebhookSecret:    r.str("TELEGRAM_WEBHOOK_SECRET", ""),
		APIURL:           r.str("TELEGRAM_API_URL", tgconf.DefaultAPIURL),
		DefaultLanguage:  c.Pipeline.DefaultLanguage,
		PublicURL:        r.str("PUBLIC_URL", ""),
		UploadLinkSecret: r.secret("UPLOAD_LINK_SECRET", uploadlink.MinSecretLen),
	}
	if allowed, err := tgconf.ParseAllowed(r.get("TELEGRAM_ALLOWED_USERS")); err != nil {
		r.errs = append(r.errs, err)
	} else {
		c.Telegram.Allowed = allowed
	}
	if owner, err := tgconf.ParseOwnerID(r.get("TELEGRAM_OWNER_ID")); err != nil {
		r.errs = append(r.errs, err)
	} else if owner != 0 { // the owner may use the bot whatever the allow-list says
		c.Telegram.OwnerID = owner
		if !c.Telegram.Allowed.Everyone && c.Telegram.Allowed.Users != nil { // nil: the list was refused above
			c.Telegram.Allowed.Users[owner] = true
		}
	}
	if c.Telegram.Token != "" && c.Telegram.WebhookSecret != "" && !secretToken.MatchString(c.Telegram.WebhookSecret) {
		r.errs = append(r.errs, errors.New("TELEGRAM_WEBHOOK_SECRET: want 1 to 256 characters of A-Z, a-z, 0-9, _ and - (what setWebhook takes)"))
	}
	if m := c.Pipeline.SummaryModel; m != "" && (!strings.HasPrefix(m, "gpt://") || len(m) == len("gpt://")) {
		r.errs = append(r.errs, errors.New("SUMMARY_MODEL_URI: want a language model's URI, gpt://<folder id>/<model>, such as gpt://b1g…/yandexgpt-lite/latest"))
	}
	c.TranslateURL = r.str("TRANSLATE_URL", translate.DefaultURL)
	if translate.CheckURL(c.TranslateURL, c.SpeechKit.Insecure) != nil {
		r.errs = append(r.errs, errors.New("TRANSLATE_URL: want an https URL without a user name or password, such as "+
			translate.DefaultURL+" (http only with SPEECHKIT_INSECURE=true)"))
	}
	c.SyncMaxDuration = r.limitDuration("SPEECHKIT_SYNC_MAX_DURATION", speechkit.MaxSyncDuration, limitSyncMaxDuration)
	if u := c.SpeechKit.SyncURL; u != "" && speechkit.CheckSyncURL(u, c.SpeechKit.Insecure) != nil {
		r.errs = append(r.errs, errors.New("SPEECHKIT_SYNC_URL: want an https URL without a user name or password, such as "+
			speechkit.DefaultSyncURL+" (http only with SPEECHKIT_INSECURE=true)"))
	}
	if u := c.Telegram.PublicURL; u != "" && !strings.HasPrefix(u, "https://") && !strings.HasPrefix(u, "http://") {
		r.errs = append(r.errs, errors.New("PUBLIC_URL: want an http(s) URL such as https://d5d….apigw.yandexcloud.net"))
	}
	// A job's pieces all go at once.
	c.Pipeline.JobInFlight = c.Media.MaxPieces
	seg := cmp.Or(c.Media.SegmentLength, ffmpeg.DefaultSegmentLength)
	if c.Media.PieceLength > seg {
		r.errs = append(r.errs, fmt.Errorf("PIECE_LENGTH: %s is longer than SEGMENT_LENGTH (%s), the longest piece SpeechKit is sent", c.Media.PieceLength, seg))
	}
	if scope, err := job.ParseReuseScope(r.get("REUSE_SCOPE")); err != nil {
		r.errs = append(r.errs, fmt.Errorf("REUSE_SCOPE: %w", err))
	} else {
		c.Pipeline.ReuseScope, c.Telegram.ReuseScope = scope, scope
	}
	c.Limits = spend.Limits{
		AudioPerDay:       r.limitDuration("LIMIT_AUDIO_PER_DAY", spend.DefaultAudioPerDay, limitAudio),
		AudioPerMonth:     r.limitDuration("LIMIT_AUDIO_PER_MONTH", 0, limitAudio),
		ActiveJobs:        r.count("LIMIT_ACTIVE_JOBS", spend.DefaultActiveJobs, 0, spend.MaxActiveJobs, "0 (no limit)"),
		Exempt:            r.userIDs("LIMIT_EXEMPT_USERS"),
		BudgetPerMonth:    r.rubles("LIMIT_BUDGET_PER_MONTH", 0),
		TranslationPerDay: int64(r.count("LIMIT_TRANSLATION_PER_DAY", spend.DefaultTranslationPerDay, 0, 1_000_000_000, "0 (no limit)")),
		Prices: spend.Prices{
			Async:                 r.rubles("PRICE_RECOGNITION_ASYNC", spend.DefaultPrices.Async),
			Deferred:              r.rubles("PRICE_RECOGNITION_DEFERRED", spend.DefaultPrices.Deferred),
			Sync:                  r.rubles("PRICE_RECOGNITION_SYNC", spend.DefaultPrices.Sync),
			SummaryTokens:         r.rubles("PRICE_SUMMARY_PER_1000_TOKENS", spend.DefaultPrices.SummaryTokens),
			TranslationPerMillion: r.rubles("PRICE_TRANSLATION_PER_MILLION_CHARS", spend.DefaultPrices.TranslationPerMillion),
		},
	}
	// Unfinished jobs are counted over the longest one can stay so.
	tg := c.Telegram.WithDefaults()
	c.Limits.JobLife = spend.JobLife(max(c.API.UploadWindow(), tg.DownloadWindow, tg.LinkWindow))
	c.Pipeline.Limits, c.API.Limits, c.Telegram.Limits = c.Limits, c.Limits, c.Limits
	if lvl := r.str("LOG_LEVEL", "info"); c.LogLevel.UnmarshalText([]byte(lvl)) != nil {
		r.errs = append(r.errs, fmt.Errorf("LOG_LEVEL: %q is not debug, info, warn or error", lvl))
	}
	return c, errors.Join(r.errs...)
}

type envReader struct {
	get  func(string) string
	errs []error
}

func (r *envReader) str(name, def string) string { return cmp.Or(r.get(name), def) }

// secret reads a secret of at least minLen bytes, never echoed.
func (r *envReader) secret(name string, minLen int) []byte {
	return parsed(r, name, nil, func(v string) ([]byte, error) {
		if len(v) < minLen {
			return nil, fmt.Errorf("want at least %d characters (e.g. openssl rand -hex 32)", minLen)
		}
		return []byte(v), nil
	})
}

// secretToken is a secret_token setWebhook takes.
var secretToken = regexp.MustCompile(`^[A-Za-z0-9_-]{1,256}$`)

func (r *envReader) list(name string) []string {
	var out []string
	for _, v := range strings.Split(r.get(name), ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// parsed reads name with parse: empty is def, and so is a value parse
// refuses, its error reported.
func parsed[T any](r *envReader, name string, def T, parse func(string) (T, error)) T {
	v := r.get(name)
	if v == "" {
		return def
	}
	x, err := parse(v)
	if err != nil {
		r.errs = append(r.errs, fmt.Errorf("%s: %w", name, err))
		return def
	}
	return x
}

func (r *envReader) boolean(name string, def bool) bool {
	return parsed(r, name, def, func(v string) (bool, error) {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return def, errors.New("want true or false")
		}
		return b, nil
	})
}

// JobRetention reads JOB_RETENTION as FromEnv does, default applied, for
// transcriber migrate (YDB's TTL).
func JobRetention(getenv func(string) string) (time.Duration, error) {
	r := envReader{get: getenv}
	d := r.duration("JOB_RETENTION", limitJobRetention)
	return cmp.Or(d, pipeline.DefaultJobRetention), errors.Join(r.errs...)
}

// requestsPerHour: 0 turns pacing off; 1 is refused, which fixed windows
// cannot keep.
func (r *envReader) requestsPerHour(name string) int {
	return parsed(r, name, pipeline.DefaultRequestsPerHour, func(v string) (int, error) {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n == 1 || n > 1_000_000 {
			return 0, errors.New("want 0 (no pacing) or a number of requests from 2 to 1000000, such as 500")
		}
		return n, nil
	})
}

// rubles reads rubles into µ₽.
func (r *envReader) rubles(name string, def int64) int64 {
	return parsed(r, name, def, spend.ParseRubles)
}

// limitDuration reads a limit within b: empty is def, 0 no limit.
func (r *envReader) limitDuration(name string, def time.Duration, b bounds) time.Duration {
	v := r.get(name)
	if v == "" {
		return def
	}
	if d, err := time.ParseDuration(v); v == "0" || (err == nil && d == 0) {
		return 0
	}
	if d := r.duration(name, b); d > 0 {
		return d
	}
	return def
}

// count reads a number from lo to hi; zero says what 0 means when lo is 0.
func (r *envReader) count(name string, def, lo, hi int, zero string) int {
	return parsed(r, name, def, func(v string) (int, error) {
		n, err := strconv.Atoi(v)
		if err != nil || n < lo || n > hi {
			want := fmt.Sprintf("a number from %d to %d, such as %d", max(lo, 1), hi, def)
			if lo == 0 {
				want = zero + " or " + want
			}
			return 0, errors.New("want " + want)
		}
		return n, nil
	})
}

// maxPieces is the largest MAX_PIECES: a fifth of 500 requests an hour.
const maxPieces = 100

// userIDs reads Telegram user ids separated by commas.
func (r *envReader) userIDs(name string) map[int64]bool {
	ids := map[int64]bool{}
	for _, f := range r.list(name) {
		id, err := strconv.ParseInt(f, 10, 64)
		if err != nil || id <= 0 {
			r.errs = append(r.errs, fmt.Errorf("%s: %q is not a user id (want Telegram user ids separated by commas)", name, f))
			continue
		}
		ids[id] = true
	}
	return ids
}

// bounds is a duration setting's range, and why max: outside it the
// service refuses to start (docs/settings.md gives each one's reasons).
type bounds struct {
	min, max time.Duration
	why      string
}

// The ranges of the duration settings; empty or 0 takes the default.
var (
	limitUploadURLTTL = bounds{time.Minute, s3.MaxPresignTTL, "the longest a presigned URL can live (SigV4)"}
	// 12 h converts in about 8.7 min on the ingest function's half CPU.
	limitMaxDuration     = bounds{time.Second, 12 * time.Hour, "the longest recording one ingest call can convert within its 10-minute limit"}
	limitSegmentLength   = bounds{time.Minute, 4 * time.Hour, "SpeechKit's limit of 4 hours per file"}
	limitPieceLength     = bounds{time.Minute, 4 * time.Hour, "SpeechKit's limit of 4 hours per file"}
	limitParallelFrom    = bounds{time.Minute, 12 * time.Hour, "the longest recording the service can take"}
	limitPollFor         = bounds{5 * time.Second, 10 * time.Minute, "the longest a function call may run on Cloud Functions"}
	limitJobRetention    = bounds{pipeline.MinJobRetention, 10 * 365 * 24 * time.Hour, "ten years, past any purpose of keeping a job's row"}
	limitSyncMaxDuration = bounds{time.Second, speechkit.MaxSyncDuration, "SpeechKit's limit of 30 seconds for synchronous recognition"}
	limitAudio           = bounds{time.Second, 1_000_000 * time.Hour, "a million hours, past what any installation recognizes"}
)

// duration reads a duration within b; empty or 0 is 0 (the default).
func (r *envReader) duration(name string, b bounds) time.Duration {
	v := r.get(name)
	if v == "" {
		return 0
	}
	d, err := time.ParseDuration(v)
	switch {
	case err != nil || d < 0:
		r.errs = append(r.errs, fmt.Errorf("%s: want a duration such as 90s or 4h", name))
		return 0
	case d == 0:
		return 0
	case d < b.min:
		r.errs = append(r.errs, fmt.Errorf("%s: %s is shorter than %s, the least that can work", name, v, b.min))
		return 0
	case d > b.max:
		r.errs = append(r.errs, fmt.Errorf("%s: %s is longer than %s, %s", name, v, b.max, b.why))
		return 0
	}
	return d
}
