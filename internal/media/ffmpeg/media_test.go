package ffmpeg_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/errs"
	"transcriber/internal/media/ffmpeg"
)

const mp4Family = "mov,mp4,m4a,3gp,3g2,mj2"

// slack is how far a measured duration may stray: an MP3 encoder's padding,
// a container's rounding, one Opus packet.
const slack = 120

func TestProbeAndPlanByURL(t *testing.T) {
	fs := mustFixtures(t)
	m := fs.media(t, ffmpeg.Config{})
	ctx := context.Background()
	tests := []struct {
		file       string
		container  string
		codec      string
		channels   int
		durationMs int64
		video      bool
	}{
		{"voice.ogg", "ogg", "opus", 1, 3000, false},
		{"song.mp3", "mp3", "mp3", 1, 3000, false},
		{"speech16k.wav", "wav", "pcm_s16le", 1, 3000, false},
		{"cd.wav", "wav", "pcm_s16le", 1, 3000, false},
		{"float.wav", "wav", "pcm_f32le", 1, 3000, false},
		{"speech.m4a", mp4Family, "aac", 1, 3000, false},
		{"speech.flac", "flac", "flac", 1, 3000, false},
		{"speech.webm", "matroska,webm", "opus", 1, 3000, false},
		{"streamed.webm", "matroska,webm", "opus", 1, 3000, false},
		{"vorbis.ogg", "ogg", "vorbis", 1, 3000, false},
		{"surround.m4a", mp4Family, "aac", 6, 3000, false},
		{"video.mp4", mp4Family, "aac", 1, 3000, true},
		{"long.ogg", "ogg", "opus", 1, 10000, false},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			p, err := m.Probe(ctx, fs.url("files", tt.file))
			require.NoError(t, err)
			require.Equal(t, tt.container, p.Container)
			require.Len(t, p.Audio, 1)
			require.Equal(t, tt.codec, p.Audio[0].Codec)
			require.Equal(t, tt.channels, p.Audio[0].Channels)
			require.Equal(t, tt.video, p.HasVideo)
			require.InDelta(t, tt.durationMs, p.DurationMs, slack, "duration")

			plan, err := m.Plan(p)
			require.NoError(t, err)
			require.Equal(t, "OGG_OPUS", plan.Container, "every recording is converted")
			require.Equal(t, []ffmpeg.Segment{{StartMs: 0, DurationMs: p.DurationMs, Format: strings.Split(tt.container, ",")[0]}}, plan.Segments)
		})
	}
}

func TestConvertByURLMakesOggOpus(t *testing.T) {
	fs := mustFixtures(t)
	m := fs.media(t, ffmpeg.Config{})
	ctx := context.Background()
	for _, file := range []string{"cd.wav", "float.wav", "speech.m4a", "speech.flac", "speech.webm",
		"streamed.webm", "vorbis.ogg", "surround.m4a", "video.mp4", "song.mp3"} {
		t.Run(file, func(t *testing.T) {
			t.Parallel()
			in := fs.url("files", file)
			p, err := m.Probe(ctx, in)
			require.NoError(t, err)
			var out bytes.Buffer
			plan, err := m.Plan(p)
			require.NoError(t, err)
			require.NoError(t, m.Convert(ctx, in, plan.Segments[0], &out))

			got := mustProbeOutput(t, m, out.Bytes())
			require.InDelta(t, p.DurationMs, got.DurationMs, slack, "duration")
			require.Equal(t, min(p.Audio[0].Channels, 2), got.Audio[0].Channels, "channels")
		})
	}
}

func TestConvertReadsMP4WithIndexAtTheEndBySeeking(t *testing.T) {
	fs := mustFixtures(t)
	m := fs.media(t, ffmpeg.Config{})
	b, err := os.ReadFile(fs.path("video.mp4"))
	require.NoError(t, err)
	mdat, moov := bytes.Index(b, []byte("mdat")), bytes.Index(b, []byte("moov"))
	require.True(t, mdat >= 0 && moov > mdat, "the fixture must have its index after the media: mdat at %d, moov at %d", mdat, moov)

	in := fs.url("files", "video.mp4")
	require.NoError(t, m.Convert(context.Background(), in, ffmpeg.Segment{DurationMs: 3000}, io.Discard))
	var seeks int
	for _, r := range fs.ranges(urlPath(t, in)) {
		if r != "" && r != "bytes=0-" {
			seeks++
		}
	}
	require.Positive(t, seeks, "ffmpeg should have read the index with a Range request")
}

func TestLongAudioIsCutIntoSegmentsThatAddUp(t *testing.T) {
	fs := mustFixtures(t)
	m := fs.media(t, ffmpeg.Config{SegmentLength: 4 * time.Second})
	ctx := context.Background()
	in := fs.url("files", "long.ogg")
	p, err := m.Probe(ctx, in)
	require.NoError(t, err)
	plan, err := m.Plan(p)
	require.NoError(t, err)
	require.Equal(t, "OGG_OPUS", plan.Container)
	third := (p.DurationMs + 2) / 3 // three equal segments under 4 s, the last one taking what is left
	require.Equal(t, []ffmpeg.Segment{{0, third, "ogg"}, {third, third, "ogg"}, {2 * third, p.DurationMs - 2*third, "ogg"}}, plan.Segments)

	var total int64
	for _, seg := range plan.Segments {
		var out bytes.Buffer
		require.NoError(t, m.Convert(ctx, in, seg, &out))
		got := mustProbeOutput(t, m, out.Bytes())
		require.InDelta(t, seg.DurationMs, got.DurationMs, slack, "segment %+v", seg)
		total += got.DurationMs
	}
	require.InDelta(t, p.DurationMs, total, 2*slack)
}

func TestProbeReadsLocalPathsWithAwkwardNames(t *testing.T) {
	fs := mustFixtures(t)
	m := fs.media(t, ffmpeg.Config{})
	b, err := os.ReadFile(fs.path("voice.ogg"))
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "-i http:voice.ogg")
	require.NoError(t, os.WriteFile(path, b, 0o644))
	p, err := m.Probe(context.Background(), path)
	require.NoError(t, err)
	require.Equal(t, "ogg", p.Container)
	require.NoError(t, m.Convert(context.Background(), path, ffmpeg.Segment{DurationMs: p.DurationMs}, io.Discard))
}

func TestConvertResumesAfterADroppedConnection(t *testing.T) {
	fs := mustFixtures(t)
	m := fs.media(t, ffmpeg.Config{})
	in := fs.freshURL("flaky", "long.ogg")
	var out bytes.Buffer
	require.NoError(t, m.Convert(context.Background(), in, ffmpeg.Segment{DurationMs: 10000}, &out))
	require.Contains(t, fs.ranges(urlPath(t, in)), fmt.Sprintf("bytes=%d-", cutAfter),
		"ffmpeg should have reconnected and resumed where the cut left it")
	require.InDelta(t, 10000, mustProbeOutput(t, m, out.Bytes()).DurationMs, slack)
}

func TestConvertFailsWhenTheConnectionIsLostForGood(t *testing.T) {
	fs := mustFixtures(t)
	m := fs.media(t, ffmpeg.Config{})
	err := m.Convert(context.Background(), fs.freshURL("broken", "long.ogg"), ffmpeg.Segment{DurationMs: 10000}, io.Discard)
	require.ErrorIs(t, err, ffmpeg.ErrSourceUnavailable, "a cut-short recording must not pass as a whole one")
	require.Equal(t, errs.Unavailable, errs.KindOf(err))
	requireNoSecret(t, err)
}

func TestErrors(t *testing.T) {
	fs := mustFixtures(t)
	tools := mustTools(t)
	m := fs.media(t, ffmpeg.Config{})
	ctx := context.Background()
	closed := fs.url("files", "voice.ogg")
	if u, err := url.Parse(closed); err == nil {
		u.Host = "127.0.0.1:1" // nothing listens on port 1
		closed = u.String()
	}
	tests := []struct {
		name    string
		media   *ffmpeg.Media
		input   string
		want    *errs.Error
		kind    errs.Kind
		message string
	}{
		{"empty file by URL", m, fs.url("files", "empty.ogg"), ffmpeg.ErrEmptyFile, errs.Permanent, "the file is empty"},
		{"empty file by path", m, fs.path("empty.ogg"), ffmpeg.ErrEmptyFile, errs.Permanent, "the file is empty"},
		{"text file", m, fs.url("files", "notes.txt"), ffmpeg.ErrUnreadable, errs.Permanent, "the file could not be read as audio or video"},
		{"video without sound", m, fs.url("files", "silent.mp4"), ffmpeg.ErrNoAudio, errs.Permanent, "the file has no sound in it"},
		{"longer than the limit", fs.media(t, ffmpeg.Config{MaxDuration: 2 * time.Second}),
			fs.url("files", "voice.ogg"), ffmpeg.ErrTooLong, errs.Permanent, "the recording is longer than 2 seconds"},
		{"longer than the limit, with no duration in the header", fs.media(t, ffmpeg.Config{MaxDuration: time.Second}),
			fs.url("files", "streamed.webm"), ffmpeg.ErrTooLong, errs.Permanent, "the recording is longer than 1 second"},
		{"expired URL", m, fs.url("status/403", "voice.ogg"), ffmpeg.ErrSourceUnavailable, errs.Unavailable, ffmpeg.ErrSourceUnavailable.Message},
		{"storage error", m, fs.url("status/503", "voice.ogg"), ffmpeg.ErrSourceUnavailable, errs.Unavailable, ffmpeg.ErrSourceUnavailable.Message},
		{"missing object", m, fs.url("files", "gone.ogg"), ffmpeg.ErrSourceUnavailable, errs.Unavailable, ffmpeg.ErrSourceUnavailable.Message},
		{"connection refused", ffmpeg.New(tools, ffmpeg.Config{InputOrigin: "http://127.0.0.1:1"}), closed, ffmpeg.ErrSourceUnavailable, errs.Unavailable, ffmpeg.ErrSourceUnavailable.Message},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, err := tt.media.Probe(ctx, tt.input)
			if err == nil {
				_, err = tt.media.Plan(p)
			}
			require.ErrorIs(t, err, tt.want)
			require.Equal(t, tt.want.Code, errs.CodeOf(err))
			require.Equal(t, tt.kind, errs.KindOf(err))
			require.Equal(t, tt.message, errs.MessageOf(err))
			requireNoSecret(t, err)
		})
	}
}

func TestTheURLIsScrubbedFromTheCause(t *testing.T) {
	fs := mustFixtures(t)
	m := fs.media(t, ffmpeg.Config{})
	_, err := m.Probe(context.Background(), fs.url("status/403", "voice.ogg"))
	require.ErrorIs(t, err, ffmpeg.ErrSourceUnavailable)
	requireNoSecret(t, err)
	require.Contains(t, err.Error(), "<input>: Server returned 403 Forbidden", "the cause keeps what ffmpeg said, without the URL")
}

// requireNoSecret checks that neither the message nor the cause of err
// holds the URL's signature, and the message not even the server.
func requireNoSecret(t *testing.T, err error) {
	t.Helper()
	msg := errs.MessageOf(err)
	for _, secret := range []string{signature, "X-Amz", "http", "127.0.0.1", "/files/"} {
		require.NotContains(t, msg, secret, "the message")
	}
	require.NotContains(t, err.Error(), signature, "the cause")
	require.NotContains(t, err.Error(), "X-Amz-Credential=AKID", "the cause")
}

func urlPath(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	require.NoError(t, err)
	return u.Path
}

func TestConvertStopsFFmpegWhenTheWriterFails(t *testing.T) {
	fs := mustFixtures(t)
	m := fs.media(t, ffmpeg.Config{})
	uploadFailed := errs.New(errs.Unavailable, "storage_unavailable", "storage is unavailable")
	err := m.Convert(context.Background(), fs.url("files", "long.ogg"), ffmpeg.Segment{DurationMs: 10000},
		writerFunc(func([]byte) (int, error) { return 0, uploadFailed }))
	require.ErrorIs(t, err, uploadFailed, "the writer's error comes back with its kind")
	require.Equal(t, errs.Unavailable, errs.KindOf(err))
	requireNoZombies(t)
}

func TestConvertStopsFFmpegWhenTheContextEnds(t *testing.T) {
	fs := mustFixtures(t)
	m := fs.media(t, ffmpeg.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	err := m.Convert(ctx, fs.url("files", "long.ogg"), ffmpeg.Segment{DurationMs: 10000},
		writerFunc(func(p []byte) (int, error) { cancel(); return len(p), nil }))
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, errs.Unavailable, errs.KindOf(err))
	requireNoZombies(t)
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// requireNoZombies checks that no child of this process is left unreaped.
func requireNoZombies(t *testing.T) {
	t.Helper()
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	if len(stats) == 0 {
		t.Log("no /proc here: zombies not checked")
		return
	}
	me := os.Getpid()
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue // it ended while we looked
		}
		// pid (comm) state ppid …; comm may hold spaces, so split after ')'.
		s := string(b)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) >= 2 && fields[1] == strconv.Itoa(me) {
			require.NotEqual(t, "Z", fields[0], "zombie child: %s", s)
		}
	}
}
