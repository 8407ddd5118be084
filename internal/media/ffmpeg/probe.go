package ffmpeg

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Probe is what a file holds, as ffprobe reads it.
type Probe struct {
	// Container is ffprobe's format_name, e.g. "ogg", "mp3", "wav",
	// "mov,mp4,m4a,3gp,3g2,mj2", "matroska,webm".
	Container string
	// DurationMs is the recording's length: the larger of what the
	// container's header states and what reading the first audio stream
	// to its end measures (demuxing only, no decoding; at most MaxDuration
	// and a second). A header that only estimates from the bitrate (MP3
	// without a Xing header, raw AAC) is not counted; one that states
	// nothing (WebM recorded by a browser's MediaRecorder) leaves the
	// measurement. 0 when there is no audio to measure.
	DurationMs int64
	// Audio are the audio streams, in the file's order.
	Audio []AudioStream
	// HasVideo: the file has a video stream. A cover picture counts: such a
	// file is converted, so SpeechKit only ever gets bare audio.
	HasVideo bool
}

// AudioStream is one audio stream of a file.
type AudioStream struct {
	Index      int    // ffprobe's stream index in the file
	Codec      string // ffprobe's codec_name, e.g. "opus", "mp3", "pcm_s16le", "aac"
	Channels   int
	SampleRate int // Hz
}

// probeOutputLimit caps what ffprobe may print: the entries asked for
// make a few hundred bytes a stream.
const probeOutputLimit = 1 << 20

// probeEntries are the only fields ffprobe prints, so tags (which can be
// long and are the sender's text) stay out.
const probeEntries = "format=format_name,duration" +
	":stream=index,codec_type,codec_name,channels,sample_rate" +
	":stream_disposition=attached_pic"

// estimatedDuration is ffprobe's warning that a duration was guessed from
// the bitrate, which may be far off for variable bitrates.
const estimatedDuration = "Estimating duration from bitrate"

type ffprobeOutput struct {
	Streams []struct {
		Index       int    `json:"index"`
		CodecType   string `json:"codec_type"`
		CodecName   string `json:"codec_name"`
		Channels    int    `json:"channels"`
		SampleRate  string `json:"sample_rate"`
		Disposition struct {
			AttachedPic int `json:"attached_pic"`
		} `json:"disposition"`
	} `json:"streams"`
	Format struct {
		FormatName string `json:"format_name"`
		Duration   string `json:"duration"`
	} `json:"format"`
}

// Probe reads what input holds: an http(s) URL (a presigned GET) on
// Config.InputOrigin, or a local path. Errors: ErrEmptyFile (no bytes),
// ErrUnsupported (a format that is not accepted: a playlist, an image…),
// ErrUnreadable (ffprobe cannot read it, or finds no streams),
// ErrSourceUnavailable (reading it failed on the way), ErrInputRefused (a
// URL elsewhere: nothing was run), ErrFailed, or the context's error. A
// file without audio is not an error here: Plan decides.
func (m *Media) Probe(ctx context.Context, input string) (Probe, error) {
	in, err := m.inputArgs(input, "")
	if err != nil {
		return Probe{}, err
	}
	args := append([]string{"-hide_banner", "-loglevel", "warning", "-print_format", "json", "-show_entries", probeEntries}, in...)
	var out cappedBuffer
	out.limit = probeOutputLimit
	res := run(ctx, m.tools.FFprobe, args, input, &out, m.cfg.StderrLimit)
	if res.Err != nil || res.WriteErr != nil {
		return Probe{}, m.probeFailure(ctx, input, res)
	}

	p, err := decodeProbe(out.Bytes())
	if err != nil || len(p.Audio) == 0 {
		return p, err
	}
	// The header is the sender's to write: the audio is always measured
	// too, and the larger of the two is the length. A header that states
	// less than the file holds (an MP3's Xing frame count, an Ogg file's
	// last granule position, a Matroska Duration) would otherwise have
	// the recording planned, and its cost reserved, as shorter than it is.
	d, err := m.measure(ctx, input, p.Container)
	if err != nil {
		return Probe{}, err
	}
	header := p.DurationMs
	if strings.Contains(res.Stderr, estimatedDuration) {
		header = 0 // a guess from the bitrate, which may be far off either way
	}
	p.DurationMs = max(header, d)
	return p, nil
}

// decodeProbe reads ffprobe's JSON (probeEntries) into a Probe, with the
// duration its header states (0 when none). The format must be one of
// acceptedFormats, which ffprobe's -format_whitelist already enforced:
// this is the second check, in case a build ignored it. Errors:
// ErrUnsupported, or ErrUnreadable (output that does not decode, no
// streams). A Probe returned without error has an accepted Container and
// no negative number in it.
func decodeProbe(b []byte) (Probe, error) {
	var raw ffprobeOutput
	if err := json.Unmarshal(b, &raw); err != nil {
		return Probe{}, wrap(ErrUnreadable, fmt.Errorf("ffprobe: decode its output: %w", err), "")
	}
	if _, ok := allowedDemuxer(raw.Format.FormatName); !ok {
		return Probe{}, wrap(ErrUnsupported, fmt.Errorf("ffprobe: format %q is not accepted", raw.Format.FormatName), "")
	}
	if len(raw.Streams) == 0 {
		return Probe{}, wrap(ErrUnreadable, fmt.Errorf("ffprobe: no streams in %q", raw.Format.FormatName), "")
	}
	p := Probe{Container: raw.Format.FormatName}
	for _, s := range raw.Streams {
		switch s.CodecType {
		case "audio":
			if s.Index < 0 || s.Channels < 0 {
				return Probe{}, wrap(ErrUnreadable, fmt.Errorf("ffprobe: audio stream %d of %d channels", s.Index, s.Channels), "")
			}
			rate, err := strconv.Atoi(s.SampleRate) // absent for some codecs: 0
			if err != nil || rate < 0 {
				rate = 0
			}
			p.Audio = append(p.Audio, AudioStream{Index: s.Index, Codec: s.CodecName, Channels: s.Channels, SampleRate: rate})
		case "video":
			p.HasVideo = true
		}
	}
	if len(p.Audio) > 0 {
		p.DurationMs = parseSeconds(raw.Format.Duration)
	}
	return p, nil
}

// probeFailure tells a file that cannot be read from a file that could not
// be fetched, and an empty file from both.
func (m *Media) probeFailure(ctx context.Context, input string, res runResult) error {
	if res.WriteErr != nil && ctx.Err() == nil {
		return wrap(ErrUnreadable, fmt.Errorf("ffprobe: %w", res.WriteErr), "")
	}
	err := res.failure(ctx, "ffprobe")
	if errors.Is(err, ErrUnsupported) {
		return err // a demuxer was found, and refused: the file is not empty
	}
	// ffprobe ran and refused the file: whatever it said, the file is at
	// fault. Otherwise (cancelled, the network, ffprobe did not run or was
	// killed) nothing is known of the file yet.
	refused := errors.Is(err, ErrUnreadable) || (errors.Is(err, ErrFailed) && res.refused())
	if !refused {
		return err
	}
	if m.isEmpty(ctx, input) {
		return wrap(ErrEmptyFile, errors.Unwrap(err), "")
	}
	return wrap(ErrUnreadable, errors.Unwrap(err), "")
}

// isEmpty asks ffprobe for the input's size alone, read as raw data (which
// any bytes are), so it works the same for a URL and a path.
func (m *Media) isEmpty(ctx context.Context, input string) bool {
	in, err := m.inputArgs(input, rawData)
	if err != nil {
		return false
	}
	args := append([]string{"-hide_banner", "-loglevel", "error", "-print_format", "json", "-show_entries", "format=size"}, in...)
	var out cappedBuffer
	out.limit = probeOutputLimit
	if res := run(ctx, m.tools.FFprobe, args, input, &out, m.cfg.StderrLimit); res.Err != nil {
		return false
	}
	var raw struct {
		Format struct {
			Size string `json:"size"`
		} `json:"format"`
	}
	return json.Unmarshal(out.Bytes(), &raw) == nil && raw.Format.Size == "0"
}

// measure reads the first audio stream to its end without decoding it
// (-c copy into the null muxer) and returns how far its timestamps went.
// It reads the input with the demuxer ffprobe found (container, forced with
// -f), so a file changed in between is not detected as something else.
// It stops a second past MaxDuration: a longer recording is refused
// anyway, and knowing that is enough.
func (m *Media) measure(ctx context.Context, input, container string) (int64, error) {
	in, err := m.inputArgs(input, container)
	if err != nil {
		return 0, err
	}
	args := append([]string{"-nostdin", "-hide_banner", "-loglevel", "error",
		"-progress", "pipe:1", "-stats_period", "3600"}, in...)
	args = append(args, "-map", "0:a:0", "-c", "copy",
		"-t", seconds(m.cfg.MaxDuration+time.Second), "-f", "null", "-")
	var out cappedBuffer
	out.limit = probeOutputLimit
	res := run(ctx, m.tools.FFmpeg, args, input, &out, m.cfg.StderrLimit)
	if res.Err != nil || res.WriteErr != nil {
		err := res.failure(ctx, "ffmpeg (measure)")
		if errors.Is(err, ErrFailed) && res.refused() {
			// ffprobe read the stream's header, ffmpeg could not read on.
			return 0, wrap(ErrUnreadable, errors.Unwrap(err), "")
		}
		return 0, err
	}
	if inputReadBroke(res.Stderr) {
		return 0, wrap(ErrSourceUnavailable, &processError{tool: "ffmpeg (measure)", err: errors.New("input read failed"), stderr: res.Stderr}, "")
	}
	var last int64 = -1
	sc := bufio.NewScanner(bytes.NewReader(out.Bytes()))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "out_time_us="); ok {
			if us, err := strconv.ParseInt(v, 10, 64); err == nil {
				last = us
			}
		}
	}
	if last < 0 {
		return 0, nil // no packet at all: an empty recording
	}
	return (last + 500) / 1000, nil
}

// parseSeconds turns ffprobe's "12.345000" into milliseconds; 0 for "N/A"
// or anything else it cannot read.
func parseSeconds(s string) int64 {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f <= 0 || math.IsInf(f, 0) || math.IsNaN(f) || f > 1e9 {
		return 0
	}
	return int64(math.Round(f * 1000))
}

// seconds formats d for ffmpeg's -ss and -t: seconds with milliseconds.
func seconds(d time.Duration) string {
	ms := d.Milliseconds()
	return fmt.Sprintf("%d.%03d", ms/1000, ms%1000)
}

// cappedBuffer collects a small output and refuses more than limit bytes,
// which ends the run.
type cappedBuffer struct {
	bytes.Buffer
	limit int
}

var errOutputTooLarge = errors.New("output larger than expected")

func (b *cappedBuffer) Write(p []byte) (int, error) {
	if b.Len()+len(p) > b.limit {
		return 0, errOutputTooLarge
	}
	return b.Buffer.Write(p)
}
