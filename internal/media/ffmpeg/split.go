package ffmpeg

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Split converts the recording at input into the pieces plan.Segments
// outline (len > 1), moving each cut to the quietest moment near it, and
// calls piece for each finished piece, in order, with the piece's actual
// start and length in the source (StartMs, DurationMs, Format as in the
// plan) and a reader of its OGG/Opus bytes, valid only during the call.
// An error from piece stops ffmpeg and is returned as it is. Other errors
// are Convert's (ErrSourceUnavailable, ErrUnreadable, ErrUnsupported,
// ErrInputRefused, ErrFailed, ctx's error).
//
// It runs ffmpeg twice on the input, which is read with the plan's Format
// under the same allow-lists as Convert's. The level pass decodes the first
// audio stream and measures its loudness every 100 ms; Cuts chooses the
// cuts from that, each within a quarter of a piece (at most a minute) of
// where the plan put it, no piece longer than SegmentLength. The
// conversion pass encodes as Convert does, in one run, and ffmpeg's
// segment muxer starts a new piece at the first Opus packet at or after
// each cut: a cut is exact to the 20 ms Opus frame, and the start and end
// it reports for each piece are in the source's time, which the levels
// are in too. Pieces go to a fresh directory under the system's temp
// folder, each removed as soon as piece returns: the callback can upload
// one while ffmpeg encodes the next, and the disk holds about two pieces
// (1.2 MB per 5 minutes at 32 kbit/s) unless piece is slower than the
// encoder, and never more than the converted recording (86 MB for 6 h).
//
// The pieces handed over are consecutive: each starts where the one
// before it ended, the first at 0. Both passes stop at the plan's end, the
// length Probe found, as Convert does: a recording longer than that is cut
// there, so what the pieces hold is never more than what was planned (and
// reserved) for them. A recording shorter than its header said gives
// fewer pieces than the plan. On error, the pieces already
// handed over may be cut short (a connection lost for good reads as the
// end of the input until ffmpeg has exited) and must be discarded.
func (m *Media) Split(ctx context.Context, input string, plan Plan, piece func(seg Segment, audio io.Reader) error) error {
	nominal, format, err := outline(plan)
	if err != nil {
		return err
	}
	last := plan.Segments[len(plan.Segments)-1]
	levels, _, err := m.levels(ctx, input, format, last)
	if err != nil {
		return err
	}
	cuts := Cuts(levels, levelFrameMs, nominal, cutWindow(plan.Segments[0].DurationMs), m.cfg.SegmentLength)
	_, err = m.splitAt(ctx, input, format, cuts, last.StartMs+last.DurationMs, piece)
	return err
}

// outline checks that plan is one Split can follow (more than one segment,
// converted, consecutive from 0) and returns its cuts and its format.
func outline(plan Plan) (nominal []int64, format string, err error) {
	if len(plan.Segments) < 2 {
		return nil, "", fmt.Errorf("split: a plan of %d segments is not one to split", len(plan.Segments))
	}
	format = plan.Segments[0].Format
	var end int64
	for i, s := range plan.Segments {
		if s.StartMs != end || s.DurationMs <= 0 || s.Format != format {
			return nil, "", fmt.Errorf("split: segment %d %+v does not follow the one before it", i, s)
		}
		if i > 0 {
			nominal = append(nominal, s.StartMs)
		}
		end += s.DurationMs
	}
	return nominal, format, nil
}

// The level pass: the first audio stream decoded, downmixed to mono and
// resampled to 8 kHz (speech's loudness is in its low frequencies, and the
// fewer samples the faster), in frames of levelFrameMs, each frame's RMS
// level in dBFS put in its metadata by astats (reset every frame) and
// printed by ametadata to ffmpeg's stdout ("-": libavfilter's f_metadata.c
// opens pipe:1 for it), as two lines a frame:
//
//	frame:12   pts:9600    pts_time:1.2
//	lavfi.astats.Overall.RMS_level=-21.078644
//
// That is ffmpeg 5.1's output; later f_metadata.c (METADATA_PRINT) pads
// pts_time with spaces, and only the level lines are read. "-inf" is
// digital silence. The last frame may be shorter (asetnsamples p=0 does
// not pad it).
const (
	levelRate = 8000
	levelKey  = "lavfi.astats.Overall.RMS_level"
)

var levelFilter = fmt.Sprintf("aresample=%d,aformat=channel_layouts=mono,asetnsamples=n=%d:p=0,"+
	"astats=metadata=1:reset=1:measure_perchannel=none:measure_overall=RMS_level,"+
	"ametadata=mode=print:key=%s:file=-", levelRate, levelRate*levelFrameMs/1000, levelKey)

// levels runs the level pass over input (read with format) up to the end
// of last, the plan's last segment, and returns one level a frame, parsed
// as ffmpeg prints them: the memory is the slice, 8 bytes per 100 ms,
// sized from last.
func (m *Media) levels(ctx context.Context, input, format string, last Segment) ([]float64, Stats, error) {
	in, err := m.inputArgs(input, format)
	if err != nil {
		return nil, Stats{}, err
	}
	args := append([]string{"-nostdin", "-hide_banner", "-loglevel", "error"}, in...)
	args = append(args, "-map", "0:a:0", "-t", seconds(msDuration(last.StartMs+last.DurationMs)),
		"-af", levelFilter, "-f", "null", "-")
	expected := min(last.StartMs+last.DurationMs, m.cfg.MaxDuration.Milliseconds()) / levelFrameMs
	p := &levelParser{levels: make([]float64, 0, expected+expected/100+16)}
	res := run(ctx, m.tools.FFmpeg, args, input, p, m.cfg.StderrLimit)
	st := Stats{BytesOut: res.Written, MaxRSSBytes: res.MaxRSS, Stderr: res.Stderr}
	if res.Err != nil || res.WriteErr != nil {
		return nil, st, res.failure(ctx, "ffmpeg (levels)")
	}
	if inputReadBroke(res.Stderr) {
		cause := &processError{tool: "ffmpeg (levels)", err: errors.New("reading the input broke off"), stderr: res.Stderr}
		return nil, st, wrap(ErrSourceUnavailable, cause, "")
	}
	// The lines read are those of the ffmpeg builds this was tried with
	// (5.1 here; the packaged 7.0.2 is read from its source, not run). A
	// build that prints them otherwise gives no levels, and cuts made
	// blind could fall inside words: fail loudly instead. Half the frames
	// leaves room for a header that overstated the length.
	if got := int64(len(p.levels)); got < expected/2 {
		cause := &processError{tool: "ffmpeg (levels)",
			err: fmt.Errorf("the level pass gave %d levels for about %d frames: its output is not what this code reads", got, expected), stderr: res.Stderr}
		return nil, st, wrap(ErrFailed, cause, "")
	}
	return p.levels, st, nil
}

// maxLine bounds a line of ffmpeg's level or segment list output: theirs
// are under 100 bytes, and a longer one is dropped rather than kept.
const maxLine = 512

// lines splits what is written to it into lines, each handed to line
// without its newline; a line longer than maxLine is dropped whole.
type lines struct {
	buf      []byte
	overlong bool
	line     func([]byte) error
}

func (l *lines) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			l.keep(p)
			break
		}
		l.keep(p[:i])
		p = p[i+1:]
		if !l.overlong {
			if err := l.line(l.buf); err != nil {
				return 0, err
			}
		}
		l.buf, l.overlong = l.buf[:0], false
	}
	return n, nil
}

func (l *lines) keep(p []byte) {
	if l.overlong || len(l.buf)+len(p) > maxLine {
		l.overlong = true
		return
	}
	l.buf = append(l.buf, p...)
}

// pending reports whether a line was begun and not ended.
func (l *lines) pending() bool { return len(l.buf) > 0 || l.overlong }

// levelParser keeps the level of each frame ametadata prints, in order.
type levelParser struct {
	levels []float64
	lines  *lines
}

func (p *levelParser) Write(b []byte) (int, error) {
	if p.lines == nil {
		p.lines = &lines{line: p.line}
	}
	return p.lines.Write(b)
}

func (p *levelParser) line(l []byte) error {
	v, ok := bytes.CutPrefix(l, []byte(levelKey+"="))
	if !ok {
		return nil // the frame's header line
	}
	level, err := strconv.ParseFloat(string(bytes.TrimSpace(v)), 64)
	if err != nil || math.IsNaN(level) {
		level = math.NaN() // unknown, which Cuts counts as loud
	}
	p.levels = append(p.levels, level)
	return nil
}

// pieceName is the name of the i-th piece in the pieces' directory.
func pieceName(i int) string { return fmt.Sprintf("piece%04d.ogg", i) }

// splitAt runs the conversion pass: input (read with format) up to endMs
// encoded as Convert encodes it, cut by the segment muxer at cuts (ms,
// ascending), each piece handed to piece as its entry comes in the segment
// list.
//
// The list is ffmpeg's stdout. libavformat's segment.c (segment_end) writes
// a piece's entry only after av_write_trailer has finished the piece's file
// and flushed it (mux.c), and flushes the list after each entry, so an
// entry is a finished file, read while ffmpeg encodes the next one. The
// entry is "name,start,end" in seconds of the output's time, where the
// first packet is at 0: -avoid_negative_ts make_non_negative shifts the
// encoder's priming (the first packet starts 312 samples early, the Opus
// pre-skip) to 0, so a packet's time is that of the first sample a
// decoder keeps from it, the time of the source that the level pass
// measured too.
func (m *Media) splitAt(ctx context.Context, input, format string, cuts []int64, endMs int64, piece func(Segment, io.Reader) error) (Stats, error) {
	in, err := m.inputArgs(input, format)
	if err != nil {
		return Stats{}, err
	}
	dir, err := os.MkdirTemp("", "transcriber-pieces-")
	if err != nil {
		return Stats{}, wrap(ErrFailed, fmt.Errorf("split: a directory for the pieces: %w", err), "")
	}
	defer func() { _ = os.RemoveAll(dir) }()

	times := make([]string, len(cuts))
	for i, c := range cuts {
		times[i] = seconds(msDuration(c))
	}
	// The segment muxer names the pieces by a printf pattern: a % in the
	// directory's name must not be taken for one.
	pattern := "file:" + strings.ReplaceAll(dir, "%", "%%") + string(filepath.Separator) + "piece%04d.ogg"
	args := append([]string{"-nostdin", "-hide_banner", "-loglevel", "error"}, in...)
	args = append(args, m.opusArgs(false)...)
	args = append(args, "-t", seconds(msDuration(endMs)),
		"-f", "segment", "-segment_format", "ogg", "-segment_times", strings.Join(times, ","),
		"-reset_timestamps", "1", "-avoid_negative_ts", "make_non_negative",
		"-segment_list", "pipe:1", "-segment_list_type", "csv",
		pattern)

	list := &pieceList{dir: dir, format: format, piece: piece}
	list.lines = &lines{line: list.entry}
	res := run(ctx, m.tools.FFmpeg, args, input, list.lines, m.cfg.StderrLimit)
	st := Stats{BytesOut: list.written, MaxRSSBytes: res.MaxRSS, Stderr: res.Stderr}
	switch {
	case list.pieceErr != nil:
		return st, list.pieceErr
	case list.err != nil:
		return st, wrap(ErrFailed, &processError{tool: "ffmpeg (split)", err: list.err, stderr: res.Stderr}, "")
	case res.Err != nil || res.WriteErr != nil:
		return st, res.failure(ctx, "ffmpeg (split)")
	case inputReadBroke(res.Stderr):
		cause := &processError{tool: "ffmpeg (split)", err: errors.New("reading the input broke off"), stderr: res.Stderr}
		return st, wrap(ErrSourceUnavailable, cause, "")
	case list.lines.pending():
		return st, wrap(ErrFailed, &processError{tool: "ffmpeg (split)", err: errors.New("the segment list ends inside an entry"), stderr: res.Stderr}, "")
	}
	return st, nil
}

// pieceList reads the segment list and hands each piece over.
type pieceList struct {
	dir      string
	format   string
	piece    func(Segment, io.Reader) error
	lines    *lines
	n        int   // pieces handed over
	written  int64 // their bytes
	pieceErr error // piece's error, returned as it is
	err      error // the list made no sense
}

// entry hands over the piece one line of the list names.
func (l *pieceList) entry(line []byte) error {
	seg, err := l.parse(string(line))
	if err != nil {
		l.err = err
		return err
	}
	path := filepath.Join(l.dir, pieceName(l.n))
	f, err := os.Open(path)
	if err != nil {
		l.err = fmt.Errorf("open piece %d: %w", l.n, err)
		return l.err
	}
	defer func() {
		_ = f.Close()
		_ = os.Remove(path) // /tmp is small: a piece goes as soon as it is handed over
	}()
	if fi, err := f.Stat(); err == nil {
		l.written += fi.Size()
	}
	if err := l.piece(seg, f); err != nil {
		l.pieceErr = err
		return err
	}
	l.n++
	return nil
}

// parse reads "piece0003.ogg,12.340000,25.020000" into the piece's
// Segment; the name must be the next piece's.
func (l *pieceList) parse(line string) (Segment, error) {
	fields := strings.Split(line, ",")
	if len(fields) != 3 || filepath.Base(fields[0]) != pieceName(l.n) {
		return Segment{}, fmt.Errorf("segment list entry %q, expected one for %s", line, pieceName(l.n))
	}
	start, err1 := strconv.ParseFloat(fields[1], 64)
	end, err2 := strconv.ParseFloat(fields[2], 64)
	if err := errors.Join(err1, err2); err != nil || math.IsNaN(start) || math.IsNaN(end) || math.IsInf(start, 0) || math.IsInf(end, 0) {
		return Segment{}, fmt.Errorf("segment list entry %q: times do not parse", line)
	}
	startMs, endMs := int64(math.Round(start*1000)), int64(math.Round(end*1000))
	if l.n == 0 {
		startMs = 0 // the first piece starts with the recording, whatever its first packet says
	}
	return Segment{StartMs: startMs, DurationMs: max(endMs-startMs, 0), Format: l.format}, nil
}
