package oggopus_test

import (
	"bytes"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"

	"transcriber/internal/media/oggopus"
	"transcriber/internal/media/oggopus/oggtest"
)

func measure(t *testing.T, b []byte, limitMs int64, chunk int) (*oggopus.Meter, error) {
	t.Helper()
	m := &oggopus.Meter{LimitMs: limitMs}
	for len(b) > 0 {
		n := min(chunk, len(b))
		if _, err := m.Write(b[:n]); err != nil {
			return m, err
		}
		b = b[n:]
	}
	return m, m.Close()
}

// The audio is counted from the packets, whatever the granule positions
// say, and whatever sizes the writes come in.
func TestTheMeterCountsPacketsNotClaims(t *testing.T) {
	for _, chunk := range []int{1, 7, 4096, 1 << 20} {
		m, err := measure(t, oggtest.Synth(7000, 0), 0, chunk)
		require.NoError(t, err)
		require.Equal(t, int64(7000), m.Ms())

		m, err = measure(t, oggtest.Synth(600_000, 5_000), 0, chunk)
		require.NoError(t, err)
		require.Equal(t, int64(600_000), m.Ms(), "a last page that claims 5 s does not hide 10 minutes")
	}
}

// The write that carries the stream past the limit fails, and every one
// after it.
func TestTheMeterRefusesPastItsLimit(t *testing.T) {
	_, err := measure(t, oggtest.Synth(10_000, 0), 10_000, 512)
	require.NoError(t, err, "exactly the limit passes")

	m, err := measure(t, oggtest.Synth(600_000, 5_000), 8_000, 512)
	require.ErrorIs(t, err, oggopus.ErrOverLimit)
	require.LessOrEqual(t, m.Ms(), int64(8_000+120), "it stops at the packet that passes the limit")
	_, err = m.Write([]byte("OggS"))
	require.ErrorIs(t, err, oggopus.ErrOverLimit)
}

func TestTheMeterRefusesWhatIsNotOggOpus(t *testing.T) {
	for name, b := range map[string][]byte{
		"not ogg":        []byte("ID3\x04\x00\x00\x00\x00\x00\x00 this is an mp3, or says so...."),
		"no opus head":   bytes.Replace(oggtest.Synth(1000, 0), []byte("OpusHead"), []byte("XpusHead"), 1),
		"cut in a page":  oggtest.Synth(1000, 0)[:60],
		"vorbis in ogg":  bytes.Replace(oggtest.Synth(1000, 0), []byte("OpusHead"), []byte("\x01vorbis\x00"), 1),
		"page of stream": oggtest.Synth(1000, 0)[47:], // the tags page, with no first page before it
	} {
		t.Run(name, func(t *testing.T) {
			_, err := measure(t, b, 0, 64)
			require.ErrorIs(t, err, oggopus.ErrMalformed)
		})
	}
}

// Every configuration's frame size and every frame-count code, as RFC 6716
// gives them; a packet over 120 ms is refused.
func TestPacketSamples(t *testing.T) {
	for _, tc := range []struct {
		head []byte
		want int
	}{
		{[]byte{0 << 3}, 480}, {[]byte{3 << 3}, 2880}, {[]byte{12 << 3}, 480}, {[]byte{13 << 3}, 960},
		{[]byte{16 << 3}, 120}, {[]byte{31 << 3}, 960}, {[]byte{31<<3 | 1}, 1920}, {[]byte{31<<3 | 2}, 1920},
		{[]byte{31<<3 | 3, 6}, 5760}, {[]byte{16<<3 | 3, 48}, 5760}, {nil, 0},
	} {
		n, err := oggopus.PacketSamples(tc.head)
		require.NoError(t, err)
		require.Equal(t, tc.want, n, "% x", tc.head)
	}
	for _, bad := range [][]byte{{31<<3 | 3, 7}, {3<<3 | 3, 3}, {31<<3 | 3}} {
		_, err := oggopus.PacketSamples(bad)
		require.ErrorIs(t, err, oggopus.ErrMalformed, "% x", bad)
	}
}

// What ffmpeg's libopus writes is counted to within a packet of what
// ffprobe reads back from it.
func TestTheMeterReadsFFmpegsOutput(t *testing.T) {
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		t.Skip("ffmpeg is not installed: the meter is not tried on its output")
	}
	for _, args := range [][]string{
		{"-f", "lavfi", "-i", "sine=frequency=440:duration=12.34:sample_rate=44100"},
		{"-f", "lavfi", "-i", "sine=frequency=300:duration=3:sample_rate=16000", "-ac", "2"},
	} {
		cmd := exec.Command("ffmpeg", append(append([]string{"-nostdin", "-hide_banner", "-loglevel", "error"}, args...),
			"-c:a", "libopus", "-b:a", "32k", "-f", "ogg", "pipe:1")...)
		out, err := cmd.Output()
		require.NoError(t, err)
		m, err := measure(t, out, 0, 1000)
		require.NoError(t, err)
		want := map[bool]int64{true: 12_340, false: 3_000}[args[3] == "sine=frequency=440:duration=12.34:sample_rate=44100"]
		require.InDelta(t, want, m.Ms(), 30, "counted %d ms", m.Ms())
	}
}
