package ffmpeg

import (
	"errors"
	"io"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The level pass's output as ffmpeg 5.1 prints it and as 7.0 does (pts_time
// padded), cut anywhere by the pipe, gives one level a frame in order.
func TestLevelParserReadsWhatAmetadataPrints(t *testing.T) {
	out := "frame:0    pts:0       pts_time:0\n" +
		"lavfi.astats.Overall.RMS_level=-21.559404\n" +
		"frame:1    pts:800     pts_time:0.1    \n" +
		"lavfi.astats.Overall.RMS_level=-inf\n" +
		"frame:2    pts:1600    pts_time:0.2\n" +
		"lavfi.astats.Overall.RMS_level=nan\n" +
		"frame:3    pts:2400    pts_time:0.3\n" +
		"lavfi.astats.Overall.RMS_level=-60.5 \n" +
		"something else=1\n" +
		"lavfi.astats.Overall.RMS_level=" + strings.Repeat("9", 2*maxLine) + "\n" +
		"frame:4    pts:3200    pts_time:0.4\n" +
		"lavfi.astats.Overall.RMS_level=what\n"
	for _, chunk := range []int{1, 7, 64, len(out)} {
		var levels []float64
		p := &lines{line: func(l []byte) error { levels = appendLevel(levels, l); return nil }}
		for rest := out; rest != ""; {
			n := min(chunk, len(rest))
			w, err := p.Write([]byte(rest[:n]))
			require.NoError(t, err)
			require.Equal(t, n, w)
			rest = rest[n:]
		}
		require.Len(t, levels, 5, "chunks of %d: one level a frame, the overlong line dropped", chunk)
		require.InDelta(t, -21.559404, levels[0], 1e-9)
		require.True(t, math.IsInf(levels[1], -1), "digital silence")
		require.True(t, math.IsNaN(levels[2]), "unknown")
		require.InDelta(t, -60.5, levels[3], 1e-9)
		require.True(t, math.IsNaN(levels[4]), "what does not parse is unknown, and keeps the frames in step")
	}
}

func TestLevelFilter(t *testing.T) {
	require.Equal(t, "aresample=8000,aformat=channel_layouts=mono,asetnsamples=n=800:p=0,"+
		"astats=metadata=1:reset=1:measure_perchannel=none:measure_overall=RMS_level,"+
		"ametadata=mode=print:key=lavfi.astats.Overall.RMS_level:file=-", levelFilter,
		"frames of 800 samples at 8 kHz: levelFrameMs")
}

func TestPieceListReadsTheSegmentList(t *testing.T) {
	l := &pieceList{format: "mov"}
	seg, err := l.parse("piece0000.ogg,0.006500,20.406500")
	require.NoError(t, err)
	require.Equal(t, Segment{StartMs: 0, DurationMs: 20407, Format: "mov"}, seg, "the first piece starts at 0")
	l.n = 1
	seg, err = l.parse("piece0001.ogg,20.406500,35.620000")
	require.NoError(t, err)
	require.Equal(t, Segment{StartMs: 20407, DurationMs: 15213, Format: "mov"}, seg)
	l.n = 2
	_, err = l.parse("/tmp/transcriber-pieces-1/piece0002.ogg,35.620000,40.000000")
	require.NoError(t, err, "a full path names the piece too")
	for _, bad := range []string{
		"piece0003.ogg,35.620000,40.000000", // not the next piece
		"piece0002.ogg,35.62",
		"piece0002.ogg,x,40",
		"piece0002.ogg,nan,40",
		`"piece0002,.ogg",1,2`,
	} {
		_, err := l.parse(bad)
		require.Error(t, err, bad)
	}
}

// A line of the segment list comes whole to the callback however the
// pipe cuts it, and the callback's error stops the writes.
func TestLinesHandsOverWholeLines(t *testing.T) {
	var got []string
	stop := errors.New("stop")
	l := &lines{line: func(b []byte) error {
		got = append(got, string(b))
		if string(b) == "three" {
			return stop
		}
		return nil
	}}
	_, err := io.WriteString(l, "one\ntw")
	require.NoError(t, err)
	require.True(t, l.pending())
	_, err = io.WriteString(l, "o\n")
	require.NoError(t, err)
	require.False(t, l.pending())
	_, err = io.WriteString(l, "three\nfour\n")
	require.ErrorIs(t, err, stop)
	require.Equal(t, []string{"one", "two", "three"}, got)
}
