package ffmpeg_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/media/ffmpeg"
)

// signature stands for the secret part of a presigned URL: it must never
// show in an error's message, nor in its cause.
const signature = "c0ffee5ecre75ignature0123456789abcdef"

// mustTools finds the real binaries, or skips the test saying what is
// missing.
func mustTools(tb testing.TB) ffmpeg.Tools {
	tb.Helper()
	tools, err := ffmpeg.Locate("", "", "")
	if err != nil {
		tb.Skipf("skipped: ffmpeg and ffprobe are needed on PATH (apt-get install ffmpeg): %v", err)
	}
	return tools
}

// fixture is a file made at test time from ffmpeg's lavfi sources.
type fixture struct {
	name string
	args []string // ffmpeg's arguments between -y and the output path
}

func sine(seconds string) []string {
	return []string{"-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=" + seconds}
}

func noise(seconds, rate string) []string {
	return []string{"-f", "lavfi", "-i", "anoisesrc=color=pink:amplitude=0.1:sample_rate=" + rate + ":duration=" + seconds}
}

func with(in []string, out ...string) []string { return append(append([]string(nil), in...), out...) }

var fixtures = []fixture{
	{"voice.ogg", with(sine("3"), "-c:a", "libopus", "-b:a", "24k")},
	{"song.mp3", with(sine("3"), "-c:a", "libmp3lame")},
	{"speech16k.wav", with(noise("3", "16000"), "-c:a", "pcm_s16le")},
	{"cd.wav", with(noise("3", "44100"), "-c:a", "pcm_s16le")},
	{"float.wav", with(sine("3"), "-c:a", "pcm_f32le")},
	{"speech.m4a", with(noise("3", "44100"), "-c:a", "aac")},
	{"speech.flac", with(noise("3", "44100"), "-c:a", "flac")},
	{"speech.webm", with(sine("3"), "-c:a", "libopus")},
	{"vorbis.ogg", with(sine("3"), "-c:a", "libvorbis")},
	{"surround.m4a", with(sine("3"), "-af", "pan=5.1|c0=c0|c1=c0|c2=c0|c3=c0|c4=c0|c5=c0", "-c:a", "aac")},
	// ffmpeg writes MP4's index (moov) at the end unless told -movflags
	// +faststart; TestMoovAtEnd checks it did.
	// Large enough (about 120 KB) that reaching the index is a seek, not a
	// read through ffmpeg's buffer.
	{"video.mp4", append(with(noise("3", "44100"), "-f", "lavfi", "-i", "testsrc=size=320x240:rate=25:duration=3"),
		"-c:a", "aac", "-b:a", "128k", "-c:v", "libx264", "-pix_fmt", "yuv420p", "-b:v", "1M", "-shortest")},
	{"silent.mp4", []string{"-f", "lavfi", "-i", "testsrc=size=64x64:rate=10:duration=2", "-c:v", "libx264", "-pix_fmt", "yuv420p"}},
	{"long.ogg", with(noise("10", "48000"), "-c:a", "libopus", "-b:a", "64k")},
	{"words.m4a", wordsFixture()}, // see split_test.go
}

// fixtureSet is the fixtures made once per test binary, and the server
// that serves them with Range support, as Object Storage does.
type fixtureSet struct {
	dir      string
	srv      *httptest.Server
	requests sync.Map // path -> *[]string of Range headers seen
}

var (
	setOnce sync.Once
	set     *fixtureSet
	setErr  error
)

// TestMain removes the fixtures and stops the server after the tests.
func TestMain(m *testing.M) {
	code := m.Run()
	if set != nil {
		set.srv.Close()
		_ = os.RemoveAll(set.dir)
	}
	os.Exit(code)
}

// mustFixtures makes the fixtures the first time it is called (about two
// seconds) and returns them with their server.
func mustFixtures(tb testing.TB) *fixtureSet {
	tb.Helper()
	tools := mustTools(tb)
	setOnce.Do(func() { set, setErr = makeFixtures(tools) })
	require.NoError(tb, setErr)
	return set
}

func makeFixtures(tools ffmpeg.Tools) (*fixtureSet, error) {
	dir, err := os.MkdirTemp("", "ffmpeg-fixtures-")
	if err != nil {
		return nil, err
	}
	fs := &fixtureSet{dir: dir}
	var wg sync.WaitGroup
	failed := make([]error, len(fixtures))
	for i, f := range fixtures {
		wg.Add(1)
		go func() {
			defer wg.Done()
			args := append([]string{"-nostdin", "-hide_banner", "-loglevel", "error", "-y"}, f.args...)
			out, err := exec.Command(tools.FFmpeg, append(args, filepath.Join(dir, f.name))...).CombinedOutput()
			if err != nil {
				failed[i] = errors.New("make " + f.name + ": " + err.Error() + ": " + string(out))
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(failed...); err != nil {
		return nil, err
	}
	// A WebM written to a pipe, as a browser's MediaRecorder writes it,
	// has no duration in its header.
	var webm bytes.Buffer
	cmd := exec.Command(tools.FFmpeg, with(append([]string{"-nostdin", "-loglevel", "error"}, sine("3")...),
		"-c:a", "libopus", "-f", "webm", "pipe:1")...)
	cmd.Stdout = &webm
	if err := cmd.Run(); err != nil {
		return nil, err
	}
	for name, body := range map[string][]byte{
		"streamed.webm": webm.Bytes(),
		"notes.txt":     []byte("these are not the sounds you are looking for\n"),
		"empty.ogg":     nil,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), body, 0o644); err != nil {
			return nil, err
		}
	}
	fs.srv = httptest.NewServer(http.HandlerFunc(fs.serve))
	return fs, nil
}

// serve answers /files/<name> with http.ServeContent (Range requests get
// 206); /status/403/… and /status/503/… with that status; /flaky/…/<name>
// like /files/ except that the first response for the path is cut after
// cutAfter bytes, as a dropped connection would cut it; and /broken/…/<name>
// cuts the first response and answers 500 to every retry.
func (fs *fixtureSet) serve(w http.ResponseWriter, r *http.Request) {
	seen, _ := fs.requests.LoadOrStore(r.URL.Path, &rangeLog{})
	seen.(*rangeLog).add(r.Header.Get("Range"))
	switch {
	case strings.HasPrefix(r.URL.Path, "/status/403/"):
		http.Error(w, "Request has expired", http.StatusForbidden)
	case strings.HasPrefix(r.URL.Path, "/status/503/"):
		http.Error(w, "Slow Down", http.StatusServiceUnavailable)
	case strings.HasPrefix(r.URL.Path, "/files/"):
		fs.serveFile(w, r, strings.TrimPrefix(r.URL.Path, "/files/"))
	case strings.HasPrefix(r.URL.Path, "/flaky/"):
		if seen.(*rangeLog).count() == 1 {
			w = &cutWriter{ResponseWriter: w, left: cutAfter}
		}
		fs.serveFile(w, r, strings.TrimPrefix(r.URL.Path, "/flaky/"))
	case strings.HasPrefix(r.URL.Path, "/broken/"):
		// Cut the first response, then refuse every retry: a connection
		// lost for good.
		if seen.(*rangeLog).count() > 1 {
			http.Error(w, "Internal Error", http.StatusInternalServerError)
			return
		}
		fs.serveFile(&cutWriter{ResponseWriter: w, left: cutAfter}, r, strings.TrimPrefix(r.URL.Path, "/broken/"))
	default:
		http.NotFound(w, r)
	}
}

func (fs *fixtureSet) serveFile(w http.ResponseWriter, r *http.Request, name string) {
	f, err := os.Open(filepath.Join(fs.dir, filepath.Base(name)))
	if err != nil {
		http.NotFound(w, r)
		return
	}
	defer f.Close()
	http.ServeContent(w, r, name, time.Time{}, f)
}

// url is the presigned-looking URL of a fixture under prefix ("files",
// "flaky", "broken", "status/403").
func (fs *fixtureSet) url(prefix, name string) string {
	return fs.srv.URL + "/" + prefix + "/" + name +
		"?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIDEXAMPLE%2F20260101%2Fru-central1%2Fs3%2Faws4_request" +
		"&X-Amz-Expires=600&X-Amz-SignedHeaders=host&X-Amz-Signature=" + signature
}

// runs numbers the uses of /flaky/ and /broken/, whose behaviour depends
// on the requests seen for a path: each use gets a path of its own.
var runs atomic.Int64

// freshURL is url with a path no request has used yet.
func (fs *fixtureSet) freshURL(prefix, name string) string {
	return fs.url(prefix+"/run"+strconv.FormatInt(runs.Add(1), 10), name)
}

// media is a Media that may read the fixtures' server (and nothing else)
// and local paths.
func (fs *fixtureSet) media(tb testing.TB, cfg ffmpeg.Config) *ffmpeg.Media {
	tb.Helper()
	cfg.InputOrigin = fs.srv.URL
	return ffmpeg.New(mustTools(tb), cfg)
}

func (fs *fixtureSet) path(name string) string { return filepath.Join(fs.dir, name) }

// ranges returns the Range headers of the requests made for path so far.
func (fs *fixtureSet) ranges(path string) []string {
	seen, ok := fs.requests.Load(path)
	if !ok {
		return nil
	}
	return seen.(*rangeLog).list()
}

type rangeLog struct {
	mu     sync.Mutex
	ranges []string
}

func (l *rangeLog) add(r string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ranges = append(l.ranges, r)
}

func (l *rangeLog) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.ranges)
}

func (l *rangeLog) list() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.ranges...)
}

// cutAfter is how many bytes of body a cut response carries.
const cutAfter = 16 << 10

// cutWriter drops the connection after left bytes of body, the way a
// network failure would: net/http closes it without finishing the body.
type cutWriter struct {
	http.ResponseWriter
	left int
}

func (c *cutWriter) Write(p []byte) (int, error) {
	if len(p) <= c.left {
		c.left -= len(p)
		return c.ResponseWriter.Write(p)
	}
	_, _ = c.ResponseWriter.Write(p[:c.left])
	c.left = 0
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
	panic(http.ErrAbortHandler)
}

// mustProbeOutput checks that b is OGG/Opus and returns its duration.
func mustProbeOutput(t *testing.T, m *ffmpeg.Media, b []byte) ffmpeg.Probe {
	t.Helper()
	path := filepath.Join(t.TempDir(), "out.ogg")
	require.NoError(t, os.WriteFile(path, b, 0o644))
	p, err := m.Probe(context.Background(), path)
	require.NoError(t, err)
	require.Equal(t, "ogg", p.Container)
	require.Len(t, p.Audio, 1)
	require.Equal(t, "opus", p.Audio[0].Codec)
	require.False(t, p.HasVideo)
	return p
}
