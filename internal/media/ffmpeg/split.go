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

// Split converts input into the pieces plan.Segments outline (more than
// one) and hands each finished piece to piece in order: its real start and
// length in the source, and its OGG/Opus bytes, readable during the call.
// piece's error stops ffmpeg and comes back as it is. A level pass measures
// loudness every 100 ms for Cuts; a conversion pass encodes as Convert does
// and cuts at the first Opus packet at or after each cut (exact to 20 ms).
// Each file is removed once piece returns. Pieces are consecutive from 0
// and stop at the plan's end, never holding more than was reserved (a
// shorter recording gives fewer); on error they must be discarded.
func (m *Media) Split(ctx context.Context, input string, plan Plan, piece func(seg Segment, audio io.Reader) error) error {
	nominal, format, err := outline(plan)
	if err != nil {
		return err
	}
	last := plan.Segments[len(plan.Segments)-1]
	levels, err := m.levels(ctx, input, format, last)
	if err != nil {
		return err
	}
	cuts := Cuts(levels, levelFrameMs, nominal, cutWindow(plan.Segments[0].DurationMs), m.cfg.SegmentLength)
	return m.splitAt(ctx, input, format, cuts, last.StartMs+last.DurationMs, piece)
}

// outline returns the cuts and format of a plan of consecutive segments from 0.
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

// The level pass: the first audio stream as 8 kHz mono (speech's loudness
// is in its low frequencies), each frame's RMS dBFS printed by ametadata to
// stdout as "lavfi.astats.Overall.RMS_level=-21.078644" after a "frame:…"
// line; "-inf" is digital silence.
const (
	levelRate = 8000
	levelKey  = "lavfi.astats.Overall.RMS_level"
)

var levelFilter = fmt.Sprintf("aresample=%d,aformat=channel_layouts=mono,asetnsamples=n=%d:p=0,"+
	"astats=metadata=1:reset=1:measure_perchannel=none:measure_overall=RMS_level,"+
	"ametadata=mode=print:key=%s:file=-", levelRate, levelRate*levelFrameMs/1000, levelKey)

// levels runs the level pass up to last's end: one level a frame, 8 bytes
// per 100 ms.
func (m *Media) levels(ctx context.Context, input, format string, last Segment) ([]float64, error) {
	in, err := m.inputArgs(input, format)
	if err != nil {
		return nil, err
	}
	args := append([]string{"-nostdin", "-hide_banner", "-loglevel", "error"}, in...)
	args = append(args, "-map", "0:a:0", "-t", seconds(msDuration(last.StartMs+last.DurationMs)),
		"-af", levelFilter, "-f", "null", "-")
	expected := min(last.StartMs+last.DurationMs, m.cfg.MaxDuration.Milliseconds()) / levelFrameMs
	levels := make([]float64, 0, expected+expected/100+16)
	res := run(ctx, m.tools.FFmpeg, args, input, &lines{line: func(l []byte) error {
		levels = appendLevel(levels, l)
		return nil
	}})
	if err := res.err(ctx, "ffmpeg (levels)"); err != nil {
		return nil, err
	}
	// A build that prints otherwise would cut blind, inside words: fail.
	// Half the frames leaves room for a header that overstated.
	if got := int64(len(levels)); got < expected/2 {
		cause := fmt.Errorf("the level pass gave %d levels for about %d frames: its output is not what this code reads", got, expected)
		return nil, wrap(ErrFailed, processError("ffmpeg (levels)", cause, res.Stderr))
	}
	return levels, nil
}

// maxLine bounds an output line (theirs are under 100 bytes).
const maxLine = 512

// lines hands each line to line without its newline, dropping overlong ones.
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

func (l *lines) pending() bool { return len(l.buf) > 0 || l.overlong }

// appendLevel appends the level a line holds; a frame header holds none.
func appendLevel(levels []float64, l []byte) []float64 {
	v, ok := bytes.CutPrefix(l, []byte(levelKey+"="))
	if !ok {
		return levels
	}
	level, err := strconv.ParseFloat(string(bytes.TrimSpace(v)), 64)
	if err != nil {
		level = math.NaN() // Cuts counts it loud
	}
	return append(levels, level)
}

func pieceName(i int) string { return fmt.Sprintf("piece%04d.ogg", i) }

// splitAt runs the conversion pass up to endMs, cut at cuts, handing each
// piece over as its segment list entry comes on stdout. segment.c writes an
// entry only after the piece's file is finished and flushed, so an entry is
// a finished file. -avoid_negative_ts make_non_negative shifts the Opus
// pre-skip to 0, so the entry's times are the source's, as the levels are.
func (m *Media) splitAt(ctx context.Context, input, format string, cuts []int64, endMs int64, piece func(Segment, io.Reader) error) error {
	in, err := m.inputArgs(input, format)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "transcriber-pieces-")
	if err != nil {
		return wrap(ErrFailed, fmt.Errorf("split: a directory for the pieces: %w", err))
	}
	defer func() { _ = os.RemoveAll(dir) }()

	times := make([]string, len(cuts))
	for i, c := range cuts {
		times[i] = seconds(msDuration(c))
	}
	// The pattern is printf's: escape a % in the directory.
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
	res := run(ctx, m.tools.FFmpeg, args, input, list.lines)
	if list.pieceErr != nil {
		return list.pieceErr
	}
	if list.err == nil {
		if err := res.err(ctx, "ffmpeg (split)"); err != nil || !list.lines.pending() {
			return err
		}
		list.err = errors.New("the segment list ends inside an entry")
	}
	return wrap(ErrFailed, processError("ffmpeg (split)", list.err, res.Stderr))
}

// pieceList reads the segment list and hands each piece over.
type pieceList struct {
	dir      string
	format   string
	piece    func(Segment, io.Reader) error
	lines    *lines
	n        int   // pieces handed over
	pieceErr error // returned as it is
	err      error // the list made no sense
}

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
		_ = os.Remove(path) // /tmp is small
	}()
	if err := l.piece(seg, f); err != nil {
		l.pieceErr = err
		return err
	}
	l.n++
	return nil
}

// parse reads "piece0003.ogg,12.340000,25.020000", the next piece's.
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
		startMs = 0 // whatever its first packet says
	}
	return Segment{StartMs: startMs, DurationMs: max(endMs-startMs, 0), Format: l.format}, nil
}
