package pipeline

import (
	"time"

	"transcriber/internal/job"
	"transcriber/internal/media/ffmpeg"
	"transcriber/internal/pipeline/admission"
	"transcriber/internal/quota"
	"transcriber/internal/speechkit"
	"transcriber/internal/spend"
)

// Config holds the pipeline's numbers. Each is listed with where it comes
// from in docs/settings.md.
type Config struct {
	// MaxSourceBytes is the largest source file taken: Object Storage's
	// single-PUT limit, the largest a presigned PUT can upload.
	MaxSourceBytes int64
	// DefaultLanguage is the recognition language of a job that names none.
	DefaultLanguage string
	// SummaryModel is the language model SpeechKit summarizes with, for
	// jobs that ask for a summary (SUMMARY_MODEL_URI, "gpt://<folder
	// id>/<model>"); empty turns summaries off, and such a job ends done
	// without one, saying why.
	SummaryModel string
	// ReuseScope is how far a done job's transcript is reused by a later
	// job of the same recording and options (REUSE_SCOPE, reuse.go). Empty
	// turns it off; the service's configuration gives job.ReusePayer.
	ReuseScope job.ReuseScope
	// SourceURLTTL is how long the presigned GET that ffmpeg reads stays
	// valid: longer than any conversion, which the ingest function's
	// timeout bounds.
	SourceURLTTL time.Duration
	// InlineAudio sends audio to the recognizer in the request instead of by
	// its object's URL: for a local object store the recognizer cannot reach.
	// Audio larger than MaxInlineBytes then fails the job.
	InlineAudio    bool
	MaxInlineBytes int64
	// Audio up to InlineCheckMax long is checked right after submission,
	// every InlineCheckEvery for up to InlineCheckFor, so a voice note comes
	// back in the same call.
	// The first check comes InlineCheckFirst after the submission, and
	// the pause doubles up to InlineCheckEvery.
	InlineCheckMax   time.Duration
	InlineCheckFor   time.Duration
	InlineCheckFirst time.Duration
	InlineCheckEvery time.Duration
	// The pause before checking a recognition again grows with the audio:
	// its length / CheckPauseDivisor, within [MinCheckPause, MaxCheckPause].
	CheckPauseDivisor int64
	MinCheckPause     time.Duration
	MaxCheckPause     time.Duration
	// A deferred job (job.PriorityDeferred) is checked as any other for
	// DeferredEagerFor from its creation (the deferred queue may be idle),
	// then every DeferredCheckPause: SpeechKit takes up to a day for it,
	// and a check a minute would be 1,440 checks.
	DeferredEagerFor   time.Duration
	DeferredCheckPause time.Duration
	// SlotWaitPause is how long a job whose pieces all wait for a place in
	// flight (none of its recognitions is running) waits before it tries
	// again.
	SlotWaitPause time.Duration
	// JobInFlight is the most recognitions one job has in flight: its
	// pieces are submitted side by side up to that many, the rest as they
	// finish. MaxInFlight is the most the installation has, counted in
	// Counters (see admission/inflight.go); 0, or no Counters, leaves it
	// unbounded.
	JobInFlight int
	MaxInFlight int
	// ChecksPerSecond is the recognizer's rate of operation checks
	// (SpeechKit allows 5 per second); an instance spaces its checks with
	// a margin under it (checkEvery: one every 250 ms at 5).
	ChecksPerSecond int
	// PollFor is how long one poll call keeps working before it returns;
	// PollBatch how many jobs it claims at a time.
	PollFor   time.Duration
	PollBatch int
	// Policy is the retry policy.
	Policy job.Policy
	// RenewEvery is how often a claim is renewed while its step works
	// (heartbeat.go): job.RenewEvery, a quarter of the lease.
	RenewEvery time.Duration
	// The breakers of the services every job needs (outage.go): after
	// OutageAfter failures in a row (across jobs) no call goes, and a probe
	// goes after OutageProbeFirst, then at intervals doubling to
	// OutageProbeMax; zero takes admission's defaults. A job is held
	// through outages until OutageHoldFor after its upload window closed.
	// The breakers are kept in Counters: without them, none.
	OutageAfter      int
	OutageProbeFirst time.Duration
	OutageProbeMax   time.Duration
	OutageHoldFor    time.Duration
	// JobRetention is how long a job's row is kept after the job ended:
	// a store that expires rows itself (job.Expirer, the embedded one)
	// has the poll function's sweep remove older ones, with their files;
	// YDB's TTL does it in the cloud (`transcriber migrate` sets it).
	JobRetention time.Duration
	// RequestsPerHour is the recognizer's quota of recognition requests
	// (SpeechKit allows 500 asynchronous ones an hour; each segment
	// submitted is one). Submissions are counted in Counters, shared by
	// every instance, in fixed windows that keep any hour within it (see
	// admission/requests.go); at the quota a job waits for the next window
	// instead of failing. 0 turns the pacing off; it has no default here:
	// the service's configuration gives DefaultRequestsPerHour.
	RequestsPerHour int
	// Counters keeps what the admission counts (package admission): the
	// requests against RequestsPerHour, the recognitions in flight against
	// MaxInFlight, the audio against Limits; nil (most tests) turns all of
	// it off.
	Counters quota.Counters
	// SyncMaxDuration is the longest recording of a fast job
	// (job.PriorityFast) recognized synchronously, in one request
	// (SPEECHKIT_SYNC_MAX_DURATION); 0 turns synchronous recognition off,
	// and more than speechkit.MaxSyncDuration is taken as that. It has no
	// default here: the service's configuration gives
	// speechkit.MaxSyncDuration.
	SyncMaxDuration time.Duration
	// Limits are the audio limits (package spend): a job's seconds are
	// reserved against its payer's day and the installation's month once
	// its length is known (probed, or counted in a voice note sent as it
	// is), and a job that would pass one fails as quota_exceeded
	// without being submitted.
	Limits spend.Limits
}

// Defaults.
const (
	DefaultMaxSourceBytes = 5 << 30 // 5 GiB
	DefaultMaxInlineBytes = 10 << 20
	// DefaultSourceURLTTL: the ingest function's timeout (10 min at most
	// on Cloud Functions) and a margin; no conversion outlives its call.
	DefaultSourceURLTTL = 15 * time.Minute
	DefaultJobRetention = 90 * 24 * time.Hour
	// DefaultOutageHoldFor: a day after the upload window, within the two
	// a job is counted unfinished for (spend.AfterUpload).
	DefaultOutageHoldFor = 24 * time.Hour
	// MinJobRetention is the shortest retention taken: a Telegram result
	// is delivered for up to 12 h after its job ended, and its row must
	// outlive that.
	MinJobRetention = 24 * time.Hour
	// DefaultRequestsPerHour is SpeechKit's quota of asynchronous
	// recognition requests an hour.
	DefaultRequestsPerHour = admission.DefaultRequestsPerHour
	// DefaultDeferredEagerFor and DefaultDeferredCheckPause: a deferred
	// job is checked as a normal one for its first hour, then every 15
	// minutes, at most 96 checks in the day SpeechKit may take.
	DefaultDeferredEagerFor   = time.Hour
	DefaultDeferredCheckPause = 15 * time.Minute
	// DefaultJobInFlight is as many as a recording's pieces: every piece
	// of a job goes at once.
	DefaultJobInFlight = ffmpeg.DefaultMaxPieces
	// DefaultMaxInFlight: the poll function checks at most 5 operations
	// a second, and a 5-minute piece is checked every 25 s (its length /
	// CheckPauseDivisor), so 125 recognitions of pieces can each be checked
	// on time; 100 leaves the rest to voice notes checked every 2 s.
	DefaultMaxInFlight = 100
)

func (c Config) withDefaults() Config {
	def := func(v *time.Duration, d time.Duration) {
		if *v == 0 {
			*v = d
		}
	}
	if c.MaxSourceBytes == 0 {
		c.MaxSourceBytes = DefaultMaxSourceBytes
	}
	if c.DefaultLanguage == "" {
		c.DefaultLanguage = "ru-RU"
	}
	def(&c.SourceURLTTL, DefaultSourceURLTTL)
	if c.MaxInlineBytes == 0 {
		c.MaxInlineBytes = DefaultMaxInlineBytes
	}
	def(&c.InlineCheckMax, time.Minute)
	def(&c.InlineCheckFor, 15*time.Second)
	def(&c.InlineCheckFirst, 250*time.Millisecond)
	def(&c.InlineCheckEvery, time.Second)
	def(&c.SlotWaitPause, 15*time.Second)
	if c.JobInFlight <= 0 {
		c.JobInFlight = DefaultJobInFlight
	}
	if c.CheckPauseDivisor == 0 {
		c.CheckPauseDivisor = 12
	}
	def(&c.MinCheckPause, 2*time.Second)
	def(&c.MaxCheckPause, time.Minute)
	def(&c.DeferredEagerFor, DefaultDeferredEagerFor)
	def(&c.DeferredCheckPause, DefaultDeferredCheckPause)
	if c.ChecksPerSecond == 0 {
		c.ChecksPerSecond = 5
	}
	def(&c.PollFor, 50*time.Second)
	if c.PollBatch == 0 {
		c.PollBatch = 10
	}
	c.SyncMaxDuration = min(max(c.SyncMaxDuration, 0), speechkit.MaxSyncDuration)
	def(&c.JobRetention, DefaultJobRetention)
	if c.Policy.MaxAttempts == 0 {
		c.Policy = job.DefaultPolicy
	}
	def(&c.RenewEvery, job.RenewEvery)
	def(&c.OutageHoldFor, DefaultOutageHoldFor)
	return c
}

// CheckedWithin is the longest pause between two checks of a running
// recognition, with the defaults: the in-flight count's window follows
// from it (admission.InFlightWindowLength).
func (c Config) CheckedWithin() time.Duration {
	c = c.withDefaults()
	return max(c.MaxCheckPause, c.DeferredCheckPause)
}

// pauseFor is how long to wait at now before checking j's recognitions
// again: checkPause of its longest piece in flight (SlotWaitPause when its
// pieces all wait for a place), or for a deferred job past its first
// DeferredEagerFor, DeferredCheckPause.
func (c Config) pauseFor(j job.Job, now time.Time) time.Duration {
	if j.Deferred() && now.Sub(j.CreatedAt) >= c.DeferredEagerFor {
		return c.DeferredCheckPause
	}
	// The pieces run side by side: the job is ready when its longest
	// piece in flight is.
	var longest int64 = -1
	for _, sg := range j.Segments {
		if sg.OperationID != "" && !sg.Done {
			longest = max(longest, sg.DurationMs)
		}
	}
	switch {
	case longest >= 0:
		return c.checkPause(longest)
	case waitingForSlot(j):
		return c.SlotWaitPause
	}
	return c.checkPause(j.DurationMs)
}

// checkPause is how long to wait before checking a recognition of audio
// this long again. SpeechKit needs about 10 s per minute of audio, so a
// recording is ready after about a sixth of its length; checking at a
// twelfth finds it at most a twelfth late, without checking a long one
// every few seconds.
func (c Config) checkPause(durationMs int64) time.Duration {
	d := time.Duration(durationMs) * time.Millisecond / time.Duration(c.CheckPauseDivisor)
	if d < c.MinCheckPause {
		return c.MinCheckPause
	}
	if d > c.MaxCheckPause {
		return c.MaxCheckPause
	}
	return d
}
