package ffmpeg

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/clock"
)

// BenchmarkStreaming measures the streaming conversion and reports, from one
// run (`make bench`; the first run also makes a 1-hour fixture, about 15 s,
// cached in the system's temp folder):
//
//   - stream/local-ratio: wall time of converting 1 hour of 16 kHz mono AAC
//     (M4A) by the production path (ffmpeg reads an HTTP URL served with
//     Range support, stdout piped through Convert into a byte counter)
//     over plain `ffmpeg -i local.m4a … out.ogg`;
//   - ffmpeg-maxrss-MB-10m and -1h: ffmpeg's peak resident memory for
//     10 minutes and for 1 hour of the same audio, and go-alloc-KB-10m and
//     -1h and go-mallocs-10m and -1h: what the Go side allocated during
//     each run (the test's HTTP server included, which makes a few tens of
//     KB of noise from run to run). None may grow with the input's length;
//   - voice-probe-ms: Probe and Plan of a 30-second OGG/Opus voice note by
//     URL (the header read and the audio measured), voice-convert-ms, its
//     conversion, and ffprobe-start-ms, what starting the binary alone
//     costs on this machine (Debian's ffmpeg loads a few hundred shared
//     libraries).
func BenchmarkStreaming(b *testing.B) {
	tools, err := Locate("", "", "")
	if err != nil {
		b.Skipf("skipped: ffmpeg and ffprobe are needed on PATH (apt-get install ffmpeg): %v", err)
	}
	hour := cachedFixture(b, tools, "noise-16k-mono-aac48k", 3600, "m4a",
		"-f", "lavfi", "-i", "anoisesrc=color=pink:amplitude=0.05:sample_rate=16000:duration=3600",
		"-c:a", "aac", "-b:a", "48k")
	tenMin := cachedFixture(b, tools, "noise-16k-mono-aac48k", 600, "m4a",
		"-f", "lavfi", "-i", "anoisesrc=color=pink:amplitude=0.05:sample_rate=16000:duration=600",
		"-c:a", "aac", "-b:a", "48k")
	voice := cachedFixture(b, tools, "sine-48k-mono-opus24k", 30, "ogg",
		"-f", "lavfi", "-i", "sine=frequency=220:sample_rate=48000:duration=30",
		"-c:a", "libopus", "-b:a", "24k")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeFile(w, r, filepath.Join(os.TempDir(), filepath.Base(r.URL.Path)))
	}))
	defer srv.Close()
	urlOf := func(path string) string {
		return srv.URL + "/" + filepath.Base(path) + "?X-Amz-Signature=0123456789abcdef"
	}
	m := New(tools, Config{InputOrigin: srv.URL})
	ctx := context.Background()
	clk := clock.System()
	b.ResetTimer()

	for i := 0; i < b.N; i++ {
		// (c) first, which also warms the test's HTTP server, so its
		// first-request costs do not land in (b).
		const rounds = 5
		start := clk.Now()
		for r := 0; r < rounds; r++ {
			require.NoError(b, exec.CommandContext(ctx, tools.FFprobe, "-hide_banner", "-version").Run())
		}
		startup := clk.Now().Sub(start) / rounds
		start = clk.Now()
		for r := 0; r < rounds; r++ {
			p, err := m.Probe(ctx, urlOf(voice))
			require.NoError(b, err)
			_, err = m.Plan(p)
			require.NoError(b, err)
		}
		probe := clk.Now().Sub(start) / rounds
		start = clk.Now()
		for r := 0; r < rounds; r++ {
			require.NoError(b, m.Convert(ctx, urlOf(voice), Segment{DurationMs: 30_000}, io.Discard))
		}
		conv := clk.Now().Sub(start) / rounds

		// (b): ten minutes, then an hour, by the streaming path.
		rss10m, _, alloc10m := convertCounted(b, m, urlOf(tenMin), 600_000)
		start = clk.Now()
		rss1h, out1h, alloc1h := convertCounted(b, m, urlOf(hour), 3_600_000)
		stream := clk.Now().Sub(start)

		// (a): the same hour by plain ffmpeg from the local file.
		out := filepath.Join(b.TempDir(), "out.ogg")
		args, err := m.convertArgs(hour, Segment{DurationMs: 3_600_000}, false, out)
		require.NoError(b, err)
		start = clk.Now()
		local, err := exec.CommandContext(ctx, tools.FFmpeg, args...).CombinedOutput()
		plain := clk.Now().Sub(start)
		require.NoError(b, err, "%s", local)

		b.ReportMetric(stream.Seconds(), "stream-s-1h")
		b.ReportMetric(plain.Seconds(), "local-s-1h")
		b.ReportMetric(stream.Seconds()/plain.Seconds(), "stream/local-ratio")
		b.ReportMetric(float64(rss10m)/1e6, "ffmpeg-maxrss-MB-10m")
		b.ReportMetric(float64(rss1h)/1e6, "ffmpeg-maxrss-MB-1h")
		b.ReportMetric(float64(alloc10m.bytes)/1e3, "go-alloc-KB-10m")
		b.ReportMetric(float64(alloc1h.bytes)/1e3, "go-alloc-KB-1h")
		b.ReportMetric(float64(alloc10m.count), "go-mallocs-10m")
		b.ReportMetric(float64(alloc1h.count), "go-mallocs-1h")
		b.ReportMetric(float64(out1h)/1e6, "ogg-MB-1h")
		b.ReportMetric(ms(startup), "ffprobe-start-ms")
		b.ReportMetric(ms(probe), "voice-probe-ms")
		b.ReportMetric(ms(conv), "voice-convert-ms")
	}
}

// allocs is what the Go side allocated during a run.
type allocs struct{ bytes, count uint64 }

// convertCounted converts input by the streaming path into a byte counter
// and returns ffmpeg's peak resident bytes, the bytes out and what the Go
// side allocated meanwhile.
func convertCounted(b *testing.B, m *Media, input string, durationMs int64) (rss, out int64, a allocs) {
	b.Helper()
	var before, after runtime.MemStats
	var n counter
	defer watchRSS(&rss)()
	runtime.GC()
	runtime.ReadMemStats(&before)
	err := m.Convert(context.Background(), input, Segment{DurationMs: durationMs}, &n)
	runtime.ReadMemStats(&after)
	require.NoError(b, err)
	return rss, int64(n), allocs{bytes: after.TotalAlloc - before.TotalAlloc, count: after.Mallocs - before.Mallocs}
}

// watchRSS keeps in rss the peak resident bytes of the last process run
// (0 off Linux) until the returned stop.
func watchRSS(rss *int64) (stop func()) {
	ranHook = func(ps *os.ProcessState) { *rss = maxRSS(ps) }
	return func() { ranHook = nil }
}

type counter int64

func (c *counter) Write(p []byte) (int, error) { *c += counter(len(p)); return len(p), nil }

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 }

// cachedFixture returns the path of a fixture made by ffmpeg from args,
// kept in the system's temp folder under a name that holds its parameters,
// so later runs reuse it. It is written under a temporary name and renamed,
// so an interrupted run never leaves half a file behind.
func cachedFixture(b *testing.B, tools Tools, kind string, seconds int, ext string, args ...string) string {
	b.Helper()
	path := filepath.Join(os.TempDir(), fmt.Sprintf("transcriber-bench-%s-%ds.%s", kind, seconds, ext))
	if fi, err := os.Stat(path); err == nil && fi.Size() > 0 {
		return path
	}
	tmp := strings.TrimSuffix(path, "."+ext) + fmt.Sprintf(".part%d.%s", os.Getpid(), ext)
	full := append([]string{"-nostdin", "-hide_banner", "-loglevel", "error", "-y"}, args...)
	out, err := exec.Command(tools.FFmpeg, append(full, tmp)...).CombinedOutput()
	require.NoError(b, err, "make %s: %s", path, out)
	require.NoError(b, os.Rename(tmp, path))
	return path
}

// BenchmarkSplit measures Split on the hour of 16 kHz mono AAC (M4A) that
// BenchmarkStreaming converts, read by URL as in production, against
// converting it whole with Convert, and reports from one run (`make bench`):
//
//   - levels-s-1h, pieces-s-1h, convert-s-1h: wall time of the level pass,
//     of the conversion pass into the plan's 12 pieces (each read to its
//     end and dropped) and of one Convert of the whole hour;
//   - split/convert-ratio: both passes over the one Convert, what cutting at
//     quiet moments costs; levels/convert-ratio: the level pass alone;
//   - first-piece-s: when the first piece was handed over, from the start of
//     the conversion pass: what the pipeline waits before it can submit;
//   - ffmpeg-maxrss-MB-levels, -pieces and -convert: ffmpeg's peak resident
//     memory in each run; go-alloc-KB-levels: what the Go side allocated in
//     the level pass, about the levels themselves (36 000 frames of 8 bytes,
//     288 KB) and nothing that grows with the input besides;
//   - piece-MB-max: the largest piece, what the disk holds at once besides
//     the one being written.
func BenchmarkSplit(b *testing.B) {
	tools, err := Locate("", "", "")
	if err != nil {
		b.Skipf("skipped: ffmpeg and ffprobe are needed on PATH (apt-get install ffmpeg): %v", err)
	}
	hour := cachedFixture(b, tools, "noise-16k-mono-aac48k", 3600, "m4a",
		"-f", "lavfi", "-i", "anoisesrc=color=pink:amplitude=0.05:sample_rate=16000:duration=3600",
		"-c:a", "aac", "-b:a", "48k")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeFile(w, r, filepath.Join(os.TempDir(), filepath.Base(r.URL.Path)))
	}))
	defer srv.Close()
	in := srv.URL + "/" + filepath.Base(hour) + "?X-Amz-Signature=0123456789abcdef"
	m := New(tools, Config{InputOrigin: srv.URL})
	ctx := context.Background()
	clk := clock.System()
	p, err := m.Probe(ctx, in)
	require.NoError(b, err)
	plan, err := m.Plan(p)
	require.NoError(b, err)
	require.Len(b, plan.Segments, 12)
	nominal, format, err := outline(plan)
	require.NoError(b, err)
	b.ResetTimer()

	for i := 0; i < b.N; i++ {
		var before, after runtime.MemStats
		var levelsRSS, piecesRSS, convertRSS int64
		stop := watchRSS(&levelsRSS)
		runtime.GC()
		runtime.ReadMemStats(&before)
		start := clk.Now()
		levels, err := m.levels(ctx, in, format, plan.Segments[len(plan.Segments)-1])
		levelTime := clk.Now().Sub(start)
		runtime.ReadMemStats(&after)
		stop()
		require.NoError(b, err)
		require.InDelta(b, 36_000, len(levels), 2)

		cuts := Cuts(levels, levelFrameMs, nominal, cutWindow(plan.Segments[0].DurationMs), m.cfg.SegmentLength)
		var first time.Duration
		var largest int64
		pieces := 0
		stop = watchRSS(&piecesRSS)
		start = clk.Now()
		err = m.splitAt(ctx, in, format, cuts, 3_600_000, func(_ Segment, audio io.Reader) error {
			if pieces == 0 {
				first = clk.Now().Sub(start)
			}
			pieces++
			n, err := io.Copy(io.Discard, audio)
			largest = max(largest, n)
			return err
		})
		pieceTime := clk.Now().Sub(start)
		stop()
		require.NoError(b, err)
		require.Equal(b, 12, pieces)

		stop = watchRSS(&convertRSS)
		start = clk.Now()
		err = m.Convert(ctx, in, Segment{Format: format}, io.Discard)
		convertTime := clk.Now().Sub(start)
		stop()
		require.NoError(b, err)

		b.ReportMetric(levelTime.Seconds(), "levels-s-1h")
		b.ReportMetric(pieceTime.Seconds(), "pieces-s-1h")
		b.ReportMetric(convertTime.Seconds(), "convert-s-1h")
		b.ReportMetric((levelTime+pieceTime).Seconds()/convertTime.Seconds(), "split/convert-ratio")
		b.ReportMetric(levelTime.Seconds()/convertTime.Seconds(), "levels/convert-ratio")
		b.ReportMetric(first.Seconds(), "first-piece-s")
		b.ReportMetric(float64(levelsRSS)/1e6, "ffmpeg-maxrss-MB-levels")
		b.ReportMetric(float64(piecesRSS)/1e6, "ffmpeg-maxrss-MB-pieces")
		b.ReportMetric(float64(convertRSS)/1e6, "ffmpeg-maxrss-MB-convert")
		b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/1e3, "go-alloc-KB-levels")
		b.ReportMetric(float64(largest)/1e6, "piece-MB-max")
	}
}
