// Package ffmpegtest has uploads that must never become a transcript, nor
// make ffmpeg open anything but the file itself, and a loopback listener
// that counts who connects to it: for the media adapter's tests and the
// service's end-to-end tests.
package ffmpegtest

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"net"
	"sync/atomic"
	"testing"
)

// The error codes a hostile file may end in: libavformat recognizes a
// format that is not accepted, or recognizes none.
const (
	CodeUnsupported = "unsupported_media"
	CodeUnreadable  = "unreadable_media"
)

// Listener is a loopback TCP port that accepts connections, counts them
// and closes them: the stand-in for a cloud metadata service, or any host a
// hostile file names.
type Listener struct {
	ln net.Listener
	n  atomic.Int64
}

// Listen starts a Listener that closes when the test ends.
func Listen(tb testing.TB) *Listener {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("ffmpegtest: listen: %v", err)
	}
	l := &Listener{ln: ln}
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return // closed
			}
			l.n.Add(1)
			_ = conn.Close()
		}
	}()
	tb.Cleanup(func() { _ = ln.Close() })
	return l
}

// Addr is the listener's host:port.
func (l *Listener) Addr() string { return l.ln.Addr().String() }

// Connections is how many connections it has accepted so far.
func (l *Listener) Connections() int64 { return l.n.Load() }

// Neighbour is the name the hostile files give, relative to themselves, for
// another upload next to them (see WAVSilence).
const Neighbour = "neighbour.wav"

// Hostile is an upload that names other inputs, or is not audio at all.
type Hostile struct {
	Name  string
	Body  []byte
	Codes []string // the codes it may fail with; the first is what this machine's Debian ffmpeg gives
}

// HostileFiles returns files that would make ffmpeg open other inputs
// (host, a host:port such as a Listener's; local files; Neighbour next to
// them) were they read with any demuxer, and files that are not audio: an
// HLS playlist, an ffconcat list, a DASH manifest, an SDP description, a
// PNG and a JPEG image, a ZIP archive and plain text.
func HostileFiles(tb testing.TB, host string) []Hostile {
	tb.Helper()
	meta := "http://" + host
	_, port, _ := net.SplitHostPort(host)
	unsupported := []string{CodeUnsupported}
	unreadable := []string{CodeUnreadable}
	return []Hostile{
		{"playlist.m3u8", []byte("#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXT-X-MEDIA-SEQUENCE:0\n" +
			"#EXTINF:10,\n" + meta + "/latest/meta-data/iam/security-credentials/default.ts\n" +
			"#EXTINF:10,\n" + meta + "/computeMetadata/v1/instance/service-accounts/default/token.ts\n" +
			"#EXTINF:10,\nfile:/etc/passwd\n" +
			"#EXTINF:10,\n" + Neighbour + "\n#EXT-X-ENDLIST\n"), unsupported},
		{"list.ffconcat", []byte("ffconcat version 1.0\nfile " + Neighbour + "\n"), unsupported},
		// Recognized as DASH where ffmpeg is built with libxml2, as
		// Debian's is (unsupported); elsewhere it is XML no demuxer reads
		// (unreadable).
		{"manifest.mpd", []byte(`<?xml version="1.0" encoding="utf-8"?>
<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT10S" minBufferTime="PT1S"
 profiles="urn:mpeg:dash:profile:isoff-on-demand:2011">
 <BaseURL>` + meta + `/computeMetadata/v1/</BaseURL>
 <Period><AdaptationSet mimeType="audio/mp4"><Representation id="a" bandwidth="64000" codecs="mp4a.40.2">
  <BaseURL>neighbour.m4a</BaseURL></Representation></AdaptationSet></Period>
</MPD>
`), []string{CodeUnsupported, CodeUnreadable}},
		{"stream.sdp", []byte("v=0\no=- 0 0 IN IP4 127.0.0.1\ns=stream\nc=IN IP4 127.0.0.1\nt=0 0\n" +
			"m=audio " + port + " RTP/AVP 0\na=rtpmap:0 PCMU/8000\na=control:rtsp://" + host + "/stream\n"), unsupported},
		{"picture.png", encodeImage(tb, "png"), unsupported},
		{"photo.jpg", encodeImage(tb, "jpeg"), unsupported},
		{"archive.zip", zipOf(tb, Neighbour, WAVSilence(8000)), unreadable},
		{"notes.txt", []byte("Meeting notes: the metadata service is at " + meta + "/latest/meta-data/\n"), unreadable},
	}
}

// WAVSilence is a WAV file of n samples of 16-bit mono silence at 8 kHz.
func WAVSilence(n int) []byte {
	var b bytes.Buffer
	data := uint32(2 * n)
	b.WriteString("RIFF")
	_ = binary.Write(&b, binary.LittleEndian, 36+data)
	b.WriteString("WAVEfmt ")
	for _, v := range []any{uint32(16), uint16(1), uint16(1), uint32(8000), uint32(16000), uint16(2), uint16(16)} {
		_ = binary.Write(&b, binary.LittleEndian, v)
	}
	b.WriteString("data")
	_ = binary.Write(&b, binary.LittleEndian, data)
	b.Write(make([]byte, data))
	return b.Bytes()
}

func encodeImage(tb testing.TB, format string) []byte {
	tb.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 32, 32))
	for x := 0; x < 32; x++ {
		img.Set(x, x, color.RGBA{R: 200, A: 255})
	}
	var b bytes.Buffer
	var err error
	if format == "png" {
		err = png.Encode(&b, img)
	} else {
		err = jpeg.Encode(&b, img, nil)
	}
	if err != nil {
		tb.Fatalf("ffmpegtest: encode %s: %v", format, err)
	}
	return b.Bytes()
}

func zipOf(tb testing.TB, name string, body []byte) []byte {
	tb.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	w, err := zw.Create(name)
	if err == nil {
		_, err = w.Write(body)
	}
	if err == nil {
		err = zw.Close()
	}
	if err != nil {
		tb.Fatalf("ffmpegtest: zip: %v", err)
	}
	return b.Bytes()
}
