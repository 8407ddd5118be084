// Package ffmpeg is the media adapter: it finds out what a file holds
// (ffprobe), decides whether SpeechKit can take it as it is, and otherwise
// converts it to OGG/Opus with ffmpeg, as a stream, or cuts a long
// recording into pieces at quiet moments.
//
// The input is a presigned GET URL (or, locally and in tests, a path).
// It is demuxed, never fetched from: ffmpeg opens that one input, on the
// storage's origin, with a demuxer from a short allow-list of plain
// containers, none of which opens other inputs (see input.go); a file in
// any other format is ErrUnsupported. ffmpeg reads the URL itself, so it
// can seek with HTTP Range requests, which an MP4 with its index at the
// end needs. Convert writes the converted audio to ffmpeg's stdout, which
// it copies to an io.Writer (in the pipeline, a multipart upload to Object
// Storage): nothing is written to disk, and the memory stays bounded
// whatever the input's length.
//
// Split is the one place that writes to disk: ffmpeg's segment muxer
// writes each piece to a file in a fresh directory under the system's
// temp folder, and Split removes it as soon as it has been handed over,
// and the directory at the end. Cloud Functions allow at most 512 MB of
// temporary files (https://yandex.cloud/en/docs/functions/concepts/limits),
// and a piece is small: 1.2 MB per 5 minutes at 32 kbit/s, so the pieces
// on disk at once (the one handed over and the one being written) are a
// few MB, and even a whole 6-hour recording would be 86 MB.
//
// Every failure of the input or of the tools is an *errs.Error (see the Err
// sentinels); the writer's error and the context's come back as they are,
// wrapped, so their kinds hold. The input's URL carries a signature, so it
// never appears in a Message, and it is scrubbed from the ffmpeg output
// kept in the cause for the logs (replaced with "<input>").
package ffmpeg

import (
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"transcriber/internal/errs"
)

// Defaults of Config; docs/settings.md says where each number comes from.
const (
	// DefaultMaxDuration is the longest recording the service accepts.
	DefaultMaxDuration = 6 * time.Hour
	// DefaultSegmentLength keeps every submitted file under SpeechKit's 4 h
	// per file, with 10 minutes to spare for durations that headers get
	// slightly wrong.
	DefaultSegmentLength = 3*time.Hour + 50*time.Minute
	// DefaultStderrLimit is how much of ffmpeg's stderr is kept for the logs:
	// the tail, where the error that ended the run is.
	DefaultStderrLimit = 4 << 10
	// DefaultPieceLength is the length the pieces of a long recording aim
	// at. SpeechKit's asynchronous recognition takes "about 10 seconds to
	// recognize one minute of single-channel audio" (docs/settings.md), so
	// its time grows with a file's length; pieces recognized side by side
	// bring a transcript in the time of the longest one: about a minute for
	// 5 minutes, where an hour in one file takes ten.
	DefaultPieceLength = 5 * time.Minute
	// DefaultParallelFrom is the length above which a recording is cut into
	// pieces. A shorter one is back in under two minutes as one file, and
	// every piece is one more recognition request, of which SpeechKit
	// allows 500 an hour by default ("Recognition requests per hour",
	// https://yandex.cloud/en/docs/speechkit/concepts/limits).
	DefaultParallelFrom = 10 * time.Minute
	// DefaultMaxPieces bounds the requests one recording spends: 2 hours
	// are 24 pieces of 5 minutes, and past that the pieces grow instead
	// (6 h gives 24 of 15 min), so 20 long recordings an hour fit the
	// quota. The pipeline cuts into pieces only while the quota's window
	// has room (admission.RoomForPieces). 24 rather than 12:
	// a 6 h recording's transcript is back in about 0.21 of the time of
	// one file per SEGMENT_LENGTH instead of 0.28 (BenchmarkLongWall),
	// its 15-minute pieces taking half the time of 30-minute ones.
	DefaultMaxPieces = 24
	// DefaultBitrate is the Opus bitrate of converted audio: 32 kbit/s is
	// inside the 28–40 kbit/s that RFC 7587 (3.1.1) recommends for fullband
	// speech, keeps stereo as stereo (libopus folds stereo to mono below
	// about 24 kbit/s), and makes 4 h of audio about 58 MB, far under
	// SpeechKit's 1 GB per file.
	DefaultBitrate = "32k"
)

// Tools are the paths of the two binaries.
type Tools struct {
	FFmpeg, FFprobe string
}

// Locate finds ffmpeg and ffprobe. For each binary, an explicit path
// (FFMPEG_PATH / FFPROBE_PATH, passed in by the entrypoint) wins, and if it
// is set but not an executable file, Locate fails rather than quietly use
// another binary. Otherwise it tries <taskRoot>/bin/<name> (taskRoot is
// $LAMBDA_TASK_ROOT on Cloud Functions, where /tmp is noexec and binaries
// ship in the function's zip; empty elsewhere), then PATH. The error names
// every place tried.
func Locate(ffmpegPath, ffprobePath, taskRoot string) (Tools, error) {
	ff, err := locate("ffmpeg", "FFMPEG_PATH", ffmpegPath, taskRoot)
	if err != nil {
		return Tools{}, err
	}
	fp, err := locate("ffprobe", "FFPROBE_PATH", ffprobePath, taskRoot)
	if err != nil {
		return Tools{}, err
	}
	return Tools{FFmpeg: ff, FFprobe: fp}, nil
}

func locate(name, setting, explicit, taskRoot string) (string, error) {
	if explicit != "" {
		p, err := exec.LookPath(explicit)
		if err != nil {
			return "", fmt.Errorf("locate %s: %s=%q is not an executable file: %w", name, setting, explicit, err)
		}
		return p, nil
	}
	var tried []string
	if taskRoot != "" {
		candidate := filepath.Join(taskRoot, "bin", name)
		if p, err := exec.LookPath(candidate); err == nil {
			return p, nil
		}
		tried = append(tried, candidate)
	}
	p, err := exec.LookPath(name)
	if err == nil {
		return p, nil
	}
	if errors.Is(err, exec.ErrDot) {
		// Found only relative to the working directory: refuse it, as the
		// go command does, rather than run whatever sits there.
		tried = append(tried, "PATH (found only in the current directory)")
	} else {
		tried = append(tried, "PATH")
	}
	return "", fmt.Errorf("locate %s: not found; tried %s (%s not set)", name, strings.Join(tried, ", "), setting)
}

// Config holds the adapter's settings; a zero field takes its default.
type Config struct {
	MaxDuration   time.Duration // longest recording accepted; default 6 h
	SegmentLength time.Duration // longest piece submitted; default 3 h 50 min, under SpeechKit's 4 h per file
	StderrLimit   int           // bytes of ffmpeg's stderr kept for logs (the tail); default 4 KiB
	Bitrate       string        // Opus bitrate of converted audio; default "32k" (see DefaultBitrate)
	// PieceLength is the length the pieces of a long recording aim at;
	// default 5 min (DefaultPieceLength). Each cut is moved to the quietest
	// moment near it, so the pieces come out only about this long.
	PieceLength time.Duration
	// ParallelFrom: a recording longer than this is cut into pieces of about
	// PieceLength, recognized side by side; default 10 min
	// (DefaultParallelFrom). Shorter ones are one segment, as before.
	ParallelFrom time.Duration
	// MaxPieces is the most pieces a recording is cut into; default 24
	// (DefaultMaxPieces). A longer recording gets longer pieces, never
	// longer than SegmentLength.
	MaxPieces int
	// InputOrigin is the only place a URL input may be on: the storage's
	// scheme://host[:port], as its presigned URLs have it (see OriginOf).
	// Any other URL is refused with ErrInputRefused before a binary runs;
	// with none set, every URL is. Local paths are read whatever it says.
	InputOrigin string
}

func (c Config) withDefaults() Config {
	if c.MaxDuration <= 0 {
		c.MaxDuration = DefaultMaxDuration
	}
	if c.SegmentLength <= 0 {
		c.SegmentLength = DefaultSegmentLength
	}
	if c.StderrLimit <= 0 {
		c.StderrLimit = DefaultStderrLimit
	}
	if c.Bitrate == "" {
		c.Bitrate = DefaultBitrate
	}
	if c.PieceLength <= 0 {
		c.PieceLength = DefaultPieceLength
	}
	if c.ParallelFrom <= 0 {
		c.ParallelFrom = DefaultParallelFrom
	}
	if c.MaxPieces <= 0 {
		c.MaxPieces = DefaultMaxPieces
	}
	if o, err := OriginOf(c.InputOrigin); err == nil {
		c.InputOrigin = o
	}
	return c
}

// Media probes, plans and converts with one pair of binaries. It holds no
// state between calls and is safe for concurrent use.
type Media struct {
	tools Tools
	cfg   Config
}

// New returns a Media that runs the binaries in t with cfg (zero fields
// take their defaults).
func New(t Tools, cfg Config) *Media {
	return &Media{tools: t, cfg: cfg.withDefaults()}
}

// Config returns the settings in use, defaults filled in.
func (m *Media) Config() Config { return m.cfg }

// The errors of Probe, Plan and Convert. Match them with errors.Is: a
// returned error carries its own cause (and, for ErrTooLong, a message that
// names the limit) but matches its sentinel by kind and code.
var (
	// ErrEmptyFile: the file has no bytes, or its audio lasts no time at all.
	ErrEmptyFile = errs.New(errs.Permanent, "empty_file", "the file is empty")
	// ErrUnreadable: ffprobe cannot read the file, or finds no streams in it.
	ErrUnreadable = errs.New(errs.Permanent, "unreadable_media", "the file could not be read as audio or video")
	// ErrUnsupported: the file is in a format that is not accepted (a
	// playlist, a manifest, an image…): no demuxer of acceptedFormats reads
	// it. Its message lists the formats that are.
	ErrUnsupported = errs.New(errs.Permanent, "unsupported_media",
		"the file is not in a format the service accepts; accepted: "+acceptedLabels)
	// ErrNoAudio: the file is media but has no audio stream (a silent video).
	ErrNoAudio = errs.New(errs.Permanent, "no_audio_stream", "the file has no sound in it")
	// ErrTooLong: the recording is longer than Config.MaxDuration.
	ErrTooLong = errs.New(errs.Permanent, "too_long", "the recording is too long")
	// ErrSourceUnavailable: reading the input failed on the way (connection
	// refused or reset, an HTTP error such as an expired URL, a stream cut
	// short): another attempt, with a fresh URL, may succeed.
	ErrSourceUnavailable = errs.New(errs.Unavailable, "source_unavailable",
		"the file could not be read from storage; it will be tried again")
	// ErrFailed: ffmpeg or ffprobe failed in a way this package does not
	// recognize (a crash, a signal, an unknown message). It is Internal, so
	// the job is retried and the cause is logged in full.
	ErrFailed = errs.New(errs.Internal, "media_failed", "the recording could not be converted")
	// ErrInputRefused: the input is a URL that is not on
	// Config.InputOrigin (or not a plain http(s) URL). The URLs are the
	// storage adapter's, so this is a deployment bug, Internal, and nothing
	// was run.
	ErrInputRefused = errs.New(errs.Internal, "media_input_refused", "the recording could not be read")
)

// wrap returns a copy of sentinel with cause and, if message is not empty,
// that message instead of the sentinel's.
func wrap(sentinel *errs.Error, cause error, message string) *errs.Error {
	if message == "" {
		message = sentinel.Message
	}
	return errs.Wrap(cause, sentinel.Kind, sentinel.Code, message)
}

// rwTimeout is how long ffmpeg waits for a read or write on the network
// before it gives up on the connection (and, with -reconnect, opens a new
// one): far longer than any healthy Object Storage read, far shorter than
// the function's 10-minute life.
const rwTimeout = 30 * time.Second

// reconnectDelayMax bounds ffmpeg's reconnects within one read: it sleeps
// 0, 1 and 3 s before its attempts and gives up when the next pause would
// exceed 4 s. Longer outages are the job's retry policy's business.
const reconnectDelayMax = 4

// msDuration turns milliseconds into a Duration.
func msDuration(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }
