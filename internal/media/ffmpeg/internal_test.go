package ffmpeg

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/errs"
)

func TestTailKeepsTheEndInWholeLines(t *testing.T) {
	t.Run("short output is kept as it is", func(t *testing.T) {
		tl := &tail{limit: 64}
		_, _ = tl.Write([]byte("one\n"))
		_, _ = tl.Write([]byte("two\n"))
		require.Equal(t, "one\ntwo\n", tl.String())
	})
	t.Run("long output keeps its last lines", func(t *testing.T) {
		tl := &tail{limit: 16}
		for _, line := range []string{"first line\n", "second line\n", "third\n"} {
			_, _ = tl.Write([]byte(line))
		}
		got := tl.String()
		require.True(t, strings.HasSuffix(got, "\nthird\n"), "got %q", got)
		require.NotContains(t, got, "cond line", "a line cut at its start is dropped whole")
		require.Contains(t, got, "bytes of stderr dropped")
	})
	t.Run("a single write larger than the limit", func(t *testing.T) {
		tl := &tail{limit: 8}
		n, err := tl.Write([]byte("abcdefghij\nxyz\n"))
		require.NoError(t, err)
		require.Equal(t, 15, n)
		require.True(t, strings.HasSuffix(tl.String(), "\nxyz\n"))
	})
	t.Run("one endless line is dropped rather than cut", func(t *testing.T) {
		tl := &tail{limit: 8}
		_, _ = tl.Write([]byte("https://host/key?X-Amz-Signature=secretsecret"))
		require.Equal(t, "[45 bytes of stderr dropped]", tl.String())
	})
}

func TestScrub(t *testing.T) {
	in := "https://storage.example/bucket/sources/01j?X-Amz-Credential=AK%2F1&X-Amz-Signature=abc123"
	tests := []struct{ name, stderr, want string }{
		{"the input itself", in + ": Server returned 403 Forbidden (access denied)\n",
			"<input>: Server returned 403 Forbidden (access denied)\n"},
		{"its query alone", "GET /bucket/sources/01j?X-Amz-Credential=AK%2F1&X-Amz-Signature=abc123 failed",
			"GET /bucket/sources/01j?<query> failed"},
		{"another URL", "redirected to https://other.example/x?token=t0k", "redirected to <url>"},
		{"a stray signing parameter", "...&X-Amz-Signature=ffff00 tail", "...&X-Amz-Signature=<redacted> tail"},
		{"a local path", "file:/tmp/in.ogg: Invalid data found", "file:<input>: Invalid data found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			input := in
			if strings.HasPrefix(tt.stderr, "file:") {
				input = "/tmp/in.ogg"
			}
			require.Equal(t, tt.want, scrub(tt.stderr, input))
		})
	}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		stderr string
		want   *errs.Error
	}{
		{"<input>: Server returned 403 Forbidden (access denied)", ErrSourceUnavailable},
		{"<input>: Server returned 5XX Server Error reply", ErrSourceUnavailable},
		{"[tcp @ 0x1] Connection to tcp://127.0.0.1:1 failed: Connection refused\n<input>: Connection refused", ErrSourceUnavailable},
		{"[http @ 0x2] Stream ends prematurely at 44, should be 900\n<input>: Invalid data found when processing input", ErrSourceUnavailable},
		{"<input>: Connection timed out", ErrSourceUnavailable},
		{"<input>: Invalid data found when processing input", ErrUnreadable},
		{"[mov,mp4,m4a,3gp,3g2,mj2 @ 0x3] moov atom not found", ErrUnreadable},
		{"Stream map '0:a:0' matches no streams.", ErrUnreadable},
		{"[hls @ 0x4] Format not on whitelist 'ogg,mp3'\n<input>: Invalid argument", ErrUnsupported},
		{"[http @ 0x5] Protocol 'http' not on whitelist 'file'!\n[hls @ 0x4] Failed to open segment", ErrUnsupported},
		{"[hls @ 0x4] Format not on whitelist 'ogg'\n[tcp @ 0x1] Connection refused", ErrUnsupported},
		{"[mp3 @ 0x6] Format mp3 detected only with low score of 1, misdetection possible!\n<input>: Invalid argument", ErrUnreadable},
		{"Segmentation fault", ErrFailed},
		{"", ErrFailed},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, classify(tt.stderr), tt.stderr)
	}
}

func TestInputReadBroke(t *testing.T) {
	require.True(t, inputReadBroke("[http @ 0x1] Stream ends prematurely at 1, should be 9\n<input>: Input/output error\n"))
	require.True(t, inputReadBroke("file:<input>: Input/output error\n"))
	require.False(t, inputReadBroke("[http @ 0x1] Stream ends prematurely at 1, should be 9\n"),
		"a cut that ffmpeg recovered from by reconnecting is not a failure")
	require.False(t, inputReadBroke("<input>: Invalid data found when processing input\n"),
		"a corrupt tail keeps what could be read")
	require.False(t, inputReadBroke(""))
}

func TestConvertArgsCutAccurately(t *testing.T) {
	m := New(Tools{}, Config{InputOrigin: "https://h"})
	argv, err := m.convertArgs("https://h/k?sig=1", Segment{StartMs: 13_800_000, DurationMs: 1_234, Format: "mov,mp4,m4a,3gp,3g2,mj2"}, false, "pipe:1")
	require.NoError(t, err)
	args := strings.Join(argv, " ")
	ss, i, tt := strings.Index(args, "-ss 13800.000 "), strings.Index(args, " -i https://h/k?sig=1 "), strings.Index(args, " -t 1.234 ")
	require.True(t, ss >= 0 && i > ss && tt > i, "want -ss before -i (input seeking) and -t after it: %s", args)
	require.Contains(t, args, "-map 0:a:0 ")
	require.Contains(t, args, "-c:a libopus -b:a 32k -f ogg pipe:1")
	require.Contains(t, args, "-reconnect 1 ")
	require.NotContains(t, args, "reconnect_streamed")
	require.Contains(t, args, "-protocol_whitelist https,tls,tcp -format_whitelist "+formatWhitelist+" ")
	require.Contains(t, args, " -f mov -i https://h/k?sig=1 ", "the probed demuxer is forced")

	argv, err = m.convertArgs("/tmp/a.m4a", Segment{}, false, "pipe:1")
	require.NoError(t, err)
	whole := strings.Join(argv, " ")
	require.NotContains(t, whole, "-ss ")
	require.NotContains(t, whole, "-t ")
	require.Contains(t, whole, "-protocol_whitelist file -format_whitelist "+formatWhitelist+" -i file:/tmp/a.m4a ")
	require.NotContains(t, whole, "reconnect")

	_, err = m.convertArgs("/tmp/a.m3u8", Segment{Format: "hls,applehttp"}, false, "pipe:1")
	require.ErrorIs(t, err, ErrUnsupported, "a demuxer off the list is never forced")
}

// The protocols are the input's own and what they run on: a URL on
// http reads nothing over TLS, and a path reads no URL.
func TestInputArgsAllowOnlyTheInputsOwnProtocol(t *testing.T) {
	tests := []struct{ origin, input, protocols string }{
		{"http://127.0.0.1:9000", "http://127.0.0.1:9000/bucket/key?X-Amz-Signature=1", "http,tcp"},
		{"https://bucket.storage.example", "https://bucket.storage.example/key?X-Amz-Signature=1", "https,tls,tcp"},
		{"https://storage.example:443", "HTTPS://Storage.Example/bucket/key", "https,tls,tcp"},
		{"", "/tmp/voice.ogg", "file"},
	}
	for _, tt := range tests {
		args, err := New(Tools{}, Config{InputOrigin: tt.origin}).inputArgs(tt.input, "")
		require.NoError(t, err, tt.input)
		require.Equal(t, []string{"-protocol_whitelist", tt.protocols, "-format_whitelist", formatWhitelist}, args[:4], tt.input)
	}
	args, err := New(Tools{}, Config{}).inputArgs("/tmp/voice.ogg", rawData)
	require.NoError(t, err)
	require.Equal(t, "-protocol_whitelist file -format_whitelist data -f data -i file:/tmp/voice.ogg", strings.Join(args, " "),
		"raw data is allowed only where it is asked for")
}

func TestAllowedDemuxers(t *testing.T) {
	for name, want := range map[string]string{
		"ogg": "ogg", "mp3": "mp3", "wav": "wav", "flac": "flac", "mov,mp4,m4a,3gp,3g2,mj2": "mov",
		"matroska,webm": "matroska", "aac": "aac", "amr": "amr", "aiff": "aiff", "caf": "caf", "asf": "asf",
		"avi": "avi", "w64": "w64",
	} {
		got, ok := allowedDemuxer(name)
		require.True(t, ok, name)
		require.Equal(t, want, got, name)
	}
	for _, name := range []string{"hls", "hls,applehttp", "concat", "dash", "sdp", "rtsp", "rtp", "image2", "png_pipe",
		"jpeg_pipe", "tty", "mpl2", "ass", "webm_dash_manifest", "data", "asf_o", "", ",", "mov "} {
		_, ok := allowedDemuxer(name)
		require.False(t, ok, "%q", name)
	}
	for _, d := range strings.Split(formatWhitelist, ",") {
		require.NotContains(t, []string{"hls", "applehttp", "concat", "dash", "sdp", "rtsp", "rtp", "image2", "tee", "data"}, d)
	}
	require.Equal(t, "the file is not in a format the service accepts; accepted: OGG/Opus, MP3, WAV, FLAC, "+
		"M4A/MP4/MOV/3GP, WebM/MKV, AAC, AMR, AIFF, CAF, WMA/WMV, AVI", ErrUnsupported.Message)
}

func TestInputURLMustBeOnTheOrigin(t *testing.T) {
	m := New(Tools{}, Config{InputOrigin: "http://127.0.0.1:9000/"})
	require.Equal(t, "http://127.0.0.1:9000", m.cfg.InputOrigin)
	_, err := m.inputArgs("http://127.0.0.1:9000/bucket/key?X-Amz-Signature=1", "")
	require.NoError(t, err)
	for _, in := range []string{
		"http://127.0.0.1:9001/bucket/key",                     // another port
		"https://127.0.0.1:9000/bucket/key",                    // another scheme
		"http://169.254.169.254/latest/meta-data/",             // another host
		"http://127.0.0.1:9000@169.254.169.254/latest/",        // a user part
		`http://169.254.169.254\@127.0.0.1:9000/bucket/key`,    // a backslash
		"http://127.0.0.1:9000/bucket/key\nhttp://169.254.1.1", // a line break
		"http:///bucket/key",                                   // no host
	} {
		_, err := m.inputArgs(in, "")
		require.ErrorIs(t, err, ErrInputRefused, in)
		require.Equal(t, "media_input_refused", errs.CodeOf(err))
		require.NotContains(t, errs.MessageOf(err), "http", "the message")
	}
	_, err = New(Tools{}, Config{}).inputArgs("http://127.0.0.1:9000/bucket/key", "")
	require.ErrorIs(t, err, ErrInputRefused, "with no origin set, no URL is read")

	o, err := OriginOf("https://Bucket.Storage.Example:443/sources/01j?X-Amz-Signature=abc")
	require.NoError(t, err)
	require.Equal(t, "https://bucket.storage.example", o)
	_, err = OriginOf("ftp://storage.example/x")
	require.Error(t, err)
}

func TestSettingsHelpers(t *testing.T) {
	require.Equal(t, "6 hours", humanDuration(6*time.Hour))
	require.Equal(t, "1 hour", humanDuration(time.Hour))
	require.Equal(t, "230 minutes", humanDuration(3*time.Hour+50*time.Minute))
	require.Equal(t, "2 seconds", humanDuration(2*time.Second))
	require.Equal(t, "13800.000", seconds(3*time.Hour+50*time.Minute))
	require.Equal(t, "0.050", seconds(50*time.Millisecond))
	require.Equal(t, int64(3007), parseSeconds("3.006500"))
	require.Equal(t, int64(3006), parseSeconds("3.006499"))
	require.Equal(t, int64(0), parseSeconds("N/A"))
	require.Equal(t, int64(0), parseSeconds(""))

	cfg := New(Tools{}, Config{}).cfg
	require.Equal(t, Config{MaxDuration: 6 * time.Hour, SegmentLength: 230 * time.Minute,
		PieceLength: 5 * time.Minute, ParallelFrom: 10 * time.Minute, MaxPieces: 24}, cfg)
}
