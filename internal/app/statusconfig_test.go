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
// the admission's request windows.
func TestStatusConfigHasThePipelinesWindows(t *testing.T) {
	for _, c := range []struct {
		perHour int
		length  time.Duration
		limit   int64
	}{
		{500, 10 * time.Minute, 71},
		{35, 10 * time.Minute, 5},
		{7, 10 * time.Minute, 1},
		{6, 12 * time.Minute, 1},
		{2, time.Hour, 1},
		{0, 10 * time.Minute, 0}, // not paced: the default quota's window, nothing counted
	} {
		got := app.StatusConfig(app.Config{Pipeline: pipeline.Config{RequestsPerHour: c.perHour}})
		require.Equal(t, status.Windows{RequestsKey: admission.RequestsKey, RequestLength: c.length, RequestLimit: c.limit},
			got.Windows, "%d an hour", c.perHour)
		require.Equal(t, speechkit.CodeRecognitionQuota, got.QuotaCode)
	}
}
