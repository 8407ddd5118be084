package pipeline_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	stt "github.com/yandex-cloud/go-genproto/yandex/cloud/ai/stt/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"transcriber/internal/job"
	"transcriber/internal/media/ffmpeg"
	"transcriber/internal/media/oggopus/oggtest"
	"transcriber/internal/pipeline"
	"transcriber/internal/speechkit"
	"transcriber/internal/speechkit/speechkittest"
	"transcriber/internal/spend"
	"transcriber/internal/transcript"
)

// syncMedia is a source of durationMs of audio with channels channels,
// converted as one piece: Convert keeps its channels, ConvertMono mixes
// them into one. It records which was asked.
type syncMedia struct {
	pipeline.Media
	durationMs int64
	channels   int
	// holdsMs, when set, is the audio each conversion writes instead: a
	// file whose header says durationMs and holds more.
	holdsMs int64
	mu      sync.Mutex
	probes  int
	mono    int
	kept    int
}

func (m *syncMedia) Probe(context.Context, string) (ffmpeg.Probe, error) {
	m.mu.Lock()
	m.probes++
	m.mu.Unlock()
	return ffmpeg.Probe{Container: "ogg", DurationMs: m.durationMs,
		Audio: []ffmpeg.AudioStream{{Codec: "opus", Channels: m.channels, SampleRate: 48000}}}, nil
}

func (m *syncMedia) PlanFor(pr ffmpeg.Probe, _ bool) (ffmpeg.Plan, error) {
	return ffmpeg.Plan{Container: "OGG_OPUS", Segments: []ffmpeg.Segment{{DurationMs: pr.DurationMs}}}, nil
}

func (m *syncMedia) Convert(_ context.Context, _ string, seg ffmpeg.Segment, w io.Writer) error {
	m.mu.Lock()
	m.kept++
	m.mu.Unlock()
	_, err := w.Write(oggtest.SynthChannels(m.holds(seg), m.channels))
	return err
}

// holds is the audio a conversion of seg writes.
func (m *syncMedia) holds(seg ffmpeg.Segment) int64 {
	if m.holdsMs > 0 {
		return m.holdsMs
	}
	return seg.DurationMs
}

func (m *syncMedia) ConvertMono(_ context.Context, _ string, seg ffmpeg.Segment, w io.Writer) error {
	m.mu.Lock()
	m.mono++
	m.mu.Unlock()
	_, err := w.Write(oggtest.SynthChannels(m.holds(seg), 1))
	return err
}

// syncObjects keeps what is stored and gives it back.
type syncObjects struct{ featureObjects }

func (o *syncObjects) Get(_ context.Context, key string) (io.ReadCloser, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	body, ok := o.put[key]
	if !ok {
		return nil, errors.New("no such object: " + key)
	}
	return io.NopCloser(strings.NewReader(string(body))), nil
}

func (o *syncObjects) stored(key string) []byte {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.put[key]
}

// endedJobs records the jobs the notifier hears ended, and the states it
// hears jobs move to.
type endedJobs struct {
	mu    sync.Mutex
	ended map[string][]job.State
	moved []job.State
}

func (n *endedJobs) Moved(_ context.Context, j job.Job) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.moved = append(n.moved, j.State)
	return nil
}

func (n *endedJobs) Finished(_ context.Context, j job.Job) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.ended == nil {
		n.ended = map[string][]job.State{}
	}
	n.ended[j.ID] = append(n.ended[j.ID], j.State)
	return nil
}

func (n *endedJobs) of(id string) []job.State {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.ended[id]
}

// syncEnv is a pipeline on the embedded store and counters whose
// recognizer is SpeechKit's client, both doors, against the in-process
// fake: gRPC for the asynchronous one, the REST endpoint for the
// synchronous one.
type syncEnv struct {
	*quotaEnv
	sk      *speechkittest.Server
	objects *syncObjects
	media   *syncMedia
	told    *endedJobs
	sent    *sentAt
	p       *pipeline.Pipeline
}

// sentAt is a synchronous recognizer that records the clock's time of
// each request it passes on.
type sentAt struct {
	pipeline.SyncRecognizer
	clk interface{ Now() time.Time }
	mu  sync.Mutex
	at  []time.Time
}

func (s *sentAt) RecognizeSync(ctx context.Context, req speechkit.SyncRequest) (speechkit.SyncResult, error) {
	s.mu.Lock()
	s.at = append(s.at, s.clk.Now())
	s.mu.Unlock()
	return s.SyncRecognizer.RecognizeSync(ctx, req)
}

func (s *sentAt) times() []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.at...)
}

// newSyncEnv's recordings are durationMs long with channels channels;
// tune changes the client's configuration and the pipeline's.
func newSyncEnv(t *testing.T, durationMs int64, channels int, tune ...func(*speechkit.Config, *pipeline.Config)) *syncEnv {
	t.Helper()
	e := &syncEnv{quotaEnv: newQuotaEnv(t), sk: speechkittest.Start(t), objects: &syncObjects{},
		media: &syncMedia{durationMs: durationMs, channels: channels}, told: &endedJobs{}}
	skc := e.sk.Config()
	cfg := pipeline.Config{Counters: e.counters, RequestsPerHour: 500,
		Limits: spend.Limits{AudioPerDay: time.Hour}, SyncMaxDuration: speechkit.MaxSyncDuration}
	for _, f := range tune {
		f(&skc, &cfg)
	}
	client, err := speechkit.New(skc)
	require.NoError(t, err)
	t.Cleanup(func() { _ = client.Close() })
	e.sent = &sentAt{SyncRecognizer: client, clk: e.clk}
	e.p = pipeline.New(pipeline.Deps{
		Store: e.st, Objects: e.objects, Media: e.media, Recognizer: client, SyncRecognizer: e.sent, Notifier: e.told,
		Clock: e.clk, Log: quiet(),
		Sleep: func(_ context.Context, d time.Duration) error { e.clk.Advance(d); return nil },
	}, cfg)
	return e
}

// accepted makes a job of the draft d whose source is accepted: ingest
// takes it at the probe.
func (e *syncEnv) accepted(t *testing.T, d job.Draft) job.Job {
	t.Helper()
	d.Source, d.OwnerID, d.ChargedTo, d.Filename, d.SizeBytes = job.SourceAPI, "o", "tok:a", "a.ogg", 10
	j, err := e.st.Create(e.ctx, d)
	require.NoError(t, err)
	j, err = e.st.Claim(e.ctx, j.ID, job.Ingest)
	require.NoError(t, err)
	j.State = job.Created
	j, err = e.st.Save(e.ctx, j, job.Next{})
	require.NoError(t, err)
	return j
}

// uploaded makes a fast job whose accepted source is src.
func (e *syncEnv) uploaded(t *testing.T, src []byte) job.Job {
	t.Helper()
	j := e.accepted(t, job.Draft{Priority: job.PriorityFast})
	require.NoError(t, e.objects.Put(e.ctx, job.AcceptedKey(j.ID), src, "audio/ogg"))
	return j
}

// untilEnded runs the poll function as the timer would until j ended.
func (e *syncEnv) untilEnded(t *testing.T, id string) job.Job {
	t.Helper()
	for i := 0; ; i++ {
		j := e.get(t, id)
		if j.State.Terminal() {
			return j
		}
		require.Less(t, i, 50, "the job never ended: %+v", j)
		e.clk.Set(j.NextRunAt)
		_, err := e.p.Poll(e.ctx)
		require.NoError(t, err)
	}
}

func (e *syncEnv) result(t *testing.T, id string) transcript.Transcript {
	t.Helper()
	var tr transcript.Transcript
	require.NoError(t, json.Unmarshal(e.objects.stored(job.ResultKey(id)), &tr))
	return tr
}

// requireAsyncOnce checks a fast job that went the asynchronous way: done,
// once, with no failure on it, from one asynchronous recognition.
func (e *syncEnv) requireAsyncOnce(t *testing.T, j job.Job) {
	t.Helper()
	require.Equal(t, job.Done, j.State, "%s %s", j.ErrorCode, j.ErrorMessage)
	require.Empty(t, j.ErrorCode, "nothing surfaces as a failure")
	require.Equal(t, job.RecognitionAsync, j.Recognition)
	require.Equal(t, 1, e.sk.RecognizeCalls(), "one asynchronous recognition")
	require.Equal(t, []job.State{job.Done}, e.told.of(j.ID), "one transcript delivered")
	require.Equal(t, "Привет мир.", e.result(t, j.ID).Utterances[0].Normal, "the asynchronous transcript")
	require.Equal(t, int64(15), spend.JobBilled(j), "billed by the asynchronous rule")
}

// A fast job of 6 s of one channel is recognized in the call that took
// its upload: one synchronous request carrying the audio stored for it,
// no asynchronous one, nothing of the asynchronous quota or the places in
// flight, and its text as the transcript over the whole audio, billed as
// the answer said.
func TestAFastShortJobIsRecognizedSynchronouslyInTheUploadsCall(t *testing.T) {
	e := newSyncEnv(t, 6_000, 1)
	e.sk.SyncScript(func(speechkittest.SyncCall) speechkittest.SyncPlan {
		return speechkittest.SyncPlan{Text: "короткая заметка", BillingUnits: "30"}
	})
	j := e.accepted(t, job.Draft{Priority: job.PriorityFast, Language: "ru-RU"})
	require.NoError(t, e.p.Uploaded(e.ctx, job.SourceKey(j.ID)))

	got := e.get(t, j.ID)
	require.Equal(t, job.Done, got.State, "done within the call: %s %s", got.ErrorCode, got.ErrorMessage)
	require.Equal(t, job.RecognitionSync, got.Recognition)
	require.Equal(t, int64(30), got.BilledSeconds, "the answer's YaCloud-Billing-Units")
	require.Equal(t, int64(30), spend.JobBilled(got))
	require.Zero(t, e.sk.RecognizeCalls(), "no asynchronous request")
	calls := e.sk.SyncCalls()
	require.Len(t, calls, 1)
	require.Equal(t, http.StatusOK, calls[0].Status)
	require.Equal(t, 1, calls[0].Channels)
	require.Equal(t, int64(6_000), calls[0].DurationMs)
	require.Equal(t, "ru-RU", calls[0].Query.Get("lang"))
	require.Equal(t, e.objects.stored(job.AudioKey(j.ID, 0)), calls[0].Audio, "what is sent is what was made, metered and stored")
	require.Equal(t, 1, e.media.mono, "mixed down to one channel")
	require.Zero(t, e.media.kept)

	tr := e.result(t, j.ID)
	require.Equal(t, []transcript.Utterance{{StartMs: 0, EndMs: 6_000, Text: "короткая заметка", Normal: "короткая заметка"}}, tr.Utterances)
	require.Equal(t, int64(30), tr.BilledSeconds)
	require.Equal(t, "ru-RU", tr.Language)
	require.Equal(t, []job.State{job.Done}, e.told.of(j.ID))
	require.Empty(t, e.told.moved, "no progress between the upload and the transcript")

	require.Equal(t, int64(1), e.used(t, speechkit.SyncQuotaKey, e.clk.Now().Truncate(speechkit.SyncWindow)), "one place of the quota")
	require.Zero(t, e.used(t, "speechkit_requests", time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)), "none of the asynchronous quota")
	require.Equal(t, int64(30), e.dayUsed(t, "tok:a"), "what the answer billed, past the 15 s reserved")
	require.Equal(t, int64(6), e.used(t, spend.AudioDayKey("tok:a"), today), "its audio")

	// A redelivered event finds the job done and does nothing.
	require.NoError(t, e.p.Uploaded(e.ctx, job.SourceKey(j.ID)))
	require.Equal(t, 1, e.sk.SyncCallCount())
	require.Equal(t, []job.State{job.Done}, e.told.of(j.ID))
}

// Without the billing header, the synchronous rule: 15-second units.
func TestASynchronousAnswerWithoutItsBillIsBilledByTheRule(t *testing.T) {
	e := newSyncEnv(t, 16_000, 1)
	e.sk.SyncScript(func(speechkittest.SyncCall) speechkittest.SyncPlan {
		return speechkittest.SyncPlan{NoBillingHeader: true}
	})
	j := e.accepted(t, job.Draft{Priority: job.PriorityFast})
	require.NoError(t, e.p.Uploaded(e.ctx, job.SourceKey(j.ID)))
	got := e.get(t, j.ID)
	require.Equal(t, job.RecognitionSync, got.Recognition)
	require.Equal(t, int64(30), got.BilledSeconds)
}

// A plain mono Ogg Opus file, what Telegram keeps a voice note as, goes to
// the synchronous API as it is: not probed, not converted, its length what
// its packets hold, counted and reserved before it is sent; the piece
// stored is the file.
func TestAPlainMonoVoiceNoteGoesAsItIs(t *testing.T) {
	e := newSyncEnv(t, 6_000, 1)
	voice := oggtest.Synth(6_000, 0)
	j := e.uploaded(t, voice)
	require.NoError(t, e.p.Uploaded(e.ctx, job.SourceKey(j.ID)))

	got := e.get(t, j.ID)
	require.Equal(t, job.Done, got.State, "%s %s", got.ErrorCode, got.ErrorMessage)
	require.Equal(t, job.RecognitionSync, got.Recognition)
	require.Equal(t, int64(6_000), got.DurationMs)
	require.Equal(t, 1, got.Features.Channels)
	require.Len(t, e.sk.SyncCalls(), 1)
	require.Equal(t, voice, e.sk.SyncCalls()[0].Audio, "sent as it is")
	require.Equal(t, voice, e.objects.stored(job.AudioKey(j.ID, 0)), "stored as it is")
	require.Zero(t, e.media.probes+e.media.mono+e.media.kept, "neither probed nor converted")
	require.Equal(t, int64(15), e.dayUsed(t, "tok:a"), "billed one synchronous unit, as any recognition")
	require.Equal(t, int64(6), e.used(t, spend.AudioDayKey("tok:a"), today), "its audio")
	require.Zero(t, e.sk.RecognizeCalls())
}

// A source that is not a plain mono Ogg Opus file, or that says another
// length than it holds, is probed and converted as before, and the
// converted audio is what is sent; one longer than the synchronous limit
// goes the normal way.
func TestWhatIsNotAPlainMonoVoiceNoteIsConverted(t *testing.T) {
	badCRC := oggtest.Synth(6_000, 0)
	badCRC[47+27+1+8] ^= 1 // the comment header's vendor length, past its page's checksum
	for name, c := range map[string]struct {
		src  []byte
		sync bool
	}{
		"stereo":               {src: oggtest.SynthChannels(6_000, 2), sync: true},
		"says 60 s, holds 6 s": {src: oggtest.Synth(6_000, 60_000), sync: true},
		"says 2 s, holds 6 s":  {src: oggtest.Synth(6_000, 2_000), sync: true},
		"a wrong checksum":     {src: badCRC, sync: true},
		"an MP3":               {src: []byte("ID3\x04\x00\x00\x00\x00\x00\x00 an mp3"), sync: true},
		"40 s":                 {src: oggtest.Synth(40_000, 0)},
	} {
		t.Run(name, func(t *testing.T) {
			e := newSyncEnv(t, 6_000, 1)
			if !c.sync {
				e.media.durationMs = 40_000
			}
			j := e.uploaded(t, c.src)
			require.NoError(t, e.p.Uploaded(e.ctx, job.SourceKey(j.ID)))
			got := e.untilEnded(t, j.ID)
			require.Equal(t, job.Done, got.State, "%s %s", got.ErrorCode, got.ErrorMessage)
			require.Equal(t, 1, e.media.probes, "probed")
			if !c.sync {
				require.Equal(t, job.RecognitionAsync, got.Recognition)
				require.Equal(t, 1, e.media.kept, "converted as any recording")
				require.Zero(t, e.sk.SyncCallCount())
				return
			}
			require.Equal(t, job.RecognitionSync, got.Recognition)
			require.Equal(t, 1, e.media.mono, "converted to one channel")
			require.Len(t, e.sk.SyncCalls(), 1)
			require.NotEqual(t, c.src, e.sk.SyncCalls()[0].Audio, "not sent as it is")
			require.Equal(t, e.objects.stored(job.AudioKey(j.ID, 0)), e.sk.SyncCalls()[0].Audio)
		})
	}
}

// A stereo recording is mixed into one channel, which is what is stored
// and sent.
func TestAStereoFastJobIsSentAsOneChannel(t *testing.T) {
	e := newSyncEnv(t, 8_000, 2)
	j := e.accepted(t, job.Draft{Priority: job.PriorityFast})
	require.NoError(t, e.p.Uploaded(e.ctx, job.SourceKey(j.ID)))
	got := e.get(t, j.ID)
	require.Equal(t, job.Done, got.State, "%s %s", got.ErrorCode, got.ErrorMessage)
	require.Equal(t, job.RecognitionSync, got.Recognition)
	require.Equal(t, 1, got.Features.Channels)
	require.Equal(t, 1, e.sk.SyncCalls()[0].Channels)
	require.Equal(t, 1, e.media.mono)
	require.Zero(t, e.sk.RecognizeCalls())
}

// Whatever stops the synchronous request — SpeechKit's quota, its trouble,
// a time-out, a broken connection, a file it does not take — the job goes
// the asynchronous way, once, in the same call, and ends done with no
// failure on it.
func TestASynchronousRefusalSendsTheJobTheAsynchronousWayOnce(t *testing.T) {
	for name, status := range map[string]int{
		"429 quota": http.StatusTooManyRequests, "500": http.StatusInternalServerError,
		"503": http.StatusServiceUnavailable, "504": http.StatusGatewayTimeout, "400 unfit": http.StatusBadRequest,
	} {
		t.Run(name, func(t *testing.T) {
			e := newSyncEnv(t, 6_000, 1)
			e.sk.SyncScript(func(speechkittest.SyncCall) speechkittest.SyncPlan { return speechkittest.SyncPlan{Status: status} })
			j := e.accepted(t, job.Draft{Priority: job.PriorityFast})
			require.NoError(t, e.p.Uploaded(e.ctx, job.SourceKey(j.ID)))
			got := e.untilEnded(t, j.ID)
			e.requireAsyncOnce(t, got)
			require.Equal(t, 1, e.sk.SyncCallCount(), "tried once")
			require.Equal(t, status, e.sk.SyncCalls()[0].Status)
		})
	}

	t.Run("a time-out", func(t *testing.T) {
		never := make(chan struct{})
		e := newSyncEnv(t, 6_000, 1, func(c *speechkit.Config, _ *pipeline.Config) { c.SyncTimeout = 200 * time.Millisecond })
		e.sk.SyncScript(func(speechkittest.SyncCall) speechkittest.SyncPlan { return speechkittest.SyncPlan{Hold: never} })
		j := e.accepted(t, job.Draft{Priority: job.PriorityFast})
		require.NoError(t, e.p.Uploaded(e.ctx, job.SourceKey(j.ID)))
		e.requireAsyncOnce(t, e.untilEnded(t, j.ID))
		require.Equal(t, 1, e.sk.SyncCallCount())
	})

	t.Run("a transport error", func(t *testing.T) {
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		gone := "http://" + lis.Addr().String() + speechkittest.SyncPath
		require.NoError(t, lis.Close()) // nothing listens there any more
		e := newSyncEnv(t, 6_000, 1, func(c *speechkit.Config, _ *pipeline.Config) { c.SyncURL = gone })
		j := e.accepted(t, job.Draft{Priority: job.PriorityFast})
		require.NoError(t, e.p.Uploaded(e.ctx, job.SourceKey(j.ID)))
		e.requireAsyncOnce(t, e.untilEnded(t, j.ID))
		require.Zero(t, e.sk.SyncCallCount())
	})
}

// downSpeechKit scripts the fake so that its synchronous API answers 503
// while syncDown is set and its asynchronous one refuses submissions as
// UNAVAILABLE while asyncDown is.
func downSpeechKit(e *syncEnv, syncDown, asyncDown *atomic.Bool) {
	e.sk.SyncScript(func(speechkittest.SyncCall) speechkittest.SyncPlan {
		if syncDown.Load() {
			return speechkittest.SyncPlan{Status: http.StatusServiceUnavailable}
		}
		return speechkittest.SyncPlan{}
	})
	e.sk.Script(func(*stt.RecognizeFileRequest) speechkittest.Plan {
		if asyncDown.Load() {
			return speechkittest.Plan{Err: status.Error(codes.Unavailable, "speechkit is down")}
		}
		return speechkittest.DefaultPlan()
	})
}

// While SpeechKit is out for everyone, synchronous requests that fail
// open the synchronous API's breaker, as submissions that fail open
// SpeechKit's: a fast job then makes no synchronous try, which would only
// wait out its time-out, and is held at its submission with the rest, its
// attempt not counted. When SpeechKit is back every job ends done, the one
// held before its try recognized synchronously then.
func TestWhileSpeechKitIsOutAFastJobMakesNoSynchronousTry(t *testing.T) {
	e := newSyncEnv(t, 6_000, 1)
	var syncDown, asyncDown atomic.Bool
	syncDown.Store(true)
	asyncDown.Store(true)
	downSpeechKit(e, &syncDown, &asyncDown)
	var ids []string
	for range 4 {
		j := e.accepted(t, job.Draft{Priority: job.PriorityFast})
		require.NoError(t, e.p.Uploaded(e.ctx, job.SourceKey(j.ID)))
		ids = append(ids, j.ID)
	}
	// Three synchronous 503s in a row open the one breaker, three refused
	// submissions the other: the fourth job tries neither.
	require.Equal(t, 3, e.sk.SyncCallCount(), "no synchronous try once its breaker is open")
	require.Equal(t, 3, e.sk.RecognizeCalls())
	last := e.get(t, ids[3])
	require.Equal(t, job.Converted, last.State, "held before its try")
	require.Empty(t, last.Recognition)
	require.Zero(t, last.Attempts, "an outage's wait is no attempt")
	require.Zero(t, e.get(t, ids[2]).Attempts, "the failure that opened the breaker is no attempt")

	syncDown.Store(false)
	asyncDown.Store(false)
	for _, id := range ids {
		got := e.untilEnded(t, id)
		require.Equal(t, job.Done, got.State, "%s %s", got.ErrorCode, got.ErrorMessage)
	}
	for i, want := range []job.Recognition{job.RecognitionAsync, job.RecognitionAsync, job.RecognitionAsync, job.RecognitionSync} {
		require.Equal(t, want, e.get(t, ids[i]).Recognition, "job %d", i)
	}
	require.Equal(t, 4, e.sk.SyncCallCount(), "the job held before its try is tried once SpeechKit is back")
}

// When only the synchronous API is out, its breaker opens and fast jobs go
// the asynchronous way at once, none held: the asynchronous door is not
// the synchronous one's hostage. Once its interval ends, a job's try is
// the probe, and its answer closes the breaker for the next.
func TestWhenOnlyTheSynchronousAPIIsOutFastJobsGoAsynchronouslyAtOnce(t *testing.T) {
	e := newSyncEnv(t, 6_000, 1)
	var syncDown, asyncDown atomic.Bool
	syncDown.Store(true)
	downSpeechKit(e, &syncDown, &asyncDown)
	upload := func() job.Job {
		t.Helper()
		j := e.accepted(t, job.Draft{Priority: job.PriorityFast})
		require.NoError(t, e.p.Uploaded(e.ctx, job.SourceKey(j.ID)))
		got := e.untilEnded(t, j.ID)
		require.Equal(t, job.Done, got.State, "%s %s", got.ErrorCode, got.ErrorMessage)
		require.Zero(t, got.Attempts, "nothing failed")
		return got
	}
	for i := range 5 {
		got := upload()
		require.Equal(t, job.RecognitionAsync, got.Recognition, "job %d", i)
	}
	require.Equal(t, 3, e.sk.SyncCallCount(), "three 503s open the breaker; the next two make no try")
	require.Equal(t, 5, e.sk.RecognizeCalls(), "every job recognized asynchronously, none held")

	syncDown.Store(false)
	e.clk.Advance(time.Minute) // past the breaker's interval
	for i := range 2 {
		got := upload()
		require.Equal(t, job.RecognitionSync, got.Recognition, "job %d after the outage", i)
	}
	require.Equal(t, 5, e.sk.SyncCallCount(), "the probe, then a closed breaker")
}

// takeSyncPlaces takes n places of the synchronous quota at the time at,
// as other instances would, and puts the clock back.
func (e *syncEnv) takeSyncPlaces(t *testing.T, at time.Time, n int) {
	t.Helper()
	now := e.clk.Now()
	e.clk.Set(at)
	defer e.clk.Set(now)
	for range n {
		ok, _, err := speechkit.TakeSyncPlace(e.ctx, e.counters, e.clk)
		require.NoError(t, err)
		require.True(t, ok)
	}
}

// A fast job that finds SpeechKit's 20 synchronous requests of the second
// taken (counted for every instance in the shared counters) waits within
// its call for the next place, 2 s on at most, and is answered
// synchronously then: the asynchronous way could wait out its hour's
// window for a note the synchronous door takes a second or two later.
func TestANoteThatMissedItsSecondWaitsForTheNextPlace(t *testing.T) {
	e := newSyncEnv(t, 6_000, 1)
	took := e.clk.Now()
	e.takeSyncPlaces(t, took, speechkit.SyncRequestsPerSecond)
	j := e.accepted(t, job.Draft{Priority: job.PriorityFast})
	require.NoError(t, e.p.Uploaded(e.ctx, job.SourceKey(j.ID)))

	got := e.get(t, j.ID)
	require.Equal(t, job.Done, got.State, "done within the call: %s %s", got.ErrorCode, got.ErrorMessage)
	require.Equal(t, job.RecognitionSync, got.Recognition)
	require.Zero(t, e.sk.RecognizeCalls(), "not sent the asynchronous way")
	require.Equal(t, []time.Time{took.Add(2 * time.Second)}, e.sent.times(),
		"sent when the twenty's window and the three after it are over, no sooner")
}

// A fast job that finds no place within the wait goes the asynchronous
// way, sending nothing synchronously.
func TestANoteWithNoPlaceWithinTheWaitGoesAsynchronous(t *testing.T) {
	e := newSyncEnv(t, 6_000, 1)
	e.takeSyncPlaces(t, e.clk.Now(), speechkit.SyncRequestsPerSecond)
	e.takeSyncPlaces(t, e.clk.Now().Add(2*time.Second), speechkit.SyncRequestsPerSecond) // the next place, taken
	j := e.accepted(t, job.Draft{Priority: job.PriorityFast})
	require.NoError(t, e.p.Uploaded(e.ctx, job.SourceKey(j.ID)))
	e.requireAsyncOnce(t, e.untilEnded(t, j.ID))
	require.Zero(t, e.sk.SyncCallCount())
}

// A burst of fast jobs, one after another faster than 20 a second: every
// one is answered synchronously, none sent the asynchronous way, and no
// span of one second holds more than 20 of their requests (nor one of a
// second and a half, the bound's margin for a request's send).
func TestABurstOfNotesKeepsTwentyInAnySecond(t *testing.T) {
	e := newSyncEnv(t, 6_000, 1)
	const notes = 65
	for i := range notes {
		j := e.accepted(t, job.Draft{Priority: job.PriorityFast})
		require.NoError(t, e.p.Uploaded(e.ctx, job.SourceKey(j.ID)))
		require.Equal(t, job.RecognitionSync, e.get(t, j.ID).Recognition, "note %d", i)
		e.clk.Advance(7 * time.Millisecond) // the next note
	}
	require.Zero(t, e.sk.RecognizeCalls(), "none sent the asynchronous way")
	sent := e.sent.times()
	require.Len(t, sent, notes)
	for _, span := range []time.Duration{time.Second, time.Second + speechkit.SyncSendWithin} {
		for i := range sent {
			in := 0
			for _, at := range sent[i:] {
				if at.Sub(sent[i]) <= span {
					in++
				}
			}
			require.LessOrEqual(t, in, speechkit.SyncRequestsPerSecond, "requests within %s of %s", span, sent[i])
		}
	}
}

// Only a fast job whose recording is short enough and which asks for
// nothing the synchronous API does not give goes synchronously; the
// others are recognized as normal jobs, sending nothing synchronously.
func TestWhichJobsGoSynchronously(t *testing.T) {
	tests := map[string]struct {
		d          job.Draft
		durationMs int64
		max        time.Duration
		sync       bool
	}{
		"fast, 30 s":                 {d: job.Draft{Priority: job.PriorityFast}, durationMs: 30_000, sync: true},
		"fast, 31 s":                 {d: job.Draft{Priority: job.PriorityFast}, durationMs: 31_000},
		"fast, over a lower setting": {d: job.Draft{Priority: job.PriorityFast}, durationMs: 11_000, max: 10 * time.Second},
		"fast, the setting at 0":     {d: job.Draft{Priority: job.PriorityFast}, durationMs: 5_000, max: -1},
		"fast with speakers":         {d: job.Draft{Priority: job.PriorityFast, Speakers: true}, durationMs: 5_000},
		"fast with a summary":        {d: job.Draft{Priority: job.PriorityFast, Summary: true}, durationMs: 5_000},
		"fast, language detection":   {d: job.Draft{Priority: job.PriorityFast, Language: speechkit.AutoLanguage}, durationMs: 5_000},
		"normal":                     {d: job.Draft{Priority: job.PriorityNormal}, durationMs: 5_000},
		"deferred":                   {d: job.Draft{Priority: job.PriorityDeferred}, durationMs: 5_000},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			e := newSyncEnv(t, tc.durationMs, 1, func(_ *speechkit.Config, c *pipeline.Config) {
				switch {
				case tc.max < 0:
					c.SyncMaxDuration = 0
				case tc.max > 0:
					c.SyncMaxDuration = tc.max
				}
			})
			j := e.accepted(t, tc.d)
			require.NoError(t, e.p.Uploaded(e.ctx, job.SourceKey(j.ID)))
			got := e.untilEnded(t, j.ID)
			require.Equal(t, job.Done, got.State, "%s %s", got.ErrorCode, got.ErrorMessage)
			if tc.sync {
				require.Equal(t, job.RecognitionSync, got.Recognition)
				require.Equal(t, 1, e.sk.SyncCallCount())
				require.Zero(t, e.sk.RecognizeCalls())
				return
			}
			require.Equal(t, job.RecognitionAsync, got.Recognition)
			require.Zero(t, e.sk.SyncCallCount(), "nothing sent synchronously")
			require.Equal(t, 1, e.sk.RecognizeCalls())
			require.Zero(t, e.media.mono, "the audio is made as for any job")
		})
	}
}

// crashingStore stands for a call that dies at its first save of a job
// done: from then on nothing it does reaches the store, as nothing of a
// dead process does, until the test brings the process back.
type crashingStore struct {
	job.Store
	mu      sync.Mutex
	once    bool
	crashed bool
}

var errGone = errors.New("the call is gone")

func (s *crashingStore) Save(ctx context.Context, j job.Job, n job.Next) (job.Job, error) {
	s.mu.Lock()
	if j.State == job.Done && !s.once {
		s.once, s.crashed = true, true
	}
	crashed := s.crashed
	s.mu.Unlock()
	if crashed {
		return j, errGone
	}
	return s.Store.Save(ctx, j, n)
}

func (s *crashingStore) Release(ctx context.Context, c job.Claim, after time.Duration, f job.Failure) (job.Job, error) {
	s.mu.Lock()
	crashed := s.crashed
	s.mu.Unlock()
	if crashed {
		return job.Job{}, errGone
	}
	return s.Store.Release(ctx, c, after, f)
}

// A call that crashes after the synchronous answer, before the job is
// saved done, leaves a job tried synchronously: redelivered events do
// nothing, and once the claim runs out the poll function recognizes it
// asynchronously. One transcript, one recognition more than it needed.
func TestACrashAfterTheSynchronousAnswerMakesOneTranscript(t *testing.T) {
	e := newSyncEnv(t, 6_000, 1)
	st := &crashingStore{Store: e.st}
	e.p.Store = st
	j := e.accepted(t, job.Draft{Priority: job.PriorityFast})
	require.NoError(t, e.p.Uploaded(e.ctx, job.SourceKey(j.ID)))
	require.Equal(t, 1, e.sk.SyncCallCount(), "answered")
	require.Equal(t, http.StatusOK, e.sk.SyncCalls()[0].Status)

	tried := e.get(t, j.ID)
	require.Equal(t, job.Transcribe, tried.State, "the try was recorded before the request")
	require.Equal(t, job.RecognitionSync, tried.Recognition)
	require.Empty(t, e.told.of(j.ID), "nothing delivered by the call that crashed")

	// The process comes back; the event is redelivered while the dead
	// call's claim holds, and again after it ran out.
	st.mu.Lock()
	st.crashed = false
	st.mu.Unlock()
	require.NoError(t, e.p.Uploaded(e.ctx, job.SourceKey(j.ID)))
	e.clk.Set(tried.NextRunAt)
	require.NoError(t, e.p.Uploaded(e.ctx, job.SourceKey(j.ID)))
	require.Equal(t, 1, e.sk.SyncCallCount(), "never tried synchronously again")
	require.Zero(t, e.sk.RecognizeCalls(), "events leave a job past ingest alone")

	got := e.untilEnded(t, j.ID)
	e.requireAsyncOnce(t, got)
	require.Equal(t, 1, e.sk.SyncCallCount())
	require.Zero(t, got.BilledSeconds, "the synchronous answer's bill was never saved")
}

// An ingest retried after the audio was made (a crash between the save of
// the converted job and its request) reads the audio from storage and
// sends it synchronously.
func TestARetriedIngestSendsTheStoredAudio(t *testing.T) {
	e := newSyncEnv(t, 6_000, 1)
	j := e.accepted(t, job.Draft{Priority: job.PriorityFast})
	j, err := e.st.Claim(e.ctx, j.ID, job.Ingest)
	require.NoError(t, err)
	audio := oggtest.Synth(6_000, 0)
	require.NoError(t, e.objects.Put(e.ctx, job.AudioKey(j.ID, 0), audio, "audio/ogg"))
	j.State, j.DurationMs, j.ReservedSeconds = job.Converted, 6_000, 15 // one synchronous unit
	j.Features.Channels = 1
	j.Segments = []job.Segment{{Seq: 0, DurationMs: 6_000, AudioKey: job.AudioKey(j.ID, 0), Container: "OGG_OPUS"}}
	j, err = e.st.Save(e.ctx, j, job.Next{})
	require.NoError(t, err)

	require.NoError(t, e.p.Uploaded(e.ctx, job.SourceKey(j.ID)))
	got := e.get(t, j.ID)
	require.Equal(t, job.Done, got.State, "%s %s", got.ErrorCode, got.ErrorMessage)
	require.Equal(t, job.RecognitionSync, got.Recognition)
	require.Equal(t, audio, e.sk.SyncCalls()[0].Audio)
	require.Zero(t, e.media.mono+e.media.kept, "not converted again")
}
