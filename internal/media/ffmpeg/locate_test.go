package ffmpeg_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"transcriber/internal/media/ffmpeg"
)

// fakeBinaries writes executable ffmpeg and ffprobe scripts into dir.
func fakeBinaries(t *testing.T, dir string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o755))
	for _, name := range []string{"ffmpeg", "ffprobe"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\nexit 0\n"), 0o755))
	}
}

func TestLocate(t *testing.T) {
	explicit := t.TempDir()
	fakeBinaries(t, explicit)
	taskRoot := t.TempDir()
	fakeBinaries(t, filepath.Join(taskRoot, "bin"))
	onPath := t.TempDir()
	fakeBinaries(t, onPath)
	nowhere := t.TempDir()

	t.Run("an explicit path wins", func(t *testing.T) {
		t.Setenv("PATH", onPath)
		got, err := ffmpeg.Locate(filepath.Join(explicit, "ffmpeg"), filepath.Join(explicit, "ffprobe"), taskRoot)
		require.NoError(t, err)
		require.Equal(t, ffmpeg.Tools{FFmpeg: filepath.Join(explicit, "ffmpeg"), FFprobe: filepath.Join(explicit, "ffprobe")}, got)
	})
	t.Run("each binary is found on its own", func(t *testing.T) {
		t.Setenv("PATH", onPath)
		got, err := ffmpeg.Locate(filepath.Join(explicit, "ffmpeg"), "", taskRoot)
		require.NoError(t, err)
		require.Equal(t, ffmpeg.Tools{FFmpeg: filepath.Join(explicit, "ffmpeg"), FFprobe: filepath.Join(taskRoot, "bin", "ffprobe")}, got)
	})
	t.Run("the function's bin folder comes before PATH", func(t *testing.T) {
		t.Setenv("PATH", onPath)
		got, err := ffmpeg.Locate("", "", taskRoot)
		require.NoError(t, err)
		require.Equal(t, ffmpeg.Tools{FFmpeg: filepath.Join(taskRoot, "bin", "ffmpeg"), FFprobe: filepath.Join(taskRoot, "bin", "ffprobe")}, got)
	})
	t.Run("PATH when the task root has no bin folder", func(t *testing.T) {
		t.Setenv("PATH", onPath)
		got, err := ffmpeg.Locate("", "", nowhere)
		require.NoError(t, err)
		require.Equal(t, ffmpeg.Tools{FFmpeg: filepath.Join(onPath, "ffmpeg"), FFprobe: filepath.Join(onPath, "ffprobe")}, got)
	})
	t.Run("PATH when there is no task root", func(t *testing.T) {
		t.Setenv("PATH", onPath)
		got, err := ffmpeg.Locate("", "", "")
		require.NoError(t, err)
		require.Equal(t, filepath.Join(onPath, "ffmpeg"), got.FFmpeg)
	})
	t.Run("nothing found names what was tried", func(t *testing.T) {
		t.Setenv("PATH", nowhere)
		_, err := ffmpeg.Locate("", "", nowhere)
		require.Error(t, err)
		require.Contains(t, err.Error(), filepath.Join(nowhere, "bin", "ffmpeg"))
		require.Contains(t, err.Error(), "PATH")
		require.Contains(t, err.Error(), "FFMPEG_PATH")
	})
	t.Run("a wrong explicit path fails rather than falls back", func(t *testing.T) {
		t.Setenv("PATH", onPath)
		_, err := ffmpeg.Locate(filepath.Join(nowhere, "ffmpeg"), "", taskRoot)
		require.Error(t, err)
		require.Contains(t, err.Error(), "FFMPEG_PATH")
		require.Contains(t, err.Error(), filepath.Join(nowhere, "ffmpeg"))
	})
	t.Run("a file that is not executable is not a binary", func(t *testing.T) {
		plain := filepath.Join(t.TempDir(), "ffprobe")
		require.NoError(t, os.WriteFile(plain, []byte("not a program"), 0o644))
		t.Setenv("PATH", onPath)
		_, err := ffmpeg.Locate("", plain, "")
		require.ErrorContains(t, err, "FFPROBE_PATH")
	})
}
