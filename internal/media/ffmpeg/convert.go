package ffmpeg

import (
	"context"
	"fmt"
	"io"
)

// Convert streams seg of input as OGG/Opus to w in bounded memory: the
// first audio stream, more than two channels downmixed to stereo, cut
// accurately (-ss before -i seeks and drops the decoded lead; -t ends it).
// w's error comes back as it is; on any error what w got must be discarded.
func (m *Media) Convert(ctx context.Context, input string, seg Segment, w io.Writer) error {
	return m.convert(ctx, input, seg, false, w)
}

// ConvertMono is Convert mixed down to one channel, for synchronous
// recognition (30 s at 32 kbit/s is ~120 KB, under its 1 MB).
func (m *Media) ConvertMono(ctx context.Context, input string, seg Segment, w io.Writer) error {
	return m.convert(ctx, input, seg, true, w)
}

func (m *Media) convert(ctx context.Context, input string, seg Segment, mono bool, w io.Writer) error {
	if seg.StartMs < 0 || seg.DurationMs < 0 {
		return fmt.Errorf("convert: invalid segment %+v", seg)
	}
	args, err := m.convertArgs(input, seg, mono, "pipe:1")
	if err != nil {
		return err
	}
	return run(ctx, m.tools.FFmpeg, args, input, w).err(ctx, "ffmpeg")
}

// convertArgs is ffmpeg's command line for seg of input, written to out.
func (m *Media) convertArgs(input string, seg Segment, mono bool, out string) ([]string, error) {
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

// opusArgs are every conversion's output options. asetpts=N/SR/TB makes
// timestamps anew from the samples: lying input timestamps would give
// granules that say less than the packets hold, and SpeechKit may bill by
// either.
func (m *Media) opusArgs(mono bool) []string {
	layouts := "aformat=channel_layouts=mono|stereo"
	if mono {
		layouts = "aformat=channel_layouts=mono"
	}
	layouts += ",asetpts=N/SR/TB"
	return []string{
		"-map", "0:a:0",
		"-map_metadata", "-1", "-map_chapters", "-1", // the sender's tags stay out
		"-af", layouts,
		"-c:a", "libopus", "-b:a", DefaultBitrate,
	}
}
