package app

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// SUMMARY_MODEL_URI reaches the pipeline; without it summaries are off;
// anything but a gpt:// URI stops the start.
func TestSummaryModelFromEnv(t *testing.T) {
	c, err := FromEnv(envOf("SUMMARY_MODEL_URI", "gpt://b1gfolder/yandexgpt-lite/latest"))
	require.NoError(t, err)
	require.Equal(t, "gpt://b1gfolder/yandexgpt-lite/latest", c.Pipeline.SummaryModel)

	c, err = FromEnv(envOf())
	require.NoError(t, err)
	require.Empty(t, c.Pipeline.SummaryModel)

	for _, bad := range []string{"yandexgpt-lite", "https://llm.api.cloud.yandex.net", "gpt://"} {
		_, err = FromEnv(envOf("SUMMARY_MODEL_URI", bad))
		require.ErrorContains(t, err, "SUMMARY_MODEL_URI", bad)
	}
}
