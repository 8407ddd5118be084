package ffmpeg_test

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"transcriber/internal/media/ffmpeg"
	"transcriber/internal/media/oggopus"
	"transcriber/internal/speechkit"
)

// ConvertMono writes one channel of Ogg Opus, whatever the source has:
// what synchronous recognition takes. Convert keeps stereo stereo. 30 s
// of it is far under the synchronous API's 1 MB.
func TestConvertMixesDownToMonoWhenAsked(t *testing.T) {
	fs := mustFixtures(t)
	m := fs.media(t, ffmpeg.Config{})
	ctx := context.Background()

	stereo := filepath.Join(t.TempDir(), "stereo.wav")
	out, err := exec.Command(mustTools(t).FFmpeg, "-nostdin", "-hide_banner", "-loglevel", "error",
		"-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100:duration=30", "-ac", "2", "-c:a", "pcm_s16le", stereo).CombinedOutput()
	require.NoError(t, err, "%s", out)

	for name, in := range map[string]string{"stereo WAV": stereo, "5.1 AAC": fs.url("files", "surround.m4a")} {
		t.Run(name, func(t *testing.T) {
			p, err := m.Probe(ctx, in)
			require.NoError(t, err)
			plan, err := m.Plan(p)
			require.NoError(t, err)
			seg := plan.Segments[0]

			var kept bytes.Buffer
			require.NoError(t, m.Convert(ctx, in, seg, &kept))
			n, err := oggopus.Channels(kept.Bytes())
			require.NoError(t, err)
			require.Equal(t, 2, n, "Convert keeps two channels")

			var mono bytes.Buffer
			err = m.ConvertMono(ctx, in, seg, &mono)
			require.NoError(t, err)
			n, err = oggopus.Channels(mono.Bytes())
			require.NoError(t, err)
			require.Equal(t, 1, n)
			require.Equal(t, 1, mustProbeOutput(t, m, mono.Bytes()).Audio[0].Channels)
			meter := &oggopus.Meter{}
			_, err = meter.Write(mono.Bytes())
			require.NoError(t, err)
			require.InDelta(t, p.DurationMs, meter.Ms(), slack)
			require.Less(t, mono.Len(), speechkit.MaxSyncBytes)
		})
	}
}
