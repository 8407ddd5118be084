package spend_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"transcriber/internal/job"
	"transcriber/internal/spend"
)

// SpeechKit's asynchronous billing at its edges: whole seconds rounded
// up, never less than 15, per pair of channels; the pricing page's own
// examples are among the cases.
func TestBilledSecondsAtTheEdges(t *testing.T) {
	for _, c := range []struct {
		ms       int64
		channels int
		want     int64
	}{
		{1_000, 1, 15},  // 1 s: the minimum
		{1, 1, 15},      // a millisecond too
		{0, 1, 15},      // a file is never billed less than the minimum
		{14_999, 1, 15}, // rounds up to 15
		{15_000, 1, 15}, // exactly the minimum
		{15_001, 1, 16}, // past it, whole seconds rounded up
		{15_500, 2, 16}, // the page's example
		{15_500, 4, 32}, // the page's example: two pairs of channels
		{1_000, 2, 15},  // stereo is one pair: billed as mono
		{1_000, 3, 30},  // the page's example: 3 channels round up to 4
		{19_500, 4, 40}, // the page's example of a deferred job
		{60_000, 0, 60}, // an unknown count is taken as one channel
		{3_600_000, 2, 3600},
	} {
		require.Equal(t, c.want, spend.BilledSeconds(c.ms, c.channels), "%d ms, %d channels", c.ms, c.channels)
	}
}

// Each segment is a file of its own, rounded on its own: three pieces
// of 1 s, 15.001 s and 60 s are billed 15 + 16 + 60, not the 77 s of
// their sum.
func TestJobBilledSecondsRoundsEachSegment(t *testing.T) {
	segs := []job.Segment{{Seq: 0, DurationMs: 1_000}, {Seq: 1, DurationMs: 15_001}, {Seq: 2, DurationMs: 60_000}}
	require.Equal(t, int64(15+16+60), spend.JobBilledSeconds(segs))
	require.Equal(t, int64(0), spend.JobBilledSeconds(nil))
}

// SpeechKit's synchronous billing: 15-second units of each channel, the
// last one rounded up, never less than one; the pricing page's examples
// are among the cases.
func TestSyncBilledSecondsAtTheEdges(t *testing.T) {
	for _, c := range []struct {
		ms       int64
		channels int
		want     int64
	}{
		{1_000, 1, 15},  // the page: 1 second becomes 15
		{0, 1, 15},      // a request is never billed less than a unit
		{-5, 1, 15},     // nor for a length that makes no sense
		{5_000, 1, 15},  // the page's two fragments of 5 and 8 s: 15 each
		{8_000, 1, 15},  //
		{15_000, 1, 15}, // exactly a unit
		{15_001, 1, 30}, // a millisecond more is a second unit
		{30_000, 1, 30}, // the longest synchronous request
		{37_000, 1, 45}, // the page's example
		{6_000, 2, 30},  // per channel
		{6_000, 0, 15},  // an unknown count is taken as one channel
	} {
		require.Equal(t, c.want, spend.SyncBilledSeconds(c.ms, c.channels), "%d ms, %d channels", c.ms, c.channels)
	}
	// Unlike the asynchronous rule, which bills 16 s for 15.001 s.
	require.Equal(t, int64(16), spend.BilledSeconds(15_001, 1))
}

// A job's bill is what the recognizer said it billed when it said (a
// synchronous answer), else its segments by the asynchronous rule.
func TestJobBilledPrefersWhatTheRecognizerSaid(t *testing.T) {
	segs := []job.Segment{{Seq: 0, DurationMs: 6_000}}
	require.Equal(t, int64(15), spend.JobBilled(job.Job{Segments: segs}))
	require.Equal(t, int64(30), spend.JobBilled(job.Job{Segments: segs, BilledSeconds: 30, Recognition: job.RecognitionSync}))
	require.Equal(t, int64(0), spend.JobBilled(job.Job{}))
}
