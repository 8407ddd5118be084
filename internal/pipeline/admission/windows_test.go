package admission

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The fixed windows keep every hour, wherever it starts, within the quota:
// an hour touches at most hour/length + 1 windows, each taking at most its
// limit. Each window takes at least one request.
func TestSubmissionWindowsKeepEveryHourWithinTheQuota(t *testing.T) {
	length, limit := SubmissionWindows(DefaultRequestsPerHour)
	require.Equal(t, 10*time.Minute, length)
	require.Equal(t, int64(71), limit, "floor(500/7)")

	for perHour := 2; perHour <= 5000; perHour++ {
		length, limit := SubmissionWindows(perHour)
		require.Zero(t, time.Hour%length, "%d: windows tile the hour", perHour)
		touched := int64(time.Hour/length) + 1
		require.LessOrEqual(t, touched*limit, int64(perHour), "%d an hour: %s windows of %d", perHour, length, limit)
		require.GreaterOrEqual(t, limit, int64(1), "%d", perHour)
	}
	// Check the bound by brute force for a few quotas: the most any hour,
	// starting at any minute, can hold.
	for _, perHour := range []int{2, 3, 5, 6, 7, 13, 500} {
		length, limit := SubmissionWindows(perHour)
		base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		for start := base; start.Before(base.Add(2 * time.Hour)); start = start.Add(time.Minute) {
			windows := map[time.Time]bool{}
			for at := start; at.Before(start.Add(time.Hour)); at = at.Add(time.Second) {
				windows[at.Truncate(length)] = true
			}
			require.LessOrEqual(t, int64(len(windows))*limit, int64(perHour), "%d an hour, from %s", perHour, start)
		}
	}
	_, limit = SubmissionWindows(0)
	require.Zero(t, limit, "0 is no pacing")
}
