package app_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/app"
	"transcriber/internal/pipeline"
	"transcriber/internal/pipeline/admission"
	"transcriber/internal/speechkit"
	"transcriber/internal/status"
)

// The status reads the counters in the windows the pipeline counts in:
// the admission's request windows and its in-flight window, twice the
// longest of the check pauses and the request window.
func TestStatusConfigHasThePipelinesWindows(t *testing.T) {
	for _, c := range []struct {
		perHour        int
		length         time.Duration
		limit          int64
		inFlightLength time.Duration
	}{
		{500, 10 * time.Minute, 71, 30 * time.Minute},
		{35, 10 * time.Minute, 5, 30 * time.Minute},
		{7, 10 * time.Minute, 1, 30 * time.Minute},
		{6, 12 * time.Minute, 1, 30 * time.Minute},
		{2, time.Hour, 1, 2 * time.Hour},
		{0, 10 * time.Minute, 0, 30 * time.Minute}, // not paced: the default quota's window, nothing counted
	} {
		got := app.StatusConfig(app.Config{Pipeline: pipeline.Config{RequestsPerHour: c.perHour}})
		require.Equal(t, status.Windows{RequestsKey: admission.RequestsKey, RequestLength: c.length, RequestLimit: c.limit,
			InFlightKey: admission.InFlightKey, InFlightLength: c.inFlightLength}, got.Windows, "%d an hour", c.perHour)
		require.Equal(t, speechkit.CodeRecognitionQuota, got.QuotaCode)
	}
	longer := app.StatusConfig(app.Config{Pipeline: pipeline.Config{RequestsPerHour: 500, DeferredCheckPause: time.Hour}})
	require.Equal(t, 2*time.Hour, longer.Windows.InFlightLength, "the pipeline's own check pauses")
}
