// Package job is the domain of a transcription job: its states and the moves
// between them, the claim that makes a step exclusive, the retry policy, and
// the Store port that keeps jobs.
//
// The rules of a claim, a save and a release are functions here (Job.claim,
// Job.save, Job.release, used through Apply*), and every Store runs them
// inside its own transaction: the store reads the row, the domain decides,
// the store writes. So the embedded store and the YDB store cannot drift
// apart in what they allow, and the contract suite (jobstoretest) checks that
// each really makes the read and the write one atomic step.
package job

import (
	"fmt"
	"time"

	"transcriber/internal/ident"
)

// Job is one file to transcribe and its way through the pipeline. The job
// row is also the queue entry: a step takes it by claim.
type Job struct {
	ID      string
	State   State
	Source  Source
	OwnerID string // who may see it through the API: a token owner's id; empty for Telegram
	// ChargedTo is who pays for the job: "tok:<token id>" for the API,
	// "tgu:<user id>" for the Telegram user who sent the message or asked
	// /transcribe (package spend). Empty for a job made before it was kept.
	ChargedTo string
	Language  string // recognition language, e.g. "ru-RU"; empty means the service default
	// Priority is how soon the job is recognized: PriorityNormal (also
	// when empty, as for a job made before it was kept),
	// PriorityDeferred, SpeechKit's cheaper deferred mode, or
	// PriorityFast, synchronous recognition when the recording is short
	// enough.
	Priority Priority
	// Recognition is how the job's audio was recognized, once that is
	// known: RecognitionSync or RecognitionAsync; empty before, and for a
	// job that ended before it was kept. Written by a save (see
	// ApplySave for what a save may change).
	Recognition Recognition
	// BilledSeconds is what the recognizer said it billed for the job,
	// when it said (a synchronous answer's YaCloud-Billing-Units, or the
	// synchronous rule when the answer had none); 0 when it did not, and
	// the bill is reckoned from the segments (spend.JobBilled). Written
	// by a save.
	BilledSeconds int64
	// Features are the options the job was made with (speakers, a
	// summary) and what the pipeline learned for them.
	Features    Features
	Filename    string // as the sender named it; for display only, never an object key
	SizeBytes   int64  // declared (API) or known (Telegram) size of the source file
	ContentType string
	DurationMs  int64 // length of the audio once probed; 0 before

	TelegramChatID    int64 // with TelegramMessageID, the message the job answers; 0 when not from Telegram
	TelegramMessageID int64

	Attempts   int       // claims since the last step that succeeded
	NextRunAt  time.Time // not due before this
	ClaimID    string    // the current holder's claim; empty when none
	ClaimUntil time.Time // the claim expires at this moment

	ErrorCode    string // machine word of the last failure, e.g. "no_audio_stream"
	ErrorMessage string // the same failure in words fit for the job's owner

	// Segments are the pieces of audio submitted for recognition, in
	// order; empty until the audio is ready.
	Segments []Segment

	// IdempotencyKey is the owner's key for the request that created the
	// job (the API's Idempotency-Key header); empty when none was given.
	IdempotencyKey string
	// DeletedAt is when the owner deleted the job; zero while it stands.
	DeletedAt time.Time
	// UploadBy is when the upload window closes: a job still without its
	// file then fails as upload_missing.
	UploadBy time.Time
	// EndedAt is when the job reached a terminal state; zero while it is
	// live. The job's row expires a retention period after it.
	EndedAt time.Time

	// ReservedSeconds are the billed seconds reserved for the job against
	// its payer's day and the installation's month, ReservedMicros their
	// price and any summary's, in millionths of a ruble, against the
	// month's budget (package spend), and ReservedDay the UTC day they
	// were counted in (its month is the month's window). Recorded once,
	// with the save after the probe, so a retried ingest does not reserve
	// again; 0 before. Then moved, within its day, to what the audio made
	// is billed, and, once done, to what the job was billed: its cost.
	ReservedSeconds int64
	ReservedMicros  int64
	ReservedDay     time.Time

	// ReuseKey names the job's recording and options for reuse
	// (ReuseKeyOf): a done job with one lends its transcript to a later job
	// with the same (Store.Reusable). Empty when reuse is off for it;
	// recorded once, by the draft or a save, and blanked by a deletion.
	ReuseKey string

	CreatedAt time.Time
	UpdatedAt time.Time
}

// Priority is how soon a job is recognized.
type Priority string

// The priorities.
const (
	// PriorityNormal: SpeechKit's standard queue; a recording is ready in
	// about a sixth of its length.
	PriorityNormal Priority = "normal"
	// PriorityDeferred: SpeechKit's deferred mode (the deferred-general
	// model), billed at a lower price and done within a day.
	PriorityDeferred Priority = "deferred"
	// PriorityFast: SpeechKit's synchronous recognition, the text in the
	// answer to one request, for a recording short enough for it (at most
	// SPEECHKIT_SYNC_MAX_DURATION); a longer one, or one the synchronous
	// API refuses, is recognized as a normal job.
	PriorityFast Priority = "fast"
)

// Valid reports whether p is a priority; empty is (it means normal).
func (p Priority) Valid() bool {
	return p == "" || p == PriorityNormal || p == PriorityDeferred || p == PriorityFast
}

// normal is p with empty made PriorityNormal.
func (p Priority) normal() Priority {
	if p == "" {
		return PriorityNormal
	}
	return p
}

// Deferred reports whether the job is recognized in deferred mode.
func (j Job) Deferred() bool { return j.Priority == PriorityDeferred }

// Fast reports whether the job asked for synchronous recognition: it gets
// it when its recording is short enough and the synchronous API takes it,
// and is a normal job otherwise.
func (j Job) Fast() bool { return j.Priority == PriorityFast }

// Recognition is how a job's audio was recognized.
type Recognition string

// The ways a job is recognized.
const (
	// RecognitionSync: in one synchronous request (SpeechKit's REST API
	// v1), the text in its answer.
	RecognitionSync Recognition = "sync"
	// RecognitionAsync: submitted and polled (SpeechKit's API v3).
	RecognitionAsync Recognition = "async"
)

// Valid reports whether r is a recognition; empty is (not known yet).
func (r Recognition) Valid() bool { return r == "" || r == RecognitionSync || r == RecognitionAsync }

// saved is what a save leaves of the stored cur when the holder's copy
// says next: empty (a copy read before it was known) keeps cur; async,
// once recorded, stays, since the audio was submitted and a synchronous
// answer would recognize it twice; otherwise next, so a job tried
// synchronously may fall back to async.
func (r Recognition) saved(next Recognition) Recognition {
	if next == "" || r == RecognitionAsync {
		return r
	}
	return next
}

// PriorityOf is j's priority, PriorityNormal for a job made before
// priorities were kept.
func (j Job) PriorityOf() Priority { return j.Priority.normal() }

// Deleted reports whether the owner deleted the job.
func (j Job) Deleted() bool { return !j.DeletedAt.IsZero() }

// AudioMs is the audio of segs, in milliseconds: each as counted when it
// was made.
func AudioMs(segs []Segment) int64 {
	var total int64
	for _, sg := range segs {
		total += sg.DurationMs
	}
	return total
}

// Lengths are the segments' lengths in ms, in order.
func Lengths(segs []Segment) []int64 {
	out := make([]int64, len(segs))
	for i, sg := range segs {
		out[i] = sg.DurationMs
	}
	return out
}

// Segment is one piece of a job's audio and its recognition. Audio longer
// than the recognizer takes in one file is cut into several.
type Segment struct {
	Seq         int    // 0, 1, …: its place in the job's audio
	StartMs     int64  // where it starts in the job's audio
	DurationMs  int64  // how long it is
	AudioKey    string // the object submitted: the source itself, or a converted piece
	Container   string // the recognizer's name for its format: OGG_OPUS, MP3, WAV
	OperationID string // the recognition operation; empty until submitted
	Done        bool   // the operation finished and its result was read
	// CountedIn is the start of the window of the installation's count of
	// recognitions in flight that this one was last counted in; zero when
	// it is not counted (not submitted, finished, or counting is off).
	CountedIn time.Time
}

// Object keys of a job's files. Keys are made only here, from the job's id,
// so they never hold anything a sender chose.
func SourceKey(id string) string { return "sources/" + id }

// AcceptedKey is where ingest keeps the source it accepted: a server-side
// copy of SourceKey made once the upload passed its checks, so a later PUT
// through the same presigned URL cannot change what is probed, converted or
// recognized. No client is ever given a URL to write it.
func AcceptedKey(id string) string { return "audio/" + id + "/source" }

// AudioKey is where the seq-th converted piece of a job's audio goes.
func AudioKey(id string, seq int) string { return fmt.Sprintf("audio/%s/%03d.ogg", id, seq) }

// ResultKey is where the job's transcript goes, with its summary when the
// job asked for one.
func ResultKey(id string) string { return "results/" + id + ".json" }

// TranslationsKey is where the job's transcript's translations go, every
// language in one object (package translation).
func TranslationsKey(id string) string { return "results/" + id + ".translations.json" }

// Claim names a holder's claim on a job.
type Claim struct {
	JobID string
	ID    string
	Until time.Time
}

// Claim returns the claim the job carries.
func (j Job) Claim() Claim { return Claim{JobID: j.ID, ID: j.ClaimID, Until: j.ClaimUntil} }

// Due reports whether a due selection at now may take the job: it is live,
// its pause is over, and no unexpired claim holds it.
func (j Job) Due(now time.Time) bool {
	return !j.State.Terminal() && !now.Before(j.NextRunAt) && j.claimFree(now)
}

func (j Job) claimFree(now time.Time) bool {
	return j.ClaimID == "" || !now.Before(j.ClaimUntil)
}

// Draft is what a caller knows of a job before it exists.
type Draft struct {
	Source    Source
	OwnerID   string
	ChargedTo string // see Job.ChargedTo
	Language  string
	Priority  Priority // see Job.Priority; empty is normal
	Speakers  bool     // see Features.Speakers
	Summary   bool     // see Features.Summary
	NoReuse   bool     // see Features.NoReuse
	// ReuseKey, when the recording is known before its upload (a
	// Telegram file), is the job's reuse key (ReuseKeyOf).
	ReuseKey          string
	Filename          string
	SizeBytes         int64
	ContentType       string
	TelegramChatID    int64
	TelegramMessageID int64

	// IdempotencyKey makes Store.CreateOnce return the job already made
	// for the same owner and key.
	IdempotencyKey string

	// UploadWindow is how long the job waits for its file before a due
	// selection of the ingest step takes it to see whether the file came
	// (the upload event may have been lost) or never will.
	UploadWindow time.Duration
}

// Validate checks a draft before anything is written.
func (d Draft) Validate() error {
	switch {
	case !d.Source.Valid():
		return fmt.Errorf("%w: unknown source %q", ErrInvalid, d.Source)
	case d.SizeBytes < 0:
		return fmt.Errorf("%w: negative size", ErrInvalid)
	case d.UploadWindow < 0:
		return fmt.Errorf("%w: negative upload window", ErrInvalid)
	case !d.Priority.Valid():
		return fmt.Errorf("%w: unknown priority %q", ErrInvalid, d.Priority)
	case len(d.ChargedTo) > MaxChargedTo:
		return fmt.Errorf("%w: payer longer than %d bytes", ErrInvalid, MaxChargedTo)
	case len(d.ReuseKey) > MaxReuseKey:
		return fmt.Errorf("%w: reuse key longer than %d bytes", ErrInvalid, MaxReuseKey)
	case len(d.IdempotencyKey) > MaxIdempotencyKey:
		return fmt.Errorf("%w: idempotency key longer than %d bytes", ErrInvalid, MaxIdempotencyKey)
	case (d.TelegramChatID == 0) != (d.TelegramMessageID == 0):
		return fmt.Errorf("%w: a Telegram message needs both chat and message id", ErrInvalid)
	case (d.Source == SourceTelegram) != (d.TelegramChatID != 0):
		return fmt.Errorf("%w: a job has a Telegram message if and only if it comes from Telegram", ErrInvalid)
	}
	return nil
}

// NewJob makes the job Store.Create records for d at now: waiting for its
// upload, and due when d's upload window closes. The upload event claims it
// by id before that; a due selection takes it only if the event never came.
// A draft from Telegram goes through NewMessageJob instead.
func NewJob(d Draft, now time.Time) (Job, error) {
	if d.Source == SourceTelegram {
		return Job{}, fmt.Errorf("%w: a Telegram job is created for its message", ErrInvalid)
	}
	if d.IdempotencyKey != "" {
		return Job{}, fmt.Errorf("%w: a job with an idempotency key is created once", ErrInvalid)
	}
	return newJob(d, now)
}

// NewKeyedJob makes the job Store.CreateOnce records for d's owner and
// idempotency key.
func NewKeyedJob(d Draft, now time.Time) (Job, error) {
	if d.IdempotencyKey == "" || d.OwnerID == "" || d.Source != SourceAPI {
		return Job{}, fmt.Errorf("%w: a keyed job needs an API owner and a key", ErrInvalid)
	}
	return newJob(d, now)
}

// MaxIdempotencyKey is the longest idempotency key taken, in bytes.
const MaxIdempotencyKey = 255

// MaxChargedTo is the longest payer taken, in bytes.
const MaxChargedTo = 255

// NewMessageJob makes the job Store.CreateForMessage records for d's
// Telegram message.
func NewMessageJob(d Draft, now time.Time) (Job, error) {
	if d.Source != SourceTelegram {
		return Job{}, fmt.Errorf("%w: only a Telegram job is created for a message", ErrInvalid)
	}
	return newJob(d, now)
}

func newJob(d Draft, now time.Time) (Job, error) {
	if err := d.Validate(); err != nil {
		return Job{}, err
	}
	return Job{
		ID:                ident.NewAt(now),
		State:             AwaitingUpload,
		Source:            d.Source,
		OwnerID:           d.OwnerID,
		ChargedTo:         d.ChargedTo,
		Language:          d.Language,
		Priority:          d.Priority.normal(),
		Features:          Features{Speakers: d.Speakers, Summary: d.Summary, NoReuse: d.NoReuse},
		ReuseKey:          d.ReuseKey,
		Filename:          d.Filename,
		SizeBytes:         d.SizeBytes,
		ContentType:       d.ContentType,
		TelegramChatID:    d.TelegramChatID,
		TelegramMessageID: d.TelegramMessageID,
		IdempotencyKey:    d.IdempotencyKey,
		NextRunAt:         now.Add(d.UploadWindow),
		UploadBy:          now.Add(d.UploadWindow),
		CreatedAt:         now,
		UpdatedAt:         now,
	}, nil
}
