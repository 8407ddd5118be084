package app_test

import (
	"log/slog"
	"slices"
	"testing"
	"time"

	"transcriber/internal/media/ffmpeg"
)

// benchTools finds ffmpeg and ffprobe, or skips the benchmark saying
// which are missing: both benchmarks build the App as the ingest and poll
// functions do, with their media tools.
func benchTools(b *testing.B) ffmpeg.Tools {
	b.Helper()
	tools, err := ffmpeg.Locate("", "", "")
	if err != nil {
		b.Skipf("skipped: ffmpeg and ffprobe are needed on PATH (apt-get install ffmpeg): %v", err)
	}
	return tools
}

// benchLogger logs at info, the functions' default level (LOG_LEVEL), into
// the package's log scan: the benchmarks' lines are checked for secrets
// like every other test's, without paying for the debug lines the tests
// keep.
func benchLogger() *slog.Logger {
	return slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

// median is the middle of ds (the upper middle of an even count).
func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// ms is d in milliseconds, for b.ReportMetric.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
