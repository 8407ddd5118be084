package oggopus_test

import (
	"bytes"
	"encoding/binary"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"

	"transcriber/internal/media/oggopus"
	"transcriber/internal/media/oggopus/oggtest"
)

// A truthful stream passes with what its packets hold.
func TestCheckPassesAPlainStream(t *testing.T) {
	w, err := oggopus.Check(oggtest.Synth(6_000, 0))
	require.NoError(t, err)
	require.Equal(t, oggopus.Whole{Samples: 6 * oggopus.SampleRate, Channels: 1}, w)
	require.EqualValues(t, 6_000, w.Ms())

	w, err = oggopus.Check(oggtest.SynthChannels(2_000, 2))
	require.NoError(t, err)
	require.Equal(t, 2, w.Channels)
}

// reseal sets each page's checksum again after a test changed a page, so
// that what Check refuses is the change, not the checksum.
func reseal(t *testing.T, b []byte) []byte {
	t.Helper()
	out := bytes.Clone(b)
	for p := out; len(p) > 0; {
		require.GreaterOrEqual(t, len(p), 27)
		size := 27 + int(p[26])
		for _, l := range p[27 : 27+int(p[26])] {
			size += int(l)
		}
		oggopus.Seal(p[:size])
		p = p[size:]
	}
	return out
}

// Every way a file can say something other than what it holds, or be
// what another reader could read differently, is refused: the file is
// then converted, not sent as it is.
func TestCheckRefusesWhatCouldBeReadOtherwise(t *testing.T) {
	mono := oggtest.Synth(6_000, 0)
	const first, tags = 47, 44 // the identification and comment header pages

	badCRC := bytes.Clone(mono)
	badCRC[first+27+1+8] ^= 0x01 // the comment header's vendor length: only the checksum tells

	other := bytes.Clone(mono)
	binary.LittleEndian.PutUint32(other[14:18], 0x01020304)
	twoStreams := append(append(bytes.Clone(mono[:first]), reseal(t, other[:first])...), mono[first:]...)

	outOfSequence := bytes.Clone(mono)
	binary.LittleEndian.PutUint32(outOfSequence[first+18:first+22], 5)

	family1 := bytes.Clone(mono)
	family1[27+1+18] = 1

	emptyPacket := oggtest.Synth(1_000, 0)
	// A zero-length lacing value in front of the audio page's packets.
	audio := emptyPacket[first+tags:]
	n := int(audio[26])
	withEmpty := append(append(append([]byte{}, audio[:26]...), byte(n+1), 0), audio[27:]...)
	emptyPacket = append(bytes.Clone(emptyPacket[:first+tags]), withEmpty...)

	zeroFrames := oggtest.Synth(1_000, 0)
	zeroFrames[first+tags+27+int(zeroFrames[first+tags+26])+1] = 0 // the first packet's frame count

	for name, c := range map[string]struct {
		b   []byte
		why string // what the refusal says
	}{
		"empty":                   {nil, "no headers"},
		"says 60 s, holds 6 s":    {oggtest.Synth(6_000, 60_000), "granule position 2880000 is not within the audio"},
		"says 2 s, holds 6 s":     {oggtest.Synth(6_000, 2_000), "says much less than the 288000 samples"},
		"a wrong checksum":        {badCRC, "checksum is wrong"},
		"bytes after the end":     {append(bytes.Clone(mono), 'x'), "1 bytes after the page that ends the stream"},
		"cut short":               {mono[:len(mono)-3], "cut short"},
		"headers alone":           {mono[:first+tags], "no audio after the pre-skip"},
		"two logical streams":     {twoStreams, "more than one logical stream"},
		"out of sequence":         {reseal(t, outOfSequence), "out of sequence"},
		"mapping family 1":        {reseal(t, family1), "channel mapping family 1"},
		"vorbis":                  {reseal(t, bytes.Replace(mono, []byte("OpusHead"), []byte("\x01vorbis\x00"), 1)), "not an identification header"},
		"an empty audio packet":   {reseal(t, emptyPacket), "an empty audio packet"},
		"a code 3 without frames": {reseal(t, zeroFrames), "without frames"},
		"not ogg":                 {[]byte("ID3\x04\x00\x00\x00\x00\x00\x00 an mp3, or so it says"), "no Ogg page"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := oggopus.Check(c.b)
			require.ErrorIs(t, err, oggopus.ErrMalformed)
			require.ErrorContains(t, err, c.why)
		})
	}
}

// What ffmpeg's libopus writes, as Telegram's clients write a voice note,
// passes, and holds what ffmpeg made.
func TestCheckPassesFFmpegOutput(t *testing.T) {
	ffmpeg, err := exec.LookPath("ffmpeg")
	if err != nil {
		t.Skip("ffmpeg is not installed: apt-get install ffmpeg")
	}
	for _, ch := range []int{1, 2} {
		out, err := exec.Command(ffmpeg, "-v", "error", "-f", "lavfi", "-i", "sine=frequency=440:duration=7",
			"-ac", []string{"", "1", "2"}[ch], "-c:a", "libopus", "-b:a", "24k", "-f", "ogg", "-").Output()
		require.NoError(t, err)
		w, err := oggopus.Check(out)
		require.NoError(t, err)
		require.Equal(t, ch, w.Channels)
		require.InDelta(t, 7_000, w.Ms(), 60, "7 s and the encoder's pre-skip and padding")
	}
}
