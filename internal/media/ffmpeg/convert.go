package ffmpeg

import (
	"context"
	"errors"
	"fmt"
	"io"
)

// Stats describe one conversion, for the logs and the benchmark.
type Stats struct {
	BytesOut    int64  // bytes of OGG/Opus written to the writer
	MaxRSSBytes int64  // ffmpeg's peak resident memory; 0 where the platform does not say
	Stderr      string // the tail of what ffmpeg printed, scrubbed of the input; warnings of a run that succeeded
}

// Convert writes seg of input as OGG/Opus to w. See ConvertStats.
func (m *Media) Convert(ctx context.Context, input string, seg Segment, w io.Writer) error {
	_, err := m.ConvertStats(ctx, input, seg, w)
	return err
}

// ConvertStats writes seg of input (an http(s) URL on Config.InputOrigin
// or a local path) as OGG/Opus to w, and tells how the run went. The input
// is read with seg.Format, the demuxer Probe found, when Plan set it.
//
// ffmpeg reads the input itself (a URL with HTTP Range requests where it
// seeks) and writes to its stdout, which is copied to w through one fixed
// buffer: a stream, with no temporary file, in memory that does not grow
// with the input. It takes the first audio stream only, keeps mono and
// stereo as they are and downmixes more channels to stereo, and encodes
// Opus at Config.Bitrate. The cut is accurate: -ss before -i seeks the
// input and, since the audio is decoded, drops what precedes the start;
// -t after -i ends the output at the segment's length.
//
// If w fails, ffmpeg is killed and w's error is returned as it is, so its
// kind is kept. If ctx ends, ffmpeg is killed and the context's error is
// returned. Otherwise errors: ErrSourceUnavailable (reading the input
// broke on the way, even if ffmpeg itself exited cleanly), ErrUnreadable
// (ffmpeg says the data is not media it can decode), ErrUnsupported (the
// input is not in seg.Format or another accepted format), ErrInputRefused
// (a URL elsewhere: nothing was run), ErrFailed (anything else). On error, what was already written to w is incomplete and must be
// discarded.
func (m *Media) ConvertStats(ctx context.Context, input string, seg Segment, w io.Writer) (Stats, error) {
	return m.convert(ctx, input, seg, false, w)
}

// ConvertMono is Convert with every channel mixed down to one: what
// SpeechKit's synchronous recognition takes. At Config.Bitrate's default
// of 32 kbit/s, 30 s of it is about 120 KB, far under that API's 1 MB.
func (m *Media) ConvertMono(ctx context.Context, input string, seg Segment, w io.Writer) error {
	_, err := m.convert(ctx, input, seg, true, w)
	return err
}

func (m *Media) convert(ctx context.Context, input string, seg Segment, mono bool, w io.Writer) (Stats, error) {
	if seg.StartMs < 0 || seg.DurationMs < 0 {
		return Stats{}, fmt.Errorf("convert: invalid segment %+v", seg)
	}
	args, err := m.convertArgsFor(input, seg, mono, "pipe:1")
	if err != nil {
		return Stats{}, err
	}
	res := run(ctx, m.tools.FFmpeg, args, input, w, m.cfg.StderrLimit)
	st := Stats{BytesOut: res.Written, MaxRSSBytes: res.MaxRSS, Stderr: res.Stderr}
	if res.Err != nil || res.WriteErr != nil {
		return st, res.failure(ctx, "ffmpeg")
	}
	if inputReadBroke(res.Stderr) {
		cause := &processError{tool: "ffmpeg", err: errors.New("reading the input broke off"), stderr: res.Stderr}
		return st, wrap(ErrSourceUnavailable, cause, "")
	}
	return st, nil
}

// convertArgs is ffmpeg's command line for seg of input, written to out.
func (m *Media) convertArgs(input string, seg Segment, out string) ([]string, error) {
	return m.convertArgsFor(input, seg, false, out)
}

// convertArgsFor is convertArgs, mixed down to one channel with mono.
func (m *Media) convertArgsFor(input string, seg Segment, mono bool, out string) ([]string, error) {
	in, err := m.inputArgs(input, seg.Format)
	if err != nil {
		return nil, err
	}
	args := []string{"-nostdin", "-hide_banner", "-loglevel", "error"}
	if seg.StartMs > 0 {
		args = append(args, "-ss", seconds(msDuration(seg.StartMs)))
	}
	args = append(args, in...)
	if seg.DurationMs > 0 {
		args = append(args, "-t", seconds(msDuration(seg.DurationMs)))
	}
	args = append(args, m.opusArgs(mono)...)
	return append(args, "-f", "ogg", out), nil
}

// opusArgs are the output options of every conversion, Convert's and
// Split's: what is taken from the input, and how it is encoded. With mono
// every channel is mixed down to one. The timestamps are made anew from
// the samples (asetpts=N/SR/TB): an input whose timestamps lie (halved,
// say) would otherwise give granule positions that say less than the
// packets hold, and SpeechKit may bill by either; so the Ogg's length,
// its packets' and -t's cut are one.
func (m *Media) opusArgs(mono bool) []string {
	layouts := "aformat=channel_layouts=mono|stereo" // mono and stereo as they are, more channels downmixed
	if mono {
		layouts = "aformat=channel_layouts=mono"
	}
	layouts += ",asetpts=N/SR/TB"
	return []string{
		"-map", "0:a:0", // the first audio stream; video, subtitles and data are left behind
		"-map_metadata", "-1", "-map_chapters", "-1", // the sender's tags stay out of what is submitted
		"-af", layouts,
		"-c:a", "libopus", "-b:a", m.cfg.Bitrate,
	}
}
