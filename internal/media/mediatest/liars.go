// Package mediatest makes media files for tests, among them files whose
// headers lie about their length, as a sender who wants more audio
// recognized than is paid for would make them.
package mediatest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"

	"transcriber/internal/media/oggopus/oggtest"
)

// Liar is a file whose header states less audio than it holds.
type Liar struct {
	Name      string
	Path      string
	RealMs    int64 // the audio it holds
	ClaimedMs int64 // about what its header says
}

// LyingMP3 writes dir/name: realSec seconds of a tone as a constant-rate
// MP3 whose Xing (Info) frame is rewritten to count 200 frames: ffprobe
// then states about 5 s, with no "estimating" warning.
func LyingMP3(ffmpeg, dir, name string, realSec int) (Liar, error) {
	path := filepath.Join(dir, name)
	if err := run(ffmpeg, "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=22050:duration="+strconv.Itoa(realSec),
		"-ac", "1", "-c:a", "libmp3lame", "-b:a", "32k", "-f", "mp3", path); err != nil {
		return Liar{}, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return Liar{}, err
	}
	at := bytes.Index(b[:min(len(b), 4096)], []byte("Info"))
	if at < 0 {
		at = bytes.Index(b[:min(len(b), 4096)], []byte("Xing"))
	}
	if at < 0 || len(b) < at+12 || binary.BigEndian.Uint32(b[at+4:])&1 == 0 {
		return Liar{}, fmt.Errorf("mediatest: no Xing frame count in the MP3 ffmpeg wrote")
	}
	const frames = 200
	binary.BigEndian.PutUint32(b[at+8:], frames)
	// MPEG-2 layer III at 22.05 kHz: 576 samples a frame.
	return Liar{name, path, int64(realSec) * 1000, frames * 576 * 1000 / 22050}, os.WriteFile(path, b, 0o644)
}

// LyingMatroska writes dir/name: realSec seconds of a tone as Opus in
// Matroska whose Segment Info Duration is rewritten to claimSec.
func LyingMatroska(ffmpeg, dir, name string, realSec, claimSec int) (Liar, error) {
	path := filepath.Join(dir, name)
	if err := run(ffmpeg, "-f", "lavfi", "-i", "sine=frequency=330:sample_rate=48000:duration="+strconv.Itoa(realSec),
		"-ac", "1", "-c:a", "libopus", "-b:a", "16k", "-f", "matroska", path); err != nil {
		return Liar{}, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return Liar{}, err
	}
	// Duration (ID 0x4489), an 8-byte float in units of the segment's
	// TimestampScale, which ffmpeg writes as 1 ms.
	at := bytes.Index(b, []byte{0x44, 0x89, 0x88})
	if at < 0 {
		return Liar{}, fmt.Errorf("mediatest: no 8-byte Duration in the Matroska file ffmpeg wrote")
	}
	binary.BigEndian.PutUint64(b[at+3:], math.Float64bits(float64(claimSec)*1000))
	return Liar{name, path, int64(realSec) * 1000, int64(claimSec) * 1000}, os.WriteFile(path, b, 0o644)
}

// LyingOgg writes dir/name: realMs of Ogg Opus whose last granule
// position says claimMs (oggtest.Synth).
func LyingOgg(dir, name string, realMs, claimMs int64) (Liar, error) {
	path := filepath.Join(dir, name)
	return Liar{name, path, realMs, claimMs}, os.WriteFile(path, oggtest.Synth(realMs, claimMs), 0o644)
}

func run(ffmpeg string, args ...string) error {
	args = append([]string{"-nostdin", "-hide_banner", "-loglevel", "error", "-y"}, args...)
	if out, err := exec.Command(ffmpeg, args...).CombinedOutput(); err != nil {
		return fmt.Errorf("mediatest: ffmpeg %v: %w: %s", args, err, out)
	}
	return nil
}
