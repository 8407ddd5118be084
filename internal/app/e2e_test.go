package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/apitoken"
	"transcriber/internal/app"
	"transcriber/internal/app/withbot"
	"transcriber/internal/botstate"
	"transcriber/internal/clock"
	"transcriber/internal/clock/clocktest"
	"transcriber/internal/job"
	"transcriber/internal/media/ffmpeg"
	"transcriber/internal/outbox"
	"transcriber/internal/speechkit/speechkittest"
	"transcriber/internal/storage/s3/s3test"
	"transcriber/internal/store/sqlite"
	"transcriber/internal/transcript"
	"transcriber/internal/trigger"
)

// stack is the whole service in one test: the real handlers over an
// in-process S3 server, a scripted SpeechKit gRPC server, an embedded job
// store, and the real ffmpeg. Its clock stands still unless the pipeline
// sleeps or the test moves it.
type stack struct {
	t      *testing.T
	app    *app.App
	s3     *s3test.Server
	sk     *speechkittest.Server
	store  job.Store
	dbPath string // the stores' database
	tokens apitoken.Store
	bots   botstate.Store
	box    outbox.Store
	clk    *clocktest.Fake
	events chan []byte
	ended  *endings
	ctx    context.Context
	cfg    app.Config // as the app was made with
}

func newStack(t *testing.T, tune ...func(*app.Config)) *stack {
	t.Helper()
	return newStackWith(t, nil, tune...)
}

// newStackWith is newStack with more of app.New's options, which more sets.
func newStackWith(t *testing.T, more func(*app.Options), tune ...func(*app.Config)) *stack {
	t.Helper()
	tools, err := ffmpeg.Locate("", "", "")
	if err != nil {
		t.Skipf("ffmpeg is not installed (apt-get install ffmpeg): %v", err)
	}
	st := &stack{t: t, ctx: context.Background(), events: make(chan []byte, 16), ended: &endings{}}
	st.clk = clocktest.NewFake(clock.System().Now())
	st.s3 = s3test.Start(t)
	st.sk = speechkittest.Start(t)
	st.dbPath = filepath.Join(t.TempDir(), "jobs.db")
	stores, err := sqlite.OpenSet(st.ctx, st.dbPath, st.clk)
	require.NoError(t, err)
	t.Cleanup(func() { _ = stores.Close() })
	st.store, st.tokens, st.bots, st.box = stores.Jobs, stores.Tokens, stores.Bot, stores.Outbox

	// The in-process S3 server plays the Object Storage trigger: each object
	// created under sources/ becomes the event JSON the platform sends.
	st.s3.OnCreate(func(bucket, key string, _ int64) {
		if strings.HasPrefix(key, "sources/") {
			st.events <- objectEvent(bucket, key)
		}
	})

	cfg, err := app.FromEnv(func(string) string { return "" })
	require.NoError(t, err)
	cfg.S3 = st.s3.Config()
	cfg.SpeechKit = st.sk.Config()
	cfg.FFmpegPath, cfg.FFprobePath = tools.FFmpeg, tools.FFprobe
	for _, f := range tune {
		f(&cfg)
	}
	opt := app.Options{
		Stores:   stores,
		MakeBot:  withbot.Make,
		Notifier: st.ended,
		Clock:    st.clk,
		Log:      logs.Logger(t),
		Sleep: func(ctx context.Context, d time.Duration) error {
			st.clk.Advance(d)
			return ctx.Err()
		},
	}
	if more != nil {
		more(&opt)
	}
	st.cfg = cfg
	st.app, err = app.New(cfg, opt)
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.app.Close() })
	return st
}

// endings records the jobs the pipeline says ended, as delivery will see them.
type endings struct {
	mu    sync.Mutex
	state map[string][]job.State
}

func (e *endings) Moved(context.Context, job.Job) error { return nil }

func (e *endings) Finished(_ context.Context, j job.Job) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.state == nil {
		e.state = map[string][]job.State{}
	}
	e.state[j.ID] = append(e.state[j.ID], j.State)
	return nil
}

func (e *endings) of(id string) []job.State {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.state[id]
}

func objectEvent(bucket, key string) []byte {
	return []byte(fmt.Sprintf(`{"messages":[{"event_metadata":{"event_id":"%s","event_type":"yandex.cloud.events.storage.ObjectCreate",`+
		`"created_at":"2026-11-29T10:00:00Z","cloud_id":"cloud","folder_id":"folder"},"details":{"bucket_id":%q,"object_id":%q}}]}`,
		key, bucket, key))
}

const timerEvent = `{"messages":[{"event_metadata":{"event_id":"t","event_type":"yandex.cloud.events.serverless.triggers.TimerMessage",` +
	`"created_at":"2026-11-29T10:01:00Z","cloud_id":"cloud","folder_id":"folder"},"details":{"trigger_id":"timer","payload":""}}]}`

// upload makes a job for file and PUTs the file to its presigned URL, as a
// client of the API does; it returns the job and the event the upload made.
func (st *stack) upload(file string) (job.Job, []byte) {
	t := st.t
	t.Helper()
	body, err := os.ReadFile(file)
	require.NoError(t, err)
	j, err := st.store.Create(st.ctx, job.Draft{Source: job.SourceAPI, OwnerID: "e2e", Filename: filepath.Base(file),
		SizeBytes: int64(len(body)), UploadWindow: time.Hour})
	require.NoError(t, err)
	put, err := st.app.Objects.PresignPut(st.ctx, job.SourceKey(j.ID), int64(len(body)), "", 15*time.Minute)
	require.NoError(t, err)
	req, err := http.NewRequestWithContext(st.ctx, put.Method, put.URL, strings.NewReader(string(body)))
	require.NoError(t, err)
	for k, v := range put.Headers {
		req.Header.Set(k, v)
	}
	req.ContentLength = int64(len(body))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	select {
	case ev := <-st.events:
		return j, ev
	case <-time.After(5 * time.Second):
		t.Fatal("the upload made no ObjectCreate event")
		return j, nil
	}
}

// ingest delivers an event to the ingest function's handler.
func (st *stack) ingest(raw []byte) {
	st.t.Helper()
	var ev trigger.ObjectEvent
	require.NoError(st.t, json.Unmarshal(raw, &ev))
	require.NoError(st.t, st.app.OnObjects(st.ctx, &ev))
}

// poll delivers a timer call to the poll function's handler.
func (st *stack) poll() {
	st.t.Helper()
	var ev trigger.TimerEvent
	require.NoError(st.t, json.Unmarshal([]byte(timerEvent), &ev))
	require.NoError(st.t, st.app.OnTimer(st.ctx, &ev))
}

func (st *stack) job(id string) job.Job {
	st.t.Helper()
	j, err := st.store.Get(st.ctx, id)
	require.NoError(st.t, err)
	return j
}

func (st *stack) result(id string) transcript.Transcript {
	st.t.Helper()
	r, err := st.app.Objects.Get(st.ctx, job.ResultKey(id))
	require.NoError(st.t, err)
	defer r.Close()
	var tr transcript.Transcript
	require.NoError(st.t, json.NewDecoder(r).Decode(&tr))
	return tr
}

// fixture makes a small media file with ffmpeg's generators.
func fixture(t *testing.T, name string, args ...string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), name)
	full := append([]string{"-nostdin", "-hide_banner", "-loglevel", "error", "-y"}, args...)
	cmd := exec.Command("ffmpeg", append(full, out)...)
	msg, err := cmd.CombinedOutput()
	require.NoError(t, err, "ffmpeg: %s", msg)
	return out
}

var tone = []string{"-f", "lavfi", "-i", "sine=frequency=440:duration=4:sample_rate=48000"}

func fixtures(t *testing.T) map[string]string {
	return map[string]string{
		"voice.ogg": fixture(t, "voice.ogg", append(tone, "-c:a", "libopus", "-b:a", "24k")...),
		"song.mp3":  fixture(t, "song.mp3", append(tone, "-c:a", "libmp3lame", "-b:a", "64k")...),
		"call.wav":  fixture(t, "call.wav", append(tone, "-ar", "16000", "-c:a", "pcm_s16le")...),
		// MP4 keeps its index (moov) at the end unless told otherwise: the
		// converter must seek through the presigned URL to read it.
		"clip.mp4": fixture(t, "clip.mp4", "-f", "lavfi", "-i", "testsrc=size=64x48:rate=10:duration=4",
			"-f", "lavfi", "-i", "sine=frequency=300:duration=4", "-shortest", "-c:v", "libx264", "-pix_fmt", "yuv420p",
			"-c:a", "aac", "-b:a", "64k"),
	}
}
