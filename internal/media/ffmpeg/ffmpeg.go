// Package ffmpeg is the media adapter: Probe reads what a file holds, Plan
// how it is cut, Convert streams it to OGG/Opus with bounded memory and no
// disk, Split cuts a long recording at quiet moments (a few MB of pieces on
// disk at once, under Cloud Functions' 512 MB).
//
// The input, a presigned URL on the storage's origin or a local path, is
// opened by ffmpeg itself (so it seeks with Range requests) under a demuxer
// and protocol allow-list (input.go). Failures are *errs.Error (the Err
// sentinels), the writer's and the context's wrapped with their kinds; the
// URL's signature never reaches a message and is "<input>" in the causes.
package ffmpeg

import (
	"cmp"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"time"

	"transcriber/internal/errs"
)

// Defaults of Config; docs/settings.md says where each number comes from.
const (
	DefaultMaxDuration   = 6 * time.Hour
	DefaultSegmentLength = 3*time.Hour + 50*time.Minute // under SpeechKit's 4 h per file
	DefaultPieceLength   = 5 * time.Minute
	DefaultParallelFrom  = 10 * time.Minute
	DefaultMaxPieces     = 24
	// DefaultBitrate is within RFC 7587's 28–40 kbit/s for speech and keeps
	// stereo (libopus folds it below ~24k); 4 h is ~58 MB.
	DefaultBitrate = "32k"
)

type Tools struct {
	FFmpeg, FFprobe string
}

// Locate finds ffmpeg and ffprobe: an explicit path (FFMPEG_PATH,
// FFPROBE_PATH) must be executable; else <taskRoot>/bin (Cloud Functions'
// zip, /tmp being noexec), then PATH. The error names every place tried.
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
	tried := "PATH"
	if taskRoot != "" {
		candidate := filepath.Join(taskRoot, "bin", name)
		if p, err := exec.LookPath(candidate); err == nil {
			return p, nil
		}
		tried = candidate + ", PATH"
	}
	p, err := exec.LookPath(name)
	if err == nil {
		return p, nil
	}
	if errors.Is(err, exec.ErrDot) { // refused, as the go command does
		tried += " (found only in the current directory)"
	}
	return "", fmt.Errorf("locate %s: not found; tried %s (%s not set)", name, tried, setting)
}

// Config holds the adapter's settings; a zero field takes its default.
type Config struct {
	MaxDuration   time.Duration // longest recording accepted
	SegmentLength time.Duration // longest piece submitted
	PieceLength   time.Duration // what pieces aim at; cuts move to the quietest moment near
	ParallelFrom  time.Duration // longer recordings are cut into pieces
	MaxPieces     int           // past it pieces grow, up to SegmentLength
	// InputOrigin (OriginOf) is the only origin a URL input may be on;
	// with none, every URL is refused. Paths are read regardless.
	InputOrigin string
}

func (c Config) withDefaults() Config {
	c.MaxDuration = cmp.Or(max(c.MaxDuration, 0), DefaultMaxDuration)
	c.SegmentLength = cmp.Or(max(c.SegmentLength, 0), DefaultSegmentLength)
	c.PieceLength = cmp.Or(max(c.PieceLength, 0), DefaultPieceLength)
	c.ParallelFrom = cmp.Or(max(c.ParallelFrom, 0), DefaultParallelFrom)
	c.MaxPieces = cmp.Or(max(c.MaxPieces, 0), DefaultMaxPieces)
	if o, err := OriginOf(c.InputOrigin); err == nil {
		c.InputOrigin = o
	}
	return c
}

// Media probes, plans and converts; stateless, safe for concurrent use.
type Media struct {
	tools Tools
	cfg   Config
}

func New(t Tools, cfg Config) *Media { return &Media{tools: t, cfg: cfg.withDefaults()} }

// The errors of Probe, Plan and Convert; errors.Is matches by kind and code.
var (
	ErrEmptyFile  = errs.New(errs.Permanent, "empty_file", "the file is empty")
	ErrUnreadable = errs.New(errs.Permanent, "unreadable_media", "the file could not be read as audio or video")
	// ErrUnsupported: no demuxer of acceptedFormats reads it (a playlist, an image…).
	ErrUnsupported = errs.New(errs.Permanent, "unsupported_media",
		"the file is not in a format the service accepts; accepted: "+acceptedLabels)
	ErrNoAudio = errs.New(errs.Permanent, "no_audio_stream", "the file has no sound in it")
	ErrTooLong = errs.New(errs.Permanent, "too_long", "the recording is too long")
	// ErrSourceUnavailable: the read broke on the way; a fresh URL may pass.
	ErrSourceUnavailable = errs.New(errs.Unavailable, "source_unavailable",
		"the file could not be read from storage; it will be tried again")
	// ErrFailed: a failure not recognized (crash, signal); logged in full.
	ErrFailed = errs.New(errs.Internal, "media_failed", "the recording could not be converted")
	// ErrInputRefused: a URL off Config.InputOrigin, a deployment bug; nothing ran.
	ErrInputRefused = errs.New(errs.Internal, "media_input_refused", "the recording could not be read")
)

// wrap copies sentinel with cause.
func wrap(sentinel *errs.Error, cause error) *errs.Error {
	return errs.Wrap(cause, sentinel.Kind, sentinel.Code, sentinel.Message)
}

const (
	DefaultStderrLimit = 4 << 10 // the tail, where the fatal error is
	// rwTimeout is ffmpeg's network I/O wait before reconnecting: far over a
	// healthy read, far under the function's 10-minute life.
	rwTimeout = 30 * time.Second
	// reconnectDelayMax: ffmpeg sleeps 0, 1, 3 s, then gives up; longer
	// outages are the job's retry policy's.
	reconnectDelayMax = 4
	copyBufferSize    = 64 << 10 // a Linux pipe's size
	waitDelay         = 5 * time.Second
)

func msDuration(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }
