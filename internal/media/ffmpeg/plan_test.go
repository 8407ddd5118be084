package ffmpeg_test

import (
	"cmp"
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
	// Recordings up to SegmentLength are one segment when they are not
	// longer than ParallelFrom either.
	m := ffmpeg.New(ffmpeg.Tools{}, ffmpeg.Config{ParallelFrom: 230 * time.Minute})
	const minute = int64(60_000)
	tests := []struct {
		name  string
		probe ffmpeg.Probe
	}{
		{"Telegram voice note", ffmpeg.Probe{Container: "ogg", DurationMs: 30_000, Audio: audio("opus", 1, 48000)}},
		{"stereo MP3", ffmpeg.Probe{Container: "mp3", DurationMs: 90 * minute, Audio: audio("mp3", 2, 44100)}},
		{"WAV at 8 kHz", ffmpeg.Probe{Container: "wav", DurationMs: minute, Audio: audio("pcm_s16le", 1, 8000)}},
		{"WAV at 48 kHz", ffmpeg.Probe{Container: "wav", DurationMs: minute, Audio: audio("pcm_s16le", 2, 48000)}},
		{"WAV at 44.1 kHz", ffmpeg.Probe{Container: "wav", DurationMs: minute, Audio: audio("pcm_s16le", 1, 44100)}},
		{"WAV of 24-bit samples", ffmpeg.Probe{Container: "wav", DurationMs: minute, Audio: audio("pcm_s24le", 1, 48000)}},
		{"OGG Vorbis", ffmpeg.Probe{Container: "ogg", DurationMs: minute, Audio: audio("vorbis", 1, 44100)}},
		{"Opus in WebM", ffmpeg.Probe{Container: "matroska,webm", DurationMs: minute, Audio: audio("opus", 1, 48000)}},
		{"M4A", ffmpeg.Probe{Container: "mov,mp4,m4a,3gp,3g2,mj2", DurationMs: minute, Audio: audio("aac", 1, 44100)}},
		{"AMR", ffmpeg.Probe{Container: "amr", DurationMs: minute, Audio: audio("amr_nb", 1, 8000)}},
		{"MP3 with a cover picture", ffmpeg.Probe{Container: "mp3", DurationMs: minute, Audio: audio("mp3", 2, 44100), HasVideo: true}},
		{"OGG/Opus in 5.1", ffmpeg.Probe{Container: "ogg", DurationMs: minute, Audio: audio("opus", 6, 48000)}},
		{"two audio streams", ffmpeg.Probe{Container: "ogg", DurationMs: minute,
			Audio: append(audio("opus", 1, 48000), ffmpeg.AudioStream{Index: 1, Codec: "opus", Channels: 1, SampleRate: 48000})}},
		{"MP3 in an MP4", ffmpeg.Probe{Container: "mov,mp4,m4a,3gp,3g2,mj2", DurationMs: minute, Audio: audio("mp3", 2, 44100)}},
		{"exactly one segment long", ffmpeg.Probe{Container: "mp3", DurationMs: 230 * minute, Audio: audio("mp3", 1, 44100)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan, err := m.Plan(tt.probe)
			require.NoError(t, err)
			require.Equal(t, "OGG_OPUS", plan.Container, "converted, even from a format SpeechKit takes as it is")
			format := strings.Split(tt.probe.Container, ",")[0]
			require.Equal(t, []ffmpeg.Segment{{StartMs: 0, DurationMs: tt.probe.DurationMs, Format: format}}, plan.Segments,
				"Convert reads the source with the demuxer that probed it")
		})
	}
}

func TestPlanCutsLongAudio(t *testing.T) {
	const minute, hour = int64(60_000), int64(3_600_000)
	mp3 := func(ms int64) ffmpeg.Probe {
		return ffmpeg.Probe{Container: "mp3", DurationMs: ms, Audio: audio("mp3", 1, 44100)}
	}
	defaults := ffmpeg.Config{}
	tests := []struct {
		name   string
		cfg    ffmpeg.Config
		ms     int64
		pieces int
		length int64 // of each segment but the last
	}{
		{"10 minutes is one piece", defaults, 10 * minute, 1, 10 * minute},
		{"11 minutes is three pieces", defaults, 11 * minute, 3, 220_000}, // ceil(11/5) = 3 of 3 min 40 s
		{"an hour is twelve pieces of 5 minutes", defaults, hour, 12, 5 * minute},
		{"an hour and a minute is thirteen", defaults, hour + minute, 13, 281_539},
		{"2 hours is twenty-four pieces of 5 minutes", defaults, 2 * hour, 24, 5 * minute},
		{"a minute more is still twenty-four, a little longer", defaults, 2*hour + minute, 24, 302_500},
		{"6 hours is twenty-four pieces of 15 minutes", defaults, 6 * hour, 24, 15 * minute},
		{"a remainder goes to the last piece", defaults, 2*hour + 5, 24, 300_001}, // the last is 299 982 ms
		{"at most MaxPieces", ffmpeg.Config{MaxPieces: 12}, 6 * hour, 12, 30 * minute},
		{"never over SegmentLength, whatever MaxPieces says",
			ffmpeg.Config{MaxPieces: 2, MaxDuration: 10 * time.Hour}, 9 * hour, 3, 3 * hour},
		{"one more piece when the SegmentLength would be passed by a millisecond",
			ffmpeg.Config{MaxPieces: 2, MaxDuration: 10 * time.Hour}, 460*minute + 1, 3, 153*minute + 20_001},
		{"below ParallelFrom, only SegmentLength cuts",
			ffmpeg.Config{SegmentLength: 4 * time.Minute}, 9 * minute, 3, 3 * minute},
		{"a PieceLength longer than the recording leaves one piece",
			ffmpeg.Config{PieceLength: time.Hour}, 50 * minute, 1, 50 * minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := ffmpeg.New(ffmpeg.Tools{}, tt.cfg)
			plan, err := m.Plan(mp3(tt.ms))
			require.NoError(t, err)
			require.Len(t, plan.Segments, tt.pieces)
			if tt.pieces == 1 {
				require.Equal(t, []ffmpeg.Segment{{0, tt.ms, "mp3"}}, plan.Segments)
				return
			}
			require.Equal(t, "OGG_OPUS", plan.Container)
			var next int64
			for i, seg := range plan.Segments {
				want := tt.length
				if i == len(plan.Segments)-1 {
					want = tt.ms - int64(i)*tt.length
					require.Positive(t, want)
					require.LessOrEqual(t, want, tt.length)
				}
				require.Equal(t, ffmpeg.Segment{StartMs: next, DurationMs: want, Format: "mp3"}, seg, "segment %d", i)
				require.LessOrEqual(t, seg.DurationMs, cmp.Or(tt.cfg.SegmentLength, ffmpeg.DefaultSegmentLength).Milliseconds())
				next += seg.DurationMs
			}
			require.Equal(t, tt.ms, next, "the segments add up to the recording")
		})
	}
}

// Rounding a few milliseconds up to equal segments would leave nothing for
// the last one: the plan has fewer segments, none empty.
func TestPlanNeverMakesAnEmptySegment(t *testing.T) {
	m := ffmpeg.New(ffmpeg.Tools{}, ffmpeg.Config{SegmentLength: 2 * time.Millisecond, MaxPieces: 4})
	plan, err := m.Plan(ffmpeg.Probe{Container: "ogg", DurationMs: 5, Audio: audio("opus", 1, 48000)})
	require.NoError(t, err)
	require.Equal(t, []ffmpeg.Segment{{0, 2, "ogg"}, {2, 2, "ogg"}, {4, 1, "ogg"}}, plan.Segments)
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
