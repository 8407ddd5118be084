package ffmpeg_test

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/errs"
	"transcriber/internal/media/ffmpeg"
)

// span is a stretch of the words fixture, in seconds.
type span struct{ from, to float64 }

// The words fixture is speech in the shape the level pass sees: "words",
// tone bursts of 400, 650 and 450 ms, separated by gaps of 200, 170 and
// 230 ms, over low noise, with a longer pause a few seconds before or after
// each cut the test's plan makes (5 pieces of 17.92 s).
const (
	wordsSeconds = 89.6 // 1400 AAC frames at 16 kHz: no padding at the end
	wordsCycle   = 2.1
)

var (
	wordsInCycle = []span{{0, 0.4}, {0.6, 1.25}, {1.42, 1.87}}
	longPauses   = []span{{20.3, 21.0}, {32.6, 33.3}, {55.4, 56.2}, {68.4, 69.1}}
)

// speaking reports whether the fixture has a word at t seconds.
func speaking(t float64) bool {
	for _, p := range longPauses {
		if t >= p.from && t <= p.to {
			return false
		}
	}
	m := math.Mod(t, wordsCycle)
	for _, w := range wordsInCycle {
		if m >= w.from && m <= w.to {
			return true
		}
	}
	return false
}

// wordsFixture is the ffmpeg arguments that make the words fixture: the
// schedule above as an aevalsrc expression, encoded as AAC in M4A, as
// phones record.
func wordsFixture() []string {
	var words, pauses []string
	for _, w := range wordsInCycle {
		words = append(words, fmt.Sprintf("between(ld(0),%g,%g)", w.from, w.to))
	}
	for _, p := range longPauses {
		pauses = append(pauses, fmt.Sprintf("not(between(t,%g,%g))", p.from, p.to))
	}
	expr := fmt.Sprintf("st(0,mod(t,%g));0.5*sin(2*PI*440*t)*(%s)*%s+0.003*(2*random(1)-1)",
		wordsCycle, strings.Join(words, "+"), strings.Join(pauses, "*"))
	return []string{"-f", "lavfi", "-i", fmt.Sprintf("aevalsrc=exprs='%s':s=16000:d=%g", expr, wordsSeconds),
		"-c:a", "aac", "-b:a", "48k"}
}

// wordsConfig plans the words fixture as 5 pieces of 17.92 s, each cut
// free to move 4.48 s.
var wordsConfig = ffmpeg.Config{PieceLength: 20 * time.Second, ParallelFrom: 30 * time.Second}

// piece is what Split handed over, kept for the test to look at.
type piece struct {
	seg  ffmpeg.Segment
	path string
}

// splitWords splits the words fixture by URL and keeps each piece.
func splitWords(t *testing.T, m *ffmpeg.Media) (ffmpeg.Probe, []piece) {
	t.Helper()
	fs := mustFixtures(t)
	ctx := context.Background()
	in := fs.url("files", "words.m4a")
	p, err := m.Probe(ctx, in)
	require.NoError(t, err)
	plan, err := m.Plan(p)
	require.NoError(t, err)
	require.Len(t, plan.Segments, 5)
	dir := t.TempDir()
	var pieces []piece
	err = m.Split(ctx, in, plan, func(seg ffmpeg.Segment, audio io.Reader) error {
		path := filepath.Join(dir, fmt.Sprintf("%d.ogg", len(pieces)))
		b, err := io.ReadAll(audio)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(path, b, 0o644))
		pieces = append(pieces, piece{seg: seg, path: path})
		return nil
	})
	require.NoError(t, err)
	return p, pieces
}

func TestSplitCutsInPausesIntoPiecesThatAddUp(t *testing.T) {
	fs := mustFixtures(t)
	m := fs.media(t, wordsConfig)
	p, pieces := splitWords(t, m)
	require.Len(t, pieces, 5, "the plan's five pieces")

	var next int64
	for i, pc := range pieces {
		seg := pc.seg
		require.Equal(t, "mov", seg.Format)
		require.InDelta(t, next, seg.StartMs, 1, "piece %d starts where the one before it ended", i)
		next = seg.StartMs + seg.DurationMs
		got := mustProbeOutput(t, m, mustRead(t, pc.path))
		require.InDelta(t, seg.DurationMs, got.DurationMs, 30, "piece %d is as long as Split says", i)
		if i == 0 {
			require.Zero(t, seg.StartMs)
			continue
		}
		// The cut is in the long pause near it, with 100 ms of it on each
		// side: no word is cut, nor its start clipped.
		quiet := silenceAround(seg.StartMs)
		require.True(t, quiet.from <= longPauses[i-1].from && quiet.to >= longPauses[i-1].to,
			"cut %d at %d ms is in the silence %v, not in the long pause %v", i, seg.StartMs, quiet, longPauses[i-1])
		require.GreaterOrEqual(t, float64(seg.StartMs)/1000-quiet.from, 0.1, "cut %d: silence before it", i)
		require.GreaterOrEqual(t, quiet.to-float64(seg.StartMs)/1000, 0.1, "cut %d: silence after it", i)
	}
	require.InDelta(t, p.DurationMs, next, 50, "the pieces cover the recording")
}

// A piece's StartMs is where its audio starts in the source, to the
// millisecond: the first word of each piece is heard at its time in the
// source less the piece's start.
func TestSplitPiecesStartWhereTheySay(t *testing.T) {
	fs := mustFixtures(t)
	m := fs.media(t, wordsConfig)
	_, pieces := splitWords(t, m)
	tools := mustTools(t)
	for i, pc := range pieces[1:] {
		start := pc.seg.StartMs
		onset := start
		for !speaking(float64(onset) / 1000) {
			onset++
		}
		heard := firstSound(t, tools, pc.path)
		t.Logf("piece %d: %d ms off", i+1, start+heard-onset)
		require.InDelta(t, onset-start, heard, 3, "piece %d from %d ms: the word at %d ms in the source", i+1, start, onset)
	}
}

// silenceAround is the stretch without words around ms, to the
// millisecond; empty if a word is heard at ms.
func silenceAround(ms int64) span {
	if speaking(float64(ms) / 1000) {
		return span{}
	}
	from, to := ms, ms
	for from > 0 && !speaking(float64(from-1)/1000) {
		from--
	}
	for !speaking(float64(to+1) / 1000) {
		to++
	}
	return span{float64(from) / 1000, float64(to) / 1000}
}

var silenceEnd = regexp.MustCompile(`silence_end: ([0-9.]+)`)

// firstSound is when, in ms, the audio at path is first louder than -30 dBFS.
func firstSound(t *testing.T, tools ffmpeg.Tools, path string) int64 {
	t.Helper()
	out, err := exec.Command(tools.FFmpeg, "-nostdin", "-hide_banner", "-i", path,
		"-af", "silencedetect=noise=-30dB:d=0.05", "-f", "null", "-").CombinedOutput()
	require.NoError(t, err, "%s", out)
	m := silenceEnd.FindSubmatch(out)
	require.NotNil(t, m, "no sound after a silence in %s: %s", path, out)
	s, err := strconv.ParseFloat(string(m[1]), 64)
	require.NoError(t, err)
	return int64(math.Round(s * 1000))
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}

// The pieces live in a fresh directory under the system's temp folder
// only while they are needed: each is gone once piece has returned, and
// the directory once Split has.
func TestSplitKeepsOnlyThePiecesAtHandOnDisk(t *testing.T) {
	fs := mustFixtures(t)
	m := fs.media(t, wordsConfig)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	ctx := context.Background()
	in := fs.url("files", "words.m4a")
	p, err := m.Probe(ctx, in)
	require.NoError(t, err)
	plan, err := m.Plan(p)
	require.NoError(t, err)

	handed := 0
	err = m.Split(ctx, in, plan, func(_ ffmpeg.Segment, audio io.Reader) error {
		onDisk, err := filepath.Glob(filepath.Join(tmp, "transcriber-pieces-*", "piece*.ogg"))
		require.NoError(t, err)
		require.NotEmpty(t, onDisk, "the piece at hand is a file")
		for _, f := range onDisk {
			n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "piece"), ".ogg"))
			require.NoError(t, err)
			require.GreaterOrEqual(t, n, handed, "piece %d was handed over and is still on disk", n)
		}
		_, err = io.Copy(io.Discard, audio)
		require.NoError(t, err)
		handed++
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, 5, handed)
	left, err := os.ReadDir(tmp)
	require.NoError(t, err)
	require.Empty(t, left, "the pieces' directory is removed")
}

// An error from piece stops ffmpeg at once and comes back as it is; no
// piece is handed over after it, and nothing is left on disk.
func TestSplitStopsWhenPieceFails(t *testing.T) {
	fs := mustFixtures(t)
	m := fs.media(t, wordsConfig)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	ctx := context.Background()
	in := fs.url("files", "words.m4a")
	p, err := m.Probe(ctx, in)
	require.NoError(t, err)
	plan, err := m.Plan(p)
	require.NoError(t, err)

	uploadFailed := errs.New(errs.Unavailable, "storage_unavailable", "storage is unavailable")
	calls := 0
	err = m.Split(ctx, in, plan, func(ffmpeg.Segment, io.Reader) error {
		calls++
		if calls == 2 {
			return uploadFailed
		}
		return nil
	})
	require.ErrorIs(t, err, uploadFailed)
	require.Same(t, uploadFailed, err, "returned as it is")
	require.Equal(t, 2, calls, "no piece after the failed one")
	requireNoZombies(t)
	left, err := os.ReadDir(tmp)
	require.NoError(t, err)
	require.Empty(t, left)

	// The context's end stops it too, with the context's error.
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	err = m.Split(cctx, in, plan, func(ffmpeg.Segment, io.Reader) error { cancel(); return nil })
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, errs.Unavailable, errs.KindOf(err))
	requireNoZombies(t)
}

// An ffmpeg whose level pass prints nothing this code reads (another
// build's format) fails the split loudly, as an internal error, before any
// piece is cut: cuts made without levels could fall inside words.
func TestSplitFailsWhenTheLevelsCannotBeRead(t *testing.T) {
	fake := filepath.Join(t.TempDir(), "ffmpeg")
	script := "#!/bin/sh\necho 'frame:0 pts:0 pts_time:0'\necho 'lavfi.astats.Overall.RMS_LEVEL: -20.0'\n"
	require.NoError(t, os.WriteFile(fake, []byte(script), 0o700))
	m := ffmpeg.New(ffmpeg.Tools{FFmpeg: fake}, ffmpeg.Config{})
	plan := ffmpeg.Plan{Container: "OGG_OPUS", Segments: []ffmpeg.Segment{{0, 60_000, "ogg"}, {60_000, 60_000, "ogg"}}}
	err := m.Split(context.Background(), filepath.Join(t.TempDir(), "x.ogg"), plan, func(ffmpeg.Segment, io.Reader) error {
		t.Fatal("no piece without levels")
		return nil
	})
	require.ErrorIs(t, err, ffmpeg.ErrFailed)
	require.Equal(t, errs.Internal, errs.KindOf(err))
	require.ErrorContains(t, err, "gave 0 levels for about 1200 frames")
}

// A plan Split cannot follow is refused before anything runs.
func TestSplitRefusesAPlanItCannotFollow(t *testing.T) {
	m := ffmpeg.New(ffmpeg.Tools{FFmpeg: "/nonexistent/ffmpeg"}, ffmpeg.Config{})
	never := func(ffmpeg.Segment, io.Reader) error { t.Fatal("no piece from a refused plan"); return nil }
	for name, plan := range map[string]ffmpeg.Plan{
		"one segment":  {Container: "OGG_OPUS", Segments: []ffmpeg.Segment{{0, 1000, "ogg"}}},
		"a gap":        {Segments: []ffmpeg.Segment{{0, 1000, "ogg"}, {1500, 1000, "ogg"}}},
		"an empty one": {Segments: []ffmpeg.Segment{{0, 1000, "ogg"}, {1000, 0, "ogg"}}},
		"two formats":  {Segments: []ffmpeg.Segment{{0, 1000, "ogg"}, {1000, 1000, "mp3"}}},
	} {
		err := m.Split(context.Background(), "/tmp/x.ogg", plan, never)
		require.Error(t, err, name)
		require.NotContains(t, err.Error(), "nonexistent", "%s: nothing ran", name)
	}
}

// A recording over SegmentLength but not over ParallelFrom is cut only to
// keep every piece under SegmentLength, and Split keeps them under it
// wherever the quiet is.
func TestSplitKeepsPiecesUnderTheSegmentLength(t *testing.T) {
	fs := mustFixtures(t)
	m := fs.media(t, ffmpeg.Config{SegmentLength: 4 * time.Second})
	ctx := context.Background()
	in := fs.url("files", "long.ogg")
	p, err := m.Probe(ctx, in)
	require.NoError(t, err)
	plan, err := m.Plan(p)
	require.NoError(t, err)
	require.Len(t, plan.Segments, 3)

	var total int64
	err = m.Split(ctx, in, plan, func(seg ffmpeg.Segment, audio io.Reader) error {
		require.Equal(t, total, seg.StartMs)
		require.LessOrEqual(t, seg.DurationMs, int64(4000))
		b, err := io.ReadAll(audio)
		require.NoError(t, err)
		got := mustProbeOutput(t, m, b)
		require.InDelta(t, seg.DurationMs, got.DurationMs, 30)
		total += seg.DurationMs
		return nil
	})
	require.NoError(t, err)
	require.InDelta(t, p.DurationMs, total, 50)
}
