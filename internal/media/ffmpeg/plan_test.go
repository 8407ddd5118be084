package ffmpeg_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/errs"
	"transcriber/internal/media/ffmpeg"
)

func audio(codec string, channels, rate int) []ffmpeg.AudioStream {
	return []ffmpeg.AudioStream{{Index: 0, Codec: codec, Channels: channels, SampleRate: rate}}
}

func TestPlanDecides(t *testing.T) {
	m := ffmpeg.New(ffmpeg.Tools{}, ffmpeg.Config{})
	const minute = int64(60_000)
	tests := []struct {
		name   string
		probe  ffmpeg.Probe
		pass   bool
		submit string
	}{
		{"Telegram voice note", ffmpeg.Probe{Container: "ogg", DurationMs: 30_000, Audio: audio("opus", 1, 48000)}, true, "OGG_OPUS"},
		{"stereo MP3", ffmpeg.Probe{Container: "mp3", DurationMs: 90 * minute, Audio: audio("mp3", 2, 44100)}, true, "MP3"},
		{"WAV at 8 kHz", ffmpeg.Probe{Container: "wav", DurationMs: minute, Audio: audio("pcm_s16le", 1, 8000)}, true, "WAV"},
		{"WAV at 48 kHz", ffmpeg.Probe{Container: "wav", DurationMs: minute, Audio: audio("pcm_s16le", 2, 48000)}, true, "WAV"},
		{"WAV at 44.1 kHz", ffmpeg.Probe{Container: "wav", DurationMs: minute, Audio: audio("pcm_s16le", 1, 44100)}, false, "OGG_OPUS"},
		{"WAV of 24-bit samples", ffmpeg.Probe{Container: "wav", DurationMs: minute, Audio: audio("pcm_s24le", 1, 48000)}, false, "OGG_OPUS"},
		{"OGG Vorbis", ffmpeg.Probe{Container: "ogg", DurationMs: minute, Audio: audio("vorbis", 1, 44100)}, false, "OGG_OPUS"},
		{"Opus in WebM", ffmpeg.Probe{Container: "matroska,webm", DurationMs: minute, Audio: audio("opus", 1, 48000)}, false, "OGG_OPUS"},
		{"M4A", ffmpeg.Probe{Container: "mov,mp4,m4a,3gp,3g2,mj2", DurationMs: minute, Audio: audio("aac", 1, 44100)}, false, "OGG_OPUS"},
		{"AMR", ffmpeg.Probe{Container: "amr", DurationMs: minute, Audio: audio("amr_nb", 1, 8000)}, false, "OGG_OPUS"},
		{"MP3 with a cover picture", ffmpeg.Probe{Container: "mp3", DurationMs: minute, Audio: audio("mp3", 2, 44100), HasVideo: true}, false, "OGG_OPUS"},
		{"OGG/Opus in 5.1", ffmpeg.Probe{Container: "ogg", DurationMs: minute, Audio: audio("opus", 6, 48000)}, false, "OGG_OPUS"},
		{"two audio streams", ffmpeg.Probe{Container: "ogg", DurationMs: minute,
			Audio: append(audio("opus", 1, 48000), ffmpeg.AudioStream{Index: 1, Codec: "opus", Channels: 1, SampleRate: 48000})}, false, "OGG_OPUS"},
		{"MP3 in an MP4", ffmpeg.Probe{Container: "mov,mp4,m4a,3gp,3g2,mj2", DurationMs: minute, Audio: audio("mp3", 2, 44100)}, false, "OGG_OPUS"},
		{"exactly one segment long", ffmpeg.Probe{Container: "mp3", DurationMs: 230 * minute, Audio: audio("mp3", 1, 44100)}, true, "MP3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan, err := m.Plan(tt.probe)
			require.NoError(t, err)
			require.Equal(t, tt.pass, plan.PassThrough, "pass-through")
			require.Equal(t, tt.submit, plan.Container)
			format := strings.Split(tt.probe.Container, ",")[0]
			require.Equal(t, []ffmpeg.Segment{{StartMs: 0, DurationMs: tt.probe.DurationMs, Format: format}}, plan.Segments,
				"Convert reads the source with the demuxer that probed it")
		})
	}
}

func TestPlanCutsLongAudio(t *testing.T) {
	m := ffmpeg.New(ffmpeg.Tools{}, ffmpeg.Config{})
	const length = int64(230 * 60_000) // the default SegmentLength, 3 h 50 min
	plan, err := m.Plan(ffmpeg.Probe{Container: "mp3", DurationMs: 6 * 3_600_000, Audio: audio("mp3", 1, 44100)})
	require.NoError(t, err)
	require.False(t, plan.PassThrough, "segments are converted even from a format SpeechKit takes")
	require.Equal(t, "OGG_OPUS", plan.Container)
	require.Equal(t, []ffmpeg.Segment{{0, length, "mp3"}, {length, 6*3_600_000 - length, "mp3"}}, plan.Segments)

	plan, err = m.Plan(ffmpeg.Probe{Container: "mp3", DurationMs: length + 1, Audio: audio("mp3", 1, 44100)})
	require.NoError(t, err)
	require.Equal(t, []ffmpeg.Segment{{0, length, "mp3"}, {length, 1, "mp3"}}, plan.Segments)
}

func TestPlanRefuses(t *testing.T) {
	m := ffmpeg.New(ffmpeg.Tools{}, ffmpeg.Config{})
	tests := []struct {
		name    string
		probe   ffmpeg.Probe
		want    *errs.Error
		message string
	}{
		{"no audio", ffmpeg.Probe{Container: "mov,mp4,m4a,3gp,3g2,mj2", DurationMs: 5000, HasVideo: true},
			ffmpeg.ErrNoAudio, "the file has no sound in it"},
		{"no time at all", ffmpeg.Probe{Container: "ogg", Audio: audio("opus", 1, 48000)},
			ffmpeg.ErrEmptyFile, "the recording is empty"},
		{"over six hours", ffmpeg.Probe{Container: "ogg", DurationMs: 6*3_600_000 + 1, Audio: audio("opus", 1, 48000)},
			ffmpeg.ErrTooLong, "the recording is longer than 6 hours"},
		{"a playlist", ffmpeg.Probe{Container: "hls", DurationMs: 5000, Audio: audio("aac", 1, 44100)},
			ffmpeg.ErrUnsupported, ffmpeg.ErrUnsupported.Message},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := m.Plan(tt.probe)
			require.ErrorIs(t, err, tt.want)
			require.Equal(t, errs.Permanent, errs.KindOf(err))
			require.Equal(t, tt.want.Code, errs.CodeOf(err))
			require.Equal(t, tt.message, errs.MessageOf(err))
		})
	}

	_, err := ffmpeg.New(ffmpeg.Tools{}, ffmpeg.Config{MaxDuration: 90 * time.Minute}).
		Plan(ffmpeg.Probe{Container: "ogg", DurationMs: 91 * 60_000, Audio: audio("opus", 1, 48000)})
	require.Equal(t, "the recording is longer than 90 minutes", errs.MessageOf(err))
}
