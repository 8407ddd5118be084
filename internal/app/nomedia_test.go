package app_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"transcriber/internal/app"
	"transcriber/internal/clock"
	"transcriber/internal/store/sqlite"
)

// The api function ships no ffmpeg: built with NoMedia, the App does not
// look for it, while a build that needs it fails loudly without it.
func TestNoMediaNeedsNoFFmpeg(t *testing.T) {
	cfg, err := app.FromEnv(func(k string) string {
		return map[string]string{"S3_BUCKET": "transcriber-data", "S3_ACCESS_KEY_ID": "k", "S3_SECRET_ACCESS_KEY": "s",
			"FFMPEG_PATH": "/nonexistent/ffmpeg", "FFPROBE_PATH": "/nonexistent/ffprobe", "SPEECHKIT_API_KEY": "x"}[k]
	})
	require.NoError(t, err)
	stores, err := sqlite.OpenSet(context.Background(), filepath.Join(t.TempDir(), "j.db"), clock.System())
	require.NoError(t, err)
	t.Cleanup(func() { _ = stores.Close() })
	opt := app.Options{Stores: stores}
	app.NoMedia(&opt)
	a, err := app.New(cfg, opt)
	require.NoError(t, err)
	require.NoError(t, a.Close())

	_, err = app.New(cfg, app.Options{Stores: stores})
	require.ErrorContains(t, err, "media tools")
}
