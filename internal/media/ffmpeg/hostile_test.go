package ffmpeg_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"transcriber/internal/errs"
	"transcriber/internal/media/ffmpeg"
	"transcriber/internal/media/ffmpeg/ffmpegtest"
)

// Each hostile file, by path and by URL on the allowed origin, fails
// Probe at once with a permanent code, and nothing it names is opened: no
// connection reaches the listener, and by URL no other object of the
// server is read (not the file next to it). Convert, which the pipeline
// runs only after Probe succeeded, refuses the same files too.
func TestHostileFilesAreRefusedAndFetchNothing(t *testing.T) {
	tools := mustTools(t)
	listener := ffmpegtest.Listen(t)
	dir := t.TempDir()
	corpus := ffmpegtest.HostileFiles(t, listener.Addr())
	require.NoError(t, os.WriteFile(filepath.Join(dir, ffmpegtest.Neighbour), ffmpegtest.WAVSilence(8000), 0o644))
	for _, f := range corpus {
		require.NoError(t, os.WriteFile(filepath.Join(dir, f.Name), f.Body, 0o644))
	}
	var (
		mu        sync.Mutex
		requested = map[string]bool{}
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		requested[r.URL.Path] = true
		mu.Unlock()
		http.ServeFile(w, r, filepath.Join(dir, filepath.Base(r.URL.Path)))
	}))
	defer srv.Close()
	m := ffmpeg.New(tools, ffmpeg.Config{InputOrigin: srv.URL})
	ctx := context.Background()

	for _, f := range corpus {
		inputs := map[string]string{
			"path": filepath.Join(dir, f.Name),
			"url":  srv.URL + "/" + f.Name + "?X-Amz-Expires=600&X-Amz-Signature=" + signature,
		}
		for how, in := range inputs {
			t.Run(f.Name+" by "+how, func(t *testing.T) {
				_, err := m.Probe(ctx, in)
				requireOneOf(t, err, f.Codes)
				requireNoSecret(t, err)

				err = m.Convert(ctx, in, ffmpeg.Segment{}, io.Discard)
				require.Error(t, err)
				require.NotEqual(t, errs.Unavailable, errs.KindOf(err), "never the storage's fault: %v", err)
				if f.Codes[0] == ffmpegtest.CodeUnsupported {
					requireOneOf(t, err, f.Codes)
				} // else junk ffmpeg may take for MP3 with a low score and fail on: media_failed

				// Split reads the input as Convert does, and refuses it alike.
				err = m.Split(ctx, in, twoPieces, func(ffmpeg.Segment, io.Reader) error {
					t.Error("a piece of a hostile file")
					return nil
				})
				require.Error(t, err)
				require.NotEqual(t, errs.Unavailable, errs.KindOf(err), "never the storage's fault: %v", err)
				if f.Codes[0] == ffmpegtest.CodeUnsupported {
					requireOneOf(t, err, f.Codes)
				}
				requireNoSecret(t, err)
			})
		}
	}
	require.Zero(t, listener.Connections(), "no connection to the hosts the files name")
	var paths []string
	for p := range requested {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		require.NotContains(t, []string{"/" + ffmpegtest.Neighbour, "/neighbour.m4a"}, p,
			"only the inputs themselves were read from the storage: %v", paths)
	}
	require.NotEmpty(t, paths, "the URLs were read")
}

// twoPieces is a plan Split follows for any input: two segments of a
// second, the format left to detection among the accepted ones.
var twoPieces = ffmpeg.Plan{Container: ffmpeg.ContainerOggOpus, Segments: []ffmpeg.Segment{{0, 1000, ""}, {1000, 1000, ""}}}

// A segment's Format is the demuxer Probe found: a source swapped for a
// playlist between Probe and Convert (or Split) is read as that format,
// and fails as a file that is not one, fetching nothing (the next attempt
// probes it again, and refuses it).
func TestConvertAndSplitReadTheProbedFormatOnly(t *testing.T) {
	tools := mustTools(t)
	listener := ffmpegtest.Listen(t)
	playlist := ffmpegtest.HostileFiles(t, listener.Addr())[0]
	path := filepath.Join(t.TempDir(), "swapped.ogg")
	require.NoError(t, os.WriteFile(path, playlist.Body, 0o644))
	m := ffmpeg.New(tools, ffmpeg.Config{})
	err := m.Convert(context.Background(), path, ffmpeg.Segment{Format: "ogg"}, io.Discard)
	require.Error(t, err)
	require.Contains(t, err.Error(), "End of file", "read as OGG, in which it is nothing")
	require.Zero(t, listener.Connections())

	err = m.Convert(context.Background(), path, ffmpeg.Segment{Format: "hls"}, io.Discard)
	require.ErrorIs(t, err, ffmpeg.ErrUnsupported, "a format off the list is never forced")

	asOgg := ffmpeg.Plan{Container: ffmpeg.ContainerOggOpus, Segments: []ffmpeg.Segment{{0, 1000, "ogg"}, {1000, 1000, "ogg"}}}
	none := func(ffmpeg.Segment, io.Reader) error { t.Error("a piece of a playlist"); return nil }
	err = m.Split(context.Background(), path, asOgg, none)
	require.Error(t, err)
	require.Contains(t, err.Error(), "End of file", "Split too reads it as OGG")
	asOgg.Segments[0].Format, asOgg.Segments[1].Format = "hls", "hls"
	require.ErrorIs(t, m.Split(context.Background(), path, asOgg, none), ffmpeg.ErrUnsupported)
	require.Zero(t, listener.Connections())
}

// The only URL ffmpeg is given is one on the storage's origin: any other
// is refused before ffprobe or ffmpeg runs, as a deployment bug (Internal),
// not the sender's fault.
func TestURLOffTheOriginIsRefusedBeforeAnythingRuns(t *testing.T) {
	tools := mustTools(t)
	listener := ffmpegtest.Listen(t)
	fs := mustFixtures(t)
	m := fs.media(t, ffmpeg.Config{})
	ctx := context.Background()
	elsewhere := []string{
		"http://" + listener.Addr() + "/files/voice.ogg?X-Amz-Signature=" + signature,
		"http://" + listener.Addr() + "@" + strings.TrimPrefix(fs.srv.URL, "http://") + "/files/voice.ogg",
		strings.Replace(fs.url("files", "voice.ogg"), "http://", "https://", 1),
	}
	for _, in := range elsewhere {
		_, err := m.Probe(ctx, in)
		require.ErrorIs(t, err, ffmpeg.ErrInputRefused, in)
		require.Equal(t, errs.Internal, errs.KindOf(err))
		requireNoSecret(t, err)
		err = m.Convert(ctx, in, ffmpeg.Segment{}, io.Discard)
		require.ErrorIs(t, err, ffmpeg.ErrInputRefused, in)
		err = m.Split(ctx, in, twoPieces, func(ffmpeg.Segment, io.Reader) error { return nil })
		require.ErrorIs(t, err, ffmpeg.ErrInputRefused, in)
	}
	_, err := ffmpeg.New(tools, ffmpeg.Config{}).Probe(ctx, "http://"+listener.Addr()+"/x.ogg")
	require.ErrorIs(t, err, ffmpeg.ErrInputRefused, "with no origin configured, no URL is read")
	require.Zero(t, listener.Connections(), "nothing ran, so nothing connected")

	_, err = m.Probe(ctx, fs.url("files", "voice.ogg"))
	require.NoError(t, err, "the origin itself is read")
}

// An https origin is read with https,tls,tcp alone.
func TestProbeOverHTTPS(t *testing.T) {
	tools := mustTools(t)
	fs := mustFixtures(t)
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeFile(w, r, fs.path(filepath.Base(r.URL.Path)))
	}))
	defer srv.Close()
	m := ffmpeg.New(tools, ffmpeg.Config{InputOrigin: srv.URL})
	p, err := m.Probe(context.Background(), srv.URL+"/speech.m4a?X-Amz-Signature="+signature)
	if err != nil && strings.Contains(err.Error(), "Protocol not found") {
		t.Skipf("this ffmpeg has no TLS: %v", err)
	}
	require.NoError(t, err)
	require.Equal(t, mp4Family, p.Container)
}

// requireOneOf checks that err has one of the codes, is Permanent, and has
// that sentinel's message: the sender's file is at fault, and it is never
// tried again.
func requireOneOf(t *testing.T, err error, codes []string) {
	t.Helper()
	require.Error(t, err)
	sentinels := map[string]*errs.Error{
		ffmpegtest.CodeUnsupported: ffmpeg.ErrUnsupported,
		ffmpegtest.CodeUnreadable:  ffmpeg.ErrUnreadable,
	}
	for _, c := range codes {
		if w := sentinels[c]; errors.Is(err, w) {
			require.Equal(t, errs.Permanent, errs.KindOf(err))
			require.Equal(t, w.Message, errs.MessageOf(err))
			return
		}
	}
	t.Fatalf("want one of %v, got %s: %v", codes, errs.CodeOf(err), err)
}
