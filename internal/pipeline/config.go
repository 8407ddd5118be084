package pipeline

import (
	"cmp"
	"time"

	"transcriber/internal/job"
	"transcriber/internal/media/ffmpeg"
	"transcriber/internal/pipeline/admission"
	"transcriber/internal/quota"
	"transcriber/internal/speechkit"
	"transcriber/internal/spend"
)

// Config holds the pipeline's settings (docs/settings.md); zero fields
// take their defaults.
type Config struct {
	DefaultLanguage string         // of a job that names none
	SummaryModel    string         // SUMMARY_MODEL_URI; empty: no summaries (the job says why)
	ReuseScope      job.ReuseScope // REUSE_SCOPE (reuse.go); empty: off
	// InlineAudio sends audio in the request, not by URL: for a local
	// object store the recognizer cannot reach.
	InlineAudio bool
	// A recording of at most InlineCheckMax is checked in the call that
	// submitted it for InlineCheckFor, so a voice note comes back there.
	// Tests turn it off (InlineCheckMax) or speed it up (with MinCheckPause).
	InlineCheckMax   time.Duration
	InlineCheckFor   time.Duration
	MinCheckPause    time.Duration
	JobInFlight      int           // a job's recognitions at once (MAX_PIECES)
	ChecksPerSecond  int           // the recognizer's status checks (5); the load model raises it
	PollFor          time.Duration // one poll call's work
	Policy           job.Policy    // retries; tests shorten it
	OutageProbeFirst time.Duration // the breaker's probe interval (admission); tests shorten it
	OutageProbeMax   time.Duration
	JobRetention     time.Duration  // a row's life after its job ended
	RequestsPerHour  int            // the recognizer's quota (0: not paced)
	Counters         quota.Counters // the admission's counts and breakers; nil: off
	// SyncMaxDuration is the longest fast job recognized synchronously
	// (SPEECHKIT_SYNC_MAX_DURATION, at most speechkit.MaxSyncDuration); 0: off.
	SyncMaxDuration time.Duration
	Limits          spend.Limits // the audio and money limits
}

// Defaults and fixed numbers.
const (
	DefaultMaxSourceBytes = 5 << 30  // Object Storage's single PUT
	DefaultMaxInlineBytes = 10 << 20 // well under SpeechKit's 60 MB request
	// DefaultSourceURLTTL outlives any conversion: the ingest function's
	// timeout is at most 10 min.
	DefaultSourceURLTTL = 15 * time.Minute
	DefaultJobRetention = 90 * 24 * time.Hour
	// MinJobRetention: a Telegram result is delivered for up to 12 h
	// after its job ended, and its row must outlive that.
	MinJobRetention = 24 * time.Hour
	// DefaultOutageHoldFor: a job is held through outages until a day
	// after its upload window, within the two it counts as unfinished
	// (spend.AfterUpload).
	DefaultOutageHoldFor   = 24 * time.Hour
	DefaultRequestsPerHour = admission.DefaultRequestsPerHour
	// A deferred job is checked as any other for its first hour, then
	// every DefaultDeferredCheckPause (SpeechKit may take a day: 96 checks, not 1,440).
	DefaultDeferredEagerFor   = time.Hour
	DefaultDeferredCheckPause = 15 * time.Minute
	DefaultJobInFlight        = ffmpeg.DefaultMaxPieces

	inlineCheckFirst = 250 * time.Millisecond // doubling to inlineCheckEvery
	inlineCheckEvery = time.Second
	// SpeechKit takes about a sixth of a recording's length; checking at
	// a twelfth finds it at most that late.
	checkPauseDivisor = 12
	maxCheckPause     = time.Minute
	pollBatch         = 10
)

func (c Config) withDefaults() Config {
	c.DefaultLanguage = cmp.Or(c.DefaultLanguage, "ru-RU")
	c.InlineCheckMax = cmp.Or(c.InlineCheckMax, time.Minute)
	c.InlineCheckFor = cmp.Or(c.InlineCheckFor, 15*time.Second)
	c.MinCheckPause = cmp.Or(c.MinCheckPause, 2*time.Second)
	if c.JobInFlight <= 0 {
		c.JobInFlight = DefaultJobInFlight
	}
	c.ChecksPerSecond = cmp.Or(c.ChecksPerSecond, 5)
	c.PollFor = cmp.Or(c.PollFor, 50*time.Second)
	c.SyncMaxDuration = min(max(c.SyncMaxDuration, 0), speechkit.MaxSyncDuration)
	c.JobRetention = cmp.Or(c.JobRetention, DefaultJobRetention)
	if c.Policy.MaxAttempts == 0 {
		c.Policy = job.DefaultPolicy
	}
	return c
}

// pauseFor is how long j waits at now for its next check: by its longest
// piece in flight (they run side by side), DefaultDeferredCheckPause for a
// deferred job past its first hour.
func (c Config) pauseFor(j job.Job, now time.Time) time.Duration {
	if j.Deferred() && now.Sub(j.CreatedAt) >= DefaultDeferredEagerFor {
		return DefaultDeferredCheckPause
	}
	var longest int64 = -1
	for _, sg := range j.Segments {
		if sg.OperationID != "" && !sg.Done {
			longest = max(longest, sg.DurationMs)
		}
	}
	if longest < 0 {
		return c.checkPause(j.DurationMs)
	}
	return c.checkPause(longest)
}

// checkPause is the pause before checking a recognition of durationMs again.
func (c Config) checkPause(durationMs int64) time.Duration {
	d := time.Duration(durationMs) * time.Millisecond / checkPauseDivisor
	return min(max(d, c.MinCheckPause), maxCheckPause)
}
