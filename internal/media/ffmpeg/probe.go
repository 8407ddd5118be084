package ffmpeg

import (
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
	Container string // ffprobe's format_name, e.g. "mov,mp4,m4a,3gp,3g2,mj2"
	// DurationMs is the larger of the header's (unless estimated from the
	// bitrate) and the first audio stream's measured end; 0 without audio.
	DurationMs int64
	Audio      []AudioStream
	HasVideo   bool // a cover picture counts, so SpeechKit gets bare audio
}

// AudioStream is one audio stream of a file.
type AudioStream struct {
	Index      int    // ffprobe's stream index
	Codec      string // ffprobe's codec_name
	Channels   int
	SampleRate int // Hz
}

const (
	probeOutputLimit = 1 << 20 // a few hundred bytes a stream
	// probeEntries keep tags, the sender's text, out.
	probeEntries      = "format=format_name,duration:stream=index,codec_type,codec_name,channels,sample_rate"
	estimatedDuration = "Estimating duration from bitrate" // ffprobe's warning
)

type ffprobeOutput struct {
	Streams []struct {
		Index      int    `json:"index"`
		CodecType  string `json:"codec_type"`
		CodecName  string `json:"codec_name"`
		Channels   int    `json:"channels"`
		SampleRate string `json:"sample_rate"`
	} `json:"streams"`
	Format struct {
		FormatName string `json:"format_name"`
		Duration   string `json:"duration"`
	} `json:"format"`
}

// Probe reads what input (a URL on Config.InputOrigin, or a path) holds.
// A file without audio is no error here: Plan decides.
func (m *Media) Probe(ctx context.Context, input string) (Probe, error) {
	in, err := m.inputArgs(input, "")
	if err != nil {
		return Probe{}, err
	}
	args := append([]string{"-hide_banner", "-loglevel", "warning", "-print_format", "json", "-show_entries", probeEntries}, in...)
	out := cappedBuffer{limit: probeOutputLimit}
	res := run(ctx, m.tools.FFprobe, args, input, &out)
	if res.Err != nil || res.WriteErr != nil {
		return Probe{}, m.probeFailure(ctx, input, res)
	}

	p, err := decodeProbe(out.Bytes())
	if err != nil || len(p.Audio) == 0 {
		return p, err
	}
	// The header is the sender's: one that understates would have the
	// recording planned and reserved as shorter, so the audio is measured.
	d, err := m.measure(ctx, input, p.Container)
	if err != nil {
		return Probe{}, err
	}
	if strings.Contains(res.Stderr, estimatedDuration) {
		p.DurationMs = 0
	}
	p.DurationMs = max(p.DurationMs, d)
	return p, nil
}

// decodeProbe reads ffprobe's JSON with the header's duration. It checks the
// format again, in case a build ignored -format_whitelist; a Probe it
// returns has no negative number.
func decodeProbe(b []byte) (Probe, error) {
	var raw ffprobeOutput
	err := json.Unmarshal(b, &raw)
	_, accepted := allowedDemuxer(raw.Format.FormatName)
	switch {
	case err != nil:
		return Probe{}, wrap(ErrUnreadable, fmt.Errorf("ffprobe: decode its output: %w", err))
	case !accepted:
		return Probe{}, wrap(ErrUnsupported, fmt.Errorf("ffprobe: format %q is not accepted", raw.Format.FormatName))
	case len(raw.Streams) == 0:
		return Probe{}, wrap(ErrUnreadable, fmt.Errorf("ffprobe: no streams in %q", raw.Format.FormatName))
	}
	p := Probe{Container: raw.Format.FormatName}
	for _, s := range raw.Streams {
		switch s.CodecType {
		case "audio":
			if s.Index < 0 || s.Channels < 0 {
				return Probe{}, wrap(ErrUnreadable, fmt.Errorf("ffprobe: audio stream %d of %d channels", s.Index, s.Channels))
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

// probeFailure tells an unreadable file from an unfetched one, and an empty one from both.
func (m *Media) probeFailure(ctx context.Context, input string, res runResult) error {
	if res.WriteErr != nil && ctx.Err() == nil {
		return wrap(ErrUnreadable, fmt.Errorf("ffprobe: %w", res.WriteErr))
	}
	err := res.err(ctx, "ffprobe")
	// Only when ffprobe ran and refused is the file at fault; ErrUnsupported
	// (a demuxer found and refused) stays.
	if !errors.Is(err, ErrUnreadable) && (!errors.Is(err, ErrFailed) || !res.refused()) {
		return err
	}
	if m.isEmpty(ctx, input) {
		return wrap(ErrEmptyFile, errors.Unwrap(err))
	}
	return wrap(ErrUnreadable, errors.Unwrap(err))
}

// isEmpty asks for the size of the input read as raw data, for a URL or a path alike.
func (m *Media) isEmpty(ctx context.Context, input string) bool {
	in, err := m.inputArgs(input, rawData)
	if err != nil {
		return false
	}
	args := append([]string{"-hide_banner", "-loglevel", "error", "-print_format", "json", "-show_entries", "format=size"}, in...)
	out := cappedBuffer{limit: probeOutputLimit}
	if res := run(ctx, m.tools.FFprobe, args, input, &out); res.Err != nil {
		return false
	}
	var raw struct {
		Format struct {
			Size string `json:"size"`
		} `json:"format"`
	}
	return json.Unmarshal(out.Bytes(), &raw) == nil && raw.Format.Size == "0"
}

// measure demuxes the first audio stream to its end (no decoding) with the
// demuxer ffprobe found, so a file changed since is not read as another
// format, and returns its last timestamp; it stops a second past
// MaxDuration, which is refused anyway.
func (m *Media) measure(ctx context.Context, input, container string) (int64, error) {
	in, err := m.inputArgs(input, container)
	if err != nil {
		return 0, err
	}
	args := append([]string{"-nostdin", "-hide_banner", "-loglevel", "error",
		"-progress", "pipe:1", "-stats_period", "3600"}, in...)
	args = append(args, "-map", "0:a:0", "-c", "copy",
		"-t", seconds(m.cfg.MaxDuration+time.Second), "-f", "null", "-")
	out := cappedBuffer{limit: probeOutputLimit}
	res := run(ctx, m.tools.FFmpeg, args, input, &out)
	if err := res.err(ctx, "ffmpeg (measure)"); err != nil {
		if errors.Is(err, ErrFailed) && res.refused() {
			return 0, wrap(ErrUnreadable, errors.Unwrap(err))
		}
		return 0, err
	}
	var last int64 = -1
	for _, line := range strings.Split(out.String(), "\n") {
		if v, ok := strings.CutPrefix(line, "out_time_us="); ok {
			if us, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
				last = us
			}
		}
	}
	return max(last+500, 0) / 1000, nil // no packet (-1): empty
}

// parseSeconds turns "12.345000" into ms; 0 for "N/A" or nonsense.
func parseSeconds(s string) int64 {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f <= 0 || math.IsInf(f, 0) || math.IsNaN(f) || f > 1e9 {
		return 0
	}
	return int64(math.Round(f * 1000))
}

// seconds formats d for -ss and -t.
func seconds(d time.Duration) string {
	ms := d.Milliseconds()
	return fmt.Sprintf("%d.%03d", ms/1000, ms%1000)
}

// cappedBuffer refuses more than limit bytes, which ends the run.
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
