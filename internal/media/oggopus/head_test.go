package oggopus_test

import (
	"bytes"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"

	"transcriber/internal/media/oggopus"
	"transcriber/internal/media/oggopus/oggtest"
)

// The channels come from the identification header, whatever follows it.
func TestChannelsReadsTheIdentificationHeader(t *testing.T) {
	n, err := oggopus.Channels(oggtest.Synth(6_000, 0))
	require.NoError(t, err)
	require.Equal(t, 1, n)
	n, err = oggopus.Channels(oggtest.SynthChannels(6_000, 2))
	require.NoError(t, err)
	require.Equal(t, 2, n)
	n, err = oggopus.Channels(oggtest.Synth(1_000, 0)[:47]) // the first page alone
	require.NoError(t, err)
	require.Equal(t, 1, n)

	// Two logical streams, mono each, start one after the other: two
	// channels of audio, which the Meter also counts twice.
	mono := oggtest.Synth(1_000, 0)
	other := bytes.Clone(mono)
	other[14] ^= 0xff // another serial number
	two := append(append(bytes.Clone(mono[:47]), other[:47]...), mono[47:]...)
	n, err = oggopus.Channels(two)
	require.NoError(t, err)
	require.Equal(t, 2, n)
}

func TestChannelsRefusesWhatIsNotOggOpus(t *testing.T) {
	synth := oggtest.Synth(1_000, 0)
	noChannels := bytes.Clone(synth)
	noChannels[27+1+9] = 0
	for name, b := range map[string][]byte{
		"empty":          nil,
		"not ogg":        []byte("ID3\x04\x00\x00\x00\x00\x00\x00 this is an mp3, or says so...."),
		"vorbis in ogg":  bytes.Replace(synth, []byte("OpusHead"), []byte("\x01vorbis\x00"), 1),
		"cut":            synth[:40],
		"no channels":    noChannels,
		"page of stream": synth[47:], // the tags page, with no first page before it
	} {
		t.Run(name, func(t *testing.T) {
			_, err := oggopus.Channels(b)
			require.ErrorIs(t, err, oggopus.ErrMalformed)
		})
	}
}

// What ffmpeg writes, mono and stereo, reads as it says.
func TestChannelsOfFFmpegOutput(t *testing.T) {
	ffmpeg, err := exec.LookPath("ffmpeg")
	if err != nil {
		t.Skip("no ffmpeg")
	}
	for _, ch := range []int{1, 2} {
		out, err := exec.Command(ffmpeg, "-v", "error", "-f", "lavfi", "-i", "sine=frequency=440:duration=1",
			"-ac", []string{"", "1", "2"}[ch], "-c:a", "libopus", "-f", "ogg", "-").Output()
		require.NoError(t, err)
		n, err := oggopus.Channels(out)
		require.NoError(t, err)
		require.Equal(t, ch, n)
	}
}
