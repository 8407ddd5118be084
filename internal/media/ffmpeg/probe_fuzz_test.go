package ffmpeg

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"transcriber/internal/errs"
)

func TestDecodeProbe(t *testing.T) {
	p, err := decodeProbe([]byte(`{"streams":[{"index":0,"codec_name":"aac","codec_type":"audio","sample_rate":"44100","channels":2,
		"disposition":{"attached_pic":0}},{"index":1,"codec_name":"h264","codec_type":"video"}],
		"format":{"format_name":"mov,mp4,m4a,3gp,3g2,mj2","duration":"3.000000"}}`))
	require.NoError(t, err)
	require.Equal(t, Probe{Container: "mov,mp4,m4a,3gp,3g2,mj2", DurationMs: 3000, HasVideo: true,
		Audio: []AudioStream{{Index: 0, Codec: "aac", Channels: 2, SampleRate: 44100}}}, p)

	// ffprobe's -format_whitelist refuses these first; the decoder refuses
	// them again, should a build ignore the option.
	for _, format := range []string{"hls", "concat", "dash", "sdp", "png_pipe", "data", ""} {
		_, err := decodeProbe([]byte(`{"streams":[{"index":0,"codec_type":"audio","codec_name":"aac"}],"format":{"format_name":"` + format + `"}}`))
		require.ErrorIs(t, err, ErrUnsupported, format)
		require.Equal(t, errs.Permanent, errs.KindOf(err))
	}
	for _, out := range []string{``, `{`, `{"streams":[],"format":{"format_name":"ogg"}}`, `{"streams":[{"index":-1,"codec_type":"audio"}],"format":{"format_name":"ogg"}}`} {
		_, err := decodeProbe([]byte(out))
		require.ErrorIs(t, err, ErrUnreadable, out)
	}
}

// FuzzProbeJSON feeds decodeProbe what ffprobe might print: it must not
// panic, and returns either a Probe in an accepted format with no negative
// number in it, or a permanent error of this package and no Probe.
func FuzzProbeJSON(f *testing.F) {
	for _, seed := range []string{
		`{"streams":[{"index":0,"codec_name":"opus","codec_type":"audio","sample_rate":"48000","channels":1,"disposition":{"attached_pic":0}}],"format":{"format_name":"ogg","duration":"3.006500"}}`,
		`{"streams":[{"index":0,"codec_name":"aac","codec_type":"audio","sample_rate":"44100","channels":6},{"index":1,"codec_type":"video","disposition":{"attached_pic":1}}],"format":{"format_name":"mov,mp4,m4a,3gp,3g2,mj2","duration":"N/A"}}`,
		`{"streams":[{"index":0,"codec_type":"video"}],"format":{"format_name":"matroska,webm"}}`,
		`{"streams":[{"index":0,"codec_type":"audio"}],"format":{"format_name":"hls"}}`,
		`{"streams":[{"index":0,"codec_type":"audio","sample_rate":"-1","channels":-2}],"format":{"format_name":"wav","duration":"1e308"}}`,
		`{"format":{"format_name":"mp3","duration":"-5"}}`,
		`{}`, `[]`, `null`, ``, `{"streams":null}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := decodeProbe(b)
		if err != nil {
			var e *errs.Error
			if !errors.As(err, &e) || e.Kind != errs.Permanent || (e.Code != ErrUnreadable.Code && e.Code != ErrUnsupported.Code) {
				t.Fatalf("error %v is not unreadable_media or unsupported_media", err)
			}
			if p.Container != "" || p.Audio != nil || p.DurationMs != 0 || p.HasVideo {
				t.Fatalf("a Probe with an error: %+v", p)
			}
			return
		}
		if _, ok := allowedDemuxer(p.Container); !ok {
			t.Fatalf("container %q is not accepted", p.Container)
		}
		if p.DurationMs < 0 || (len(p.Audio) == 0 && p.DurationMs != 0) {
			t.Fatalf("duration %d with %d audio streams", p.DurationMs, len(p.Audio))
		}
		for _, a := range p.Audio {
			if a.Index < 0 || a.Channels < 0 || a.SampleRate < 0 {
				t.Fatalf("audio stream %+v", a)
			}
		}
	})
}
