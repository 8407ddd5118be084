package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	stt "github.com/yandex-cloud/go-genproto/yandex/cloud/ai/stt/v3"

	"transcriber/internal/app"
	"transcriber/internal/app/withbot"
	"transcriber/internal/clock"
	"transcriber/internal/httpapi"
	"transcriber/internal/job"
	"transcriber/internal/media/ffmpeg"
	"transcriber/internal/pipeline"
	"transcriber/internal/speechkit"
	"transcriber/internal/speechkit/speechkittest"
	"transcriber/internal/storage/s3/s3test"
	"transcriber/internal/store/sqlite"
	"transcriber/internal/telegram"
	"transcriber/internal/telegram/telegramtest"
	"transcriber/internal/telegram/tgconf"
	"transcriber/internal/transcript"
	"transcriber/internal/trigger"
)

// voiceRounds is how many voice notes one benchmark iteration sends; each
// figure reported is the median of theirs.
const voiceRounds = 5

// voiceGoalMs is the goal for a voice note's overhead.
const voiceGoalMs = 1000

// voiceTranscript is what the recognizer fake answers for every voice
// note. It has no spaces or characters a form or JSON encoding would
// change, so the Bot API call that delivers it is found by its bytes.
const voiceTranscript = "Transcript-of-the-benchmark-voice-note."

// BenchmarkVoiceOverhead measures what the service adds to a Telegram
// voice note's recognition: from the webhook call to the transcript's
// arrival at the Bot API, with a recognizer that is done at its first
// check. It drives the deployed path in one process: the telegram
// function's handler (App.OnTelegram) takes the update, posts the status
// message and streams the file from the Bot API into Object Storage; the
// object's creation makes the ObjectCreate event, which the ingest
// function's handler (App.OnObjects) takes as its trigger delivers it:
// claim, accept and pin the upload, probe, reserve the audio, submit, wait
// and check, fetch the result, render and store it, save the job done,
// delete the recognition and edit the status message into the
// transcript. The App is built as the functions build it (the bot, the
// counters, the callbacks, the media tools), with the system clock and
// real sleeps, over an in-process S3 server, the SpeechKit gRPC fake, a fake
// Bot API reached through a recording proxy, SQLite for the stores and
// the real ffprobe.
//
// Not included: the platform's part (the trigger's delay between the
// upload and the ingest call, cold starts, API Gateway), the network to
// Telegram, Object Storage, SpeechKit and YDB (here each is a loopback
// call or a local file), and the recognition itself. The proxy adds a
// loopback hop to each Bot API call.
//
// This is the asynchronous path (synchronous recognition is off here;
// BenchmarkVoiceSyncOverhead measures the synchronous one). It reports
// the median of voiceRounds voice notes, in ms:
//
//   - voice-overhead-ms: the whole, against goal-ms;
//   - download-ms: from getFile's arrival at the Bot API to the source
//     object stored (getFile, the file's download, the upload);
//   - probe-ms: ffprobe through a presigned URL, and the plan;
//   - submit-ms: the recognition request;
//   - check-ms: the waits before and between checks and the checks;
//     check-wait-ms is the waits alone (the pipeline's InlineCheckFirst,
//     doubling to InlineCheckEvery, as configured, and the check rate
//     limiter's);
//   - result-ms: from the check that found the recognition done to the job
//     saved done: fetching the result, rendering, storing, saving;
//   - send-ms: from there (and the recognition's deletion) to the
//     transcript's arrival at the Bot API;
//   - other-ms: the rest: the webhook's job and status message, the claim,
//     accepting and pinning the upload, the audio's reservation, the
//     saves between steps, the progress edits, the recognition's deletion.
func BenchmarkVoiceOverhead(b *testing.B) {
	tools := benchTools(b)
	vb := newVoiceBench(b, tools, false)
	voice := voiceNote(b, tools)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var got []voicePhases
		for r := 0; r < voiceRounds; r++ {
			start, marks := vb.round(voice, fmt.Sprintf("bench-%d-%d", i, r), job.RecognitionAsync)
			got = append(got, phasesOf(b, start, marks))
		}
		m := medians(got)
		b.ReportMetric(ms(m.total), "voice-overhead-ms")
		b.ReportMetric(voiceGoalMs, "goal-ms")
		b.ReportMetric(ms(m.download), "download-ms")
		b.ReportMetric(ms(m.probe), "probe-ms")
		b.ReportMetric(ms(m.submit), "submit-ms")
		b.ReportMetric(ms(m.check), "check-ms")
		b.ReportMetric(ms(m.wait), "check-wait-ms")
		b.ReportMetric(ms(m.result), "result-ms")
		b.ReportMetric(ms(m.send), "send-ms")
		b.ReportMetric(ms(m.other), "other-ms")
		b.Logf("a voice note's overhead, median of %d: %.0f ms, of which %.0f ms waiting before and between checks",
			voiceRounds, ms(m.total), ms(m.wait))
	}
}

// voiceBench is the service as the telegram and ingest functions run it,
// with every step's time recorded on one timeline; with synchronous
// recognition on or off.
type voiceBench struct {
	b      *testing.B
	app    *app.App
	tg     *telegramtest.Server
	store  job.Store
	tl     *timeline
	events chan []byte
	chat   int64
	next   int64 // the next update and message id
}

func newVoiceBench(b *testing.B, tools ffmpeg.Tools, quick bool) *voiceBench {
	b.Helper()
	ctx := context.Background()
	sys := clock.System()
	tl := &timeline{clock: sys}
	vb := &voiceBench{b: b, tl: tl, events: make(chan []byte, 16), chat: 901, next: 1}

	vb.tg = telegramtest.Start(b)
	proxy := botAPIProxy(b, vb.tg.URL, tl)
	s3 := s3test.Start(b)
	// The in-process S3 server plays the Object Storage trigger, as in the
	// end-to-end tests; the moment the source is stored ends the download.
	s3.OnCreate(func(bucket, key string, _ int64) {
		if strings.HasPrefix(key, "sources/") {
			tl.mark("stored", tl.clock.Now())
			vb.events <- objectEvent(bucket, key)
		}
	})
	sk := speechkittest.Start(b)
	sk.Script(func(*stt.RecognizeFileRequest) speechkittest.Plan {
		p := speechkittest.DefaultPlan()
		p.PendingChecks = 0
		p.Utterances = []transcript.Utterance{{StartMs: 0, EndMs: 3000, Text: voiceTranscript, Normal: voiceTranscript}}
		return p
	})
	sk.SyncScript(func(speechkittest.SyncCall) speechkittest.SyncPlan {
		return speechkittest.SyncPlan{Text: voiceTranscript}
	})

	stores, err := sqlite.OpenSet(ctx, filepath.Join(b.TempDir(), "jobs.db"), sys)
	require.NoError(b, err)
	b.Cleanup(func() { _ = stores.Close() })
	vb.store = timedSaves{Store: stores.Jobs, tl: tl}
	stores.Jobs, stores.Agenda = vb.store, nil

	cfg, err := app.FromEnv(func(string) string { return "" })
	require.NoError(b, err)
	cfg.S3, cfg.SpeechKit = s3.Config(), sk.Config()
	cfg.FFmpegPath, cfg.FFprobePath = tools.FFmpeg, tools.FFprobe
	cfg.Telegram.Token, cfg.Telegram.WebhookSecret, cfg.Telegram.APIURL = telegramtest.Token, webhookSecret, proxy.URL
	cfg.Telegram.Allowed = tgconf.Allowed{Everyone: true}
	if !quick {
		cfg.SyncMaxDuration = 0
	}
	vb.app, err = app.New(cfg, app.Options{
		Stores:  stores,
		MakeBot: withbot.Make,
		Log:     benchLogger(),
		Sleep: func(ctx context.Context, d time.Duration) error {
			start := tl.clock.Now()
			err := clock.Sleep(ctx, d)
			tl.mark("wait", start)
			return err
		},
	})
	require.NoError(b, err)
	b.Cleanup(func() { _ = vb.app.Close() })
	require.NotNil(b, vb.app.Bot)
	// The App makes its media tools and SpeechKit client itself; the
	// pipeline's are wrapped before the first call to time their steps.
	p := vb.app.Pipeline
	p.Media = timedMedia{m: p.Media, tl: tl}
	p.Recognizer = timedRecognizer{r: p.Recognizer, tl: tl}
	if p.SyncRecognizer != nil {
		p.SyncRecognizer = timedSyncRecognizer{r: p.SyncRecognizer, tl: tl}
	}
	return vb
}

// round sends one voice note through the webhook and the ingest call,
// checks that it was recognized as want says, and returns when it started
// and the steps on its timeline.
func (vb *voiceBench) round(voice []byte, fileID string, want job.Recognition) (time.Time, []mark) {
	b := vb.b
	b.Helper()
	ctx := context.Background()
	vb.tg.AddFile(fileID, voice)
	id := vb.next
	vb.next++
	update := telegramtest.Voice(id, vb.chat, id, fileID, len(voice), "en")
	vb.tl.take()

	start := vb.tl.clock.Now()
	resp, err := vb.app.OnTelegram(ctx, &httpapi.GatewayRequest{
		HTTPMethod: http.MethodPost,
		Path:       telegram.WebhookPath,
		Headers:    map[string]string{"Content-Type": "application/json", telegram.SecretHeader: webhookSecret},
		Body:       string(update),
	})
	require.NoError(b, err)
	require.Equal(b, http.StatusOK, resp.StatusCode)
	var raw []byte
	select {
	case raw = <-vb.events:
	default:
		b.Fatal("the webhook stored no source object")
	}
	var ev trigger.ObjectEvent
	require.NoError(b, json.Unmarshal(raw, &ev))
	require.NoError(b, vb.app.OnObjects(ctx, &ev))
	marks := vb.tl.take()

	page, err := vb.store.List(ctx, fmt.Sprintf("tg:%d", vb.chat), "", 1)
	require.NoError(b, err)
	require.Len(b, page.Jobs, 1)
	j := page.Jobs[0]
	require.Equal(b, id, j.TelegramMessageID)
	require.Equal(b, job.Done, j.State, "the voice note finished in the ingest call: %s %s", j.ErrorCode, j.ErrorMessage)
	require.Equal(b, want, j.Recognition)
	return start, marks
}

// voicePhases is where one voice note's time went (see
// BenchmarkVoiceOverhead).
type voicePhases struct {
	total, download, probe, submit, check, wait, result, send, other time.Duration
}

// phasesOf reads the phases off a voice note's timeline, which starts at
// the webhook call.
func phasesOf(b *testing.B, start time.Time, marks []mark) voicePhases {
	b.Helper()
	must := func(what string) mark {
		m, n := first(marks, what)
		if n == 0 {
			b.Fatalf("the timeline has no %q: %v", what, marks)
		}
		return m
	}
	check, _ := last(marks, "check")
	done := must("save-done")
	deliver := must("deliver")
	require.True(b, check.end.Before(done.end), "the job was saved done after its last check")
	require.True(b, done.end.Before(deliver.start), "the transcript was sent after the job was saved done")
	sent := done.end
	if del, ok := last(marks, "delete"); ok && del.end.After(sent) {
		sent = del.end
	}

	var p voicePhases
	p.total = deliver.start.Sub(start)
	p.download = must("stored").end.Sub(must("botapi getFile").start)
	p.probe = sumOf(marks, "probe")
	p.submit = sumOf(marks, "submit")
	p.wait = sumOf(marks, "wait")
	p.check = p.wait + sumOf(marks, "check")
	p.result = done.end.Sub(check.end)
	p.send = deliver.start.Sub(sent)
	p.other = p.total - p.download - p.probe - p.submit - p.check - p.result - p.send
	return p
}

// medians is each phase's median over ps.
func medians(ps []voicePhases) voicePhases {
	pick := func(f func(voicePhases) time.Duration) time.Duration { return medianBy(ps, f) }
	return voicePhases{
		total:    pick(func(p voicePhases) time.Duration { return p.total }),
		download: pick(func(p voicePhases) time.Duration { return p.download }),
		probe:    pick(func(p voicePhases) time.Duration { return p.probe }),
		submit:   pick(func(p voicePhases) time.Duration { return p.submit }),
		check:    pick(func(p voicePhases) time.Duration { return p.check }),
		wait:     pick(func(p voicePhases) time.Duration { return p.wait }),
		result:   pick(func(p voicePhases) time.Duration { return p.result }),
		send:     pick(func(p voicePhases) time.Duration { return p.send }),
		other:    pick(func(p voicePhases) time.Duration { return p.other }),
	}
}

// voiceNote makes a 4-second OGG/Opus recording like the one the
// end-to-end tests send (fixtures' voice.ogg): what Telegram stores a
// voice message as.
func voiceNote(b *testing.B, tools ffmpeg.Tools) []byte {
	b.Helper()
	out := filepath.Join(b.TempDir(), "voice.ogg")
	args := append([]string{"-nostdin", "-hide_banner", "-loglevel", "error", "-y"}, tone...)
	args = append(args, "-c:a", "libopus", "-b:a", "24k", out)
	msg, err := exec.Command(tools.FFmpeg, args...).CombinedOutput()
	require.NoError(b, err, "ffmpeg: %s", msg)
	voice, err := os.ReadFile(out)
	require.NoError(b, err)
	return voice
}

// mark is one step on a timeline: what, when it started and when it ended
// (the same moment for an instant).
type mark struct {
	what       string
	start, end time.Time
}

// timeline records the steps of one voice note, from every goroutine
// that takes part in it.
type timeline struct {
	clock clock.Clock
	mu    sync.Mutex
	marks []mark
}

// mark records a step that started at start and ends now.
func (t *timeline) mark(what string, start time.Time) {
	end := t.clock.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.marks = append(t.marks, mark{what: what, start: start, end: end})
}

// take returns the steps recorded since the last take and forgets them.
func (t *timeline) take() []mark {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := t.marks
	t.marks = nil
	return out
}

// botAPIProxy passes every request on to the Bot API at target and marks
// it on tl as "botapi <method>" (a file download as "botapi file"), or as
// "deliver" when its body carries voiceTranscript. It marks each request
// from its arrival to the end of the answer.
func botAPIProxy(b *testing.B, target string, tl *timeline) *httptest.Server {
	b.Helper()
	to, err := url.Parse(target)
	require.NoError(b, err)
	rp := httputil.NewSingleHostReverseProxy(to)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := tl.clock.Now()
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, "proxy: "+err.Error(), http.StatusBadGateway)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		what := "botapi " + path.Base(r.URL.Path)
		switch {
		case bytes.Contains(body, []byte(voiceTranscript)):
			what = "deliver"
		case strings.HasPrefix(r.URL.Path, "/file/"):
			what = "botapi file"
		}
		rp.ServeHTTP(w, r)
		tl.mark(what, start)
	}))
	b.Cleanup(srv.Close)
	return srv
}

// timedSaves marks the save that ends a job done as "save-done".
type timedSaves struct {
	job.Store
	tl *timeline
}

func (s timedSaves) Save(ctx context.Context, j job.Job, n job.Next) (job.Job, error) {
	start := s.tl.clock.Now()
	saved, err := s.Store.Save(ctx, j, n)
	if err == nil && saved.State == job.Done {
		s.tl.mark("save-done", start)
	}
	return saved, err
}

// timedMedia marks the probe and the plan as "probe", and a conversion
// as "convert".
type timedMedia struct {
	m  pipeline.Media
	tl *timeline
}

func (t timedMedia) Probe(ctx context.Context, input string) (ffmpeg.Probe, error) {
	start := t.tl.clock.Now()
	defer t.tl.mark("probe", start)
	return t.m.Probe(ctx, input)
}

func (t timedMedia) PlanFor(p ffmpeg.Probe, parallel bool) (ffmpeg.Plan, error) {
	start := t.tl.clock.Now()
	defer t.tl.mark("probe", start)
	return t.m.PlanFor(p, parallel)
}

func (t timedMedia) Convert(ctx context.Context, input string, seg ffmpeg.Segment, w io.Writer) error {
	start := t.tl.clock.Now()
	defer t.tl.mark("convert", start)
	return t.m.Convert(ctx, input, seg, w)
}

func (t timedMedia) ConvertMono(ctx context.Context, input string, seg ffmpeg.Segment, w io.Writer) error {
	start := t.tl.clock.Now()
	defer t.tl.mark("convert", start)
	return t.m.ConvertMono(ctx, input, seg, w)
}

func (t timedMedia) Split(ctx context.Context, input string, plan ffmpeg.Plan, piece func(ffmpeg.Segment, io.Reader) error) error {
	start := t.tl.clock.Now()
	defer t.tl.mark("convert", start)
	return t.m.Split(ctx, input, plan, piece)
}

// timedRecognizer marks each call to the recognizer by its name.
type timedRecognizer struct {
	r  pipeline.Recognizer
	tl *timeline
}

func (t timedRecognizer) Submit(ctx context.Context, r speechkit.Request) (string, error) {
	start := t.tl.clock.Now()
	defer t.tl.mark("submit", start)
	return t.r.Submit(ctx, r)
}

func (t timedRecognizer) Check(ctx context.Context, op string) (bool, error) {
	start := t.tl.clock.Now()
	defer t.tl.mark("check", start)
	return t.r.Check(ctx, op)
}

func (t timedRecognizer) Result(ctx context.Context, op string) (transcript.Transcript, error) {
	start := t.tl.clock.Now()
	defer t.tl.mark("result", start)
	return t.r.Result(ctx, op)
}

func (t timedRecognizer) Delete(ctx context.Context, op string) error {
	start := t.tl.clock.Now()
	defer t.tl.mark("delete", start)
	return t.r.Delete(ctx, op)
}

// timedSyncRecognizer marks each synchronous request as "sync".
type timedSyncRecognizer struct {
	r  pipeline.SyncRecognizer
	tl *timeline
}

func (t timedSyncRecognizer) RecognizeSync(ctx context.Context, r speechkit.SyncRequest) (speechkit.SyncResult, error) {
	start := t.tl.clock.Now()
	defer t.tl.mark("sync", start)
	return t.r.RecognizeSync(ctx, r)
}
