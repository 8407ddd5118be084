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

// medianBy is the median of f over ps: one phase of several runs.
func medianBy[T any](ps []T, f func(T) time.Duration) time.Duration {
	ds := make([]time.Duration, len(ps))
	for i, p := range ps {
		ds[i] = f(p)
	}
	return median(ds)
}

// first is the first mark of what on a timeline, and how many there are.
func first(marks []mark, what string) (mark, int) {
	var m mark
	n := 0
	for _, x := range marks {
		if x.what == what {
			if n == 0 {
				m = x
			}
			n++
		}
	}
	return m, n
}

// last is the last mark of what on a timeline.
func last(marks []mark, what string) (mark, bool) {
	for i := len(marks) - 1; i >= 0; i-- {
		if marks[i].what == what {
			return marks[i], true
		}
	}
	return mark{}, false
}

// sumOf is the time the marks of what took, together.
func sumOf(marks []mark, what string) time.Duration {
	var d time.Duration
	for _, m := range marks {
		if m.what == what {
			d += m.end.Sub(m.start)
		}
	}
	return d
}
