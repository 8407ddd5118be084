// Package job is the domain of a transcription job: states and moves, the
// claim that makes a step exclusive, the retry policy, and the Store port.
// Each write's rule is a function here (Apply*) that every store runs
// between its read and its write in one transaction; jobstoretest checks.
package job

import (
	"cmp"
	"fmt"
	"time"

	"transcriber/internal/ident"
)

// Job is one file to transcribe; its row is also the queue entry a step claims.
type Job struct {
	ID          string
	State       State
	Source      Source
	OwnerID     string   // who may see it: a token id, or a Telegram chat "tg:<chat id>"
	ChargedTo   string   // the payer, "tok:<token id>" or "tgu:<user id>" (package spend)
	Language    string   // empty is the service default
	Priority    Priority // empty is normal (older jobs)
	Recognition Recognition
	// BilledSeconds is what the recognizer said it billed (synchronous);
	// 0 reckons the bill from the segments (spend.JobBilled).
	BilledSeconds int64
	Features      Features
	Filename      string // for display only, never an object key
	SizeBytes     int64  // declared (API) or known (Telegram)
	ContentType   string
	DurationMs    int64 // once probed

	TelegramChatID    int64 // with TelegramMessageID, the message answered
	TelegramMessageID int64

	Attempts   int       // claims since the last successful step
	NextRunAt  time.Time // not due before
	ClaimID    string    // the holder's claim; empty when none
	ClaimUntil time.Time

	ErrorCode    string // e.g. "no_audio_stream"
	ErrorMessage string // fit for the job's owner

	Segments []Segment // the audio submitted, in order

	IdempotencyKey string    // the API's Idempotency-Key
	DeletedAt      time.Time // zero while it stands
	UploadBy       time.Time // the upload window's end: then upload_missing
	EndedAt        time.Time // the row expires a retention period after

	// The reservation against the payer's day and the month (package
	// spend): seconds, their price with any summary's in micro-rubles, the
	// UTC day. Recorded once after the probe, then moved within its day to
	// what is billed.
	ReservedSeconds int64
	ReservedMicros  int64
	ReservedDay     time.Time

	ReuseKey string // ReuseKeyOf, so a done job lends its transcript; blanked by a deletion

	CreatedAt time.Time
	UpdatedAt time.Time
}

// Priority is how soon a job is recognized.
type Priority string

const (
	PriorityNormal   Priority = "normal"
	PriorityDeferred Priority = "deferred" // cheaper, within a day
	PriorityFast     Priority = "fast"     // synchronous recognition when it fits, else normal
)

// Valid reports whether p is a priority; empty is (normal).
func (p Priority) Valid() bool {
	return p == "" || p == PriorityNormal || p == PriorityDeferred || p == PriorityFast
}

func (p Priority) normal() Priority { return cmp.Or(p, PriorityNormal) }

func (j Job) Deferred() bool { return j.Priority == PriorityDeferred }

func (j Job) Fast() bool { return j.Priority == PriorityFast }

// Recognition is how a job's audio was recognized.
type Recognition string

const (
	RecognitionSync  Recognition = "sync"  // one REST request
	RecognitionAsync Recognition = "async" // submitted and polled
)

// Valid reports whether r is a recognition; empty is (not known yet).
func (r Recognition) Valid() bool { return r == "" || r == RecognitionSync || r == RecognitionAsync }

// saved is r after a save of next: empty keeps r; async stays (the audio
// was submitted, sync would recognize it twice); sync may fall back to async.
func (r Recognition) saved(next Recognition) Recognition {
	if next == "" || r == RecognitionAsync {
		return r
	}
	return next
}

// PriorityOf is j's priority, empty read as normal.
func (j Job) PriorityOf() Priority { return j.Priority.normal() }

func (j Job) Deleted() bool { return !j.DeletedAt.IsZero() }

// AudioMs is the audio of segs, each as counted when made.
func AudioMs(segs []Segment) int64 {
	var total int64
	for _, sg := range segs {
		total += sg.DurationMs
	}
	return total
}

func Lengths(segs []Segment) []int64 {
	out := make([]int64, len(segs))
	for i := range segs {
		out[i] = segs[i].DurationMs
	}
	return out
}

// Segment is one piece of a job's audio and its recognition.
type Segment struct {
	Seq         int // its place in the job's audio
	StartMs     int64
	DurationMs  int64
	AudioKey    string // the source itself, or a converted piece
	Container   string // OGG_OPUS, MP3, WAV
	OperationID string // empty until submitted
	Done        bool   // finished and its result read
}

// Object keys are made only here, from the job's id, never a sender's words.
func SourceKey(id string) string { return "sources/" + id }

// AcceptedKey is ingest's copy of the checked upload: a later PUT through
// the presigned URL cannot change what is recognized.
func AcceptedKey(id string) string { return "audio/" + id + "/source" }

func AudioKey(id string, seq int) string { return fmt.Sprintf("audio/%s/%03d.ogg", id, seq) }

// ResultKey holds the transcript, with any summary.
func ResultKey(id string) string { return "results/" + id + ".json" }

// TranslationsKey holds every translation in one object.
func TranslationsKey(id string) string { return "results/" + id + ".translations.json" }

// Claim names a holder's claim on a job.
type Claim struct {
	JobID string
	ID    string
	Until time.Time
}

func (j Job) Claim() Claim { return Claim{JobID: j.ID, ID: j.ClaimID, Until: j.ClaimUntil} }

// Due reports whether the job is live, its pause over, and unclaimed.
func (j Job) Due(now time.Time) bool {
	return !j.State.Terminal() && !now.Before(j.NextRunAt) && j.claimFree(now)
}

func (j Job) claimFree(now time.Time) bool { return j.ClaimID == "" || !now.Before(j.ClaimUntil) }

// Draft is what a caller knows of a job before it exists.
type Draft struct {
	Source            Source
	OwnerID           string
	ChargedTo         string
	Language          string
	Priority          Priority
	Speakers          bool
	Summary           bool
	NoReuse           bool
	ReuseKey          string // when the recording is known before upload (Telegram)
	Filename          string
	SizeBytes         int64
	ContentType       string
	TelegramChatID    int64
	TelegramMessageID int64

	IdempotencyKey string
	UploadWindow   time.Duration // until a due selection looks for the file (the event may be lost)
}

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

// NewJob makes the job Store.Create records: awaiting upload, due when the
// window closes unless the upload event claims it.
func NewJob(d Draft, now time.Time) (Job, error) {
	if d.Source == SourceTelegram {
		return Job{}, fmt.Errorf("%w: a Telegram job is created for its message", ErrInvalid)
	}
	if d.IdempotencyKey != "" {
		return Job{}, fmt.Errorf("%w: a job with an idempotency key is created once", ErrInvalid)
	}
	return newJob(d, now)
}

// NewKeyedJob makes the job Store.CreateOnce records.
func NewKeyedJob(d Draft, now time.Time) (Job, error) {
	if d.IdempotencyKey == "" || d.OwnerID == "" || d.Source != SourceAPI {
		return Job{}, fmt.Errorf("%w: a keyed job needs an API owner and a key", ErrInvalid)
	}
	return newJob(d, now)
}

// Longest idempotency key and payer taken, in bytes.
const (
	MaxIdempotencyKey = 255
	MaxChargedTo      = 255
)

// NewMessageJob makes the job Store.CreateForMessage records.
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
