package app_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	stt "github.com/yandex-cloud/go-genproto/yandex/cloud/ai/stt/v3"

	"transcriber/internal/app"
	"transcriber/internal/job"
	"transcriber/internal/media/mediatest"
	"transcriber/internal/speechkit/speechkittest"
	"transcriber/internal/spend"
	"transcriber/internal/telegram/telegramtest"
	"transcriber/internal/transcript"
)

// fastJob is a job as GET /v1/jobs/{id} shows it, with how it was
// recognized and what it was billed.
type fastJob struct {
	apiJob
	Priority      string `json:"priority"`
	Recognition   string `json:"recognition"`
	BilledSeconds int64  `json:"billed_seconds"`
	DurationMs    int64  `json:"duration_ms"`
}

// API jobs made with "priority": "fast" — a voice note, an MP3 and a
// stereo WAV — are done when the upload's ingest call returns, recognized
// in one synchronous request each (the WAV mixed down to one channel), with
// no asynchronous request and no poll; the view says "recognition": "sync"
// and the seconds the answer billed, and the transcript is the answer's
// text over the whole audio in every format.
func TestAPIFastJobsAreRecognizedSynchronously(t *testing.T) {
	st := newStack(t)
	c := st.client()
	// 30 where the synchronous rule would say 15 for 4 s: the answer's
	// own figure is the one kept.
	st.sk.SyncScript(func(speechkittest.SyncCall) speechkittest.SyncPlan {
		return speechkittest.SyncPlan{Text: "быстрая запись", BillingUnits: "30"}
	})
	files := fixtures(t)
	files["stereo.wav"] = fixture(t, "stereo.wav", "-f", "lavfi", "-i", "sine=frequency=440:duration=4:sample_rate=44100",
		"-ac", "2", "-c:a", "pcm_s16le")

	for i, name := range []string{"voice.ogg", "song.mp3", "stereo.wav"} {
		t.Run(name, func(t *testing.T) {
			audio, err := os.ReadFile(files[name])
			require.NoError(t, err)
			var made fastJob
			status, body, _ := c.call(http.MethodPost, "/v1/jobs",
				`{"filename":"`+filepath.Base(name)+`","size_bytes":`+itoa(len(audio))+`,"priority":"fast"}`, &made)
			require.Equal(t, http.StatusCreated, status, body)
			require.Equal(t, "fast", made.Priority)
			require.Empty(t, made.Recognition, "not known before it is recognized")
			put(t, made.apiJob, audio)
			st.ingest(st.nextEvent())

			var got fastJob
			status, body, _ = c.call(http.MethodGet, "/v1/jobs/"+made.ID, "", &got)
			require.Equal(t, http.StatusOK, status, body)
			require.Equal(t, "done", got.State, "done in the upload's call, no poll: %s", body)
			require.Equal(t, "sync", got.Recognition, body)
			require.Equal(t, int64(30), got.BilledSeconds, "the answer's YaCloud-Billing-Units")
			require.InDelta(t, 4000, got.DurationMs, 200)

			calls := st.sk.SyncCalls()
			require.Len(t, calls, i+1, "one synchronous request a job")
			require.Equal(t, http.StatusOK, calls[i].Status)
			require.Equal(t, 1, calls[i].Channels, "one channel, as the synchronous API takes")
			require.Equal(t, "oggopus", calls[i].Query.Get("format"))
			stored, err := st.app.Objects.Get(st.ctx, job.AudioKey(made.ID, 0))
			require.NoError(t, err)
			kept, err := io.ReadAll(stored)
			require.NoError(t, err)
			_ = stored.Close()
			require.Equal(t, kept, calls[i].Audio, "what was sent is the metered audio, as stored")
			if name == "voice.ogg" {
				require.Equal(t, audio, calls[i].Audio, "a plain mono Ogg Opus file goes as it is")
			} else {
				require.NotEqual(t, audio, calls[i].Audio, "anything else is converted")
			}
			require.Zero(t, st.sk.RecognizeCalls(), "no asynchronous request")

			status, txt, _ := c.call(http.MethodGet, got.Transcript["txt"], "", nil)
			require.Equal(t, http.StatusOK, status)
			require.Equal(t, "быстрая запись", strings.TrimSpace(txt))
			status, srt, _ := c.call(http.MethodGet, got.Transcript["srt"], "", nil)
			require.Equal(t, http.StatusOK, status)
			require.Equal(t, 1, strings.Count(srt, " --> "), "one cue over the audio: %s", srt)
			require.Contains(t, srt, "00:00:00,000 --> ")
			status, raw, _ := c.call(http.MethodGet, got.Transcript["json"], "", nil)
			require.Equal(t, http.StatusOK, status)
			var tr transcript.Transcript
			require.NoError(t, json.Unmarshal([]byte(raw), &tr))
			require.Len(t, tr.Utterances, 1)
			require.Zero(t, tr.Utterances[0].StartMs)
			require.Equal(t, got.DurationMs, tr.Utterances[0].EndMs, "the utterance spans the audio")
			require.Empty(t, tr.Utterances[0].Words, "the synchronous API gives no word timings")
			require.Equal(t, int64(30), tr.BilledSeconds)
		})
	}
}

// A fast job longer than SPEECHKIT_SYNC_MAX_DURATION goes the normal way
// and says so.
func TestAPIFastJobOverTheLimitIsRecognizedAsynchronously(t *testing.T) {
	st := newStack(t)
	c := st.client()
	long := fixture(t, "long.ogg", "-f", "lavfi", "-i", "sine=frequency=440:duration=45:sample_rate=48000",
		"-c:a", "libopus", "-b:a", "24k")
	audio, err := os.ReadFile(long)
	require.NoError(t, err)
	var made fastJob
	status, body, _ := c.call(http.MethodPost, "/v1/jobs", `{"filename":"long.ogg","size_bytes":`+itoa(len(audio))+`,"priority":"fast"}`, &made)
	require.Equal(t, http.StatusCreated, status, body)
	put(t, made.apiJob, audio)
	st.ingest(st.nextEvent())
	if st.job(made.ID).State == job.Transcribe {
		st.poll()
	}
	var got fastJob
	status, body, _ = c.call(http.MethodGet, "/v1/jobs/"+made.ID, "", &got)
	require.Equal(t, http.StatusOK, status, body)
	require.Equal(t, "done", got.State, body)
	require.Equal(t, "async", got.Recognition)
	require.Zero(t, st.sk.SyncCallCount())
	require.Equal(t, 1, st.sk.RecognizeCalls())
	require.Equal(t, spend.BilledSeconds(got.DurationMs, 1), got.BilledSeconds, "the asynchronous rule")
}

// voiceOf makes an OGG/Opus voice note of seconds seconds, as Telegram
// stores one.
func voiceOf(t *testing.T, seconds int) []byte {
	t.Helper()
	path := fixture(t, "voice.ogg", "-f", "lavfi", "-i", "sine=frequency=440:duration="+itoa(seconds)+":sample_rate=48000",
		"-c:a", "libopus", "-b:a", "24k")
	voice, err := os.ReadFile(path)
	require.NoError(t, err)
	return voice
}

// sendVoice sends a voice note to the bot through the webhook and the
// upload's ingest call, as the functions run them, and returns its job.
func (b *botStack) sendVoice(voice []byte, chat, msg int64) job.Job {
	b.t.Helper()
	fileID := "voice-" + itoa(int(msg))
	b.tg.AddFile(fileID, voice)
	require.Equal(b.t, http.StatusOK, b.webhook(telegramtest.Voice(msg, chat, msg, fileID, len(voice), "ru"), webhookSecret))
	b.ingest(b.event())
	page, err := b.store.List(b.ctx, "tg:"+itoa(int(chat)), "", 10)
	require.NoError(b.t, err)
	for _, j := range page.Jobs {
		if j.TelegramMessageID == msg {
			return b.job(j.ID)
		}
	}
	b.t.Fatalf("no job for message %d", msg)
	return job.Job{}
}

// lastEdit is the text the status message was last edited to.
func (b *botStack) lastEdit() string {
	b.t.Helper()
	edits := b.tg.Calls("editMessageText")
	require.NotEmpty(b.t, edits)
	return edits[len(edits)-1].Params["text"]
}

// A 6-second voice note to the bot is answered from one synchronous
// request, in the upload's own call, with no asynchronous one: the status
// message becomes the transcript.
func TestTelegramShortVoiceNoteIsAnsweredFromOneSynchronousRequest(t *testing.T) {
	b := newBotStack(t)
	b.sk.SyncScript(func(speechkittest.SyncCall) speechkittest.SyncPlan {
		return speechkittest.SyncPlan{Text: "Шесть секунд."}
	})
	voice := voiceOf(t, 6)
	j := b.sendVoice(voice, 601, 1)
	require.Equal(t, job.Done, j.State, "done in the upload's call: %s %s", j.ErrorCode, j.ErrorMessage)
	require.Equal(t, job.RecognitionSync, j.Recognition)
	require.Equal(t, job.PriorityFast, j.Priority)
	require.Equal(t, 1, b.sk.SyncCallCount())
	require.Equal(t, voice, b.sk.SyncCalls()[0].Audio, "the voice note as Telegram keeps it, unconverted")
	require.Zero(t, b.sk.RecognizeCalls(), "no asynchronous request")
	require.Equal(t, "Шесть секунд.", b.lastEdit())
	require.Len(t, b.tg.Calls("sendMessage"), 1, "the status message, edited into the transcript")
	require.Equal(t, []job.State{job.Done}, b.ended.of(j.ID))
}

// A 45-second voice note is longer than synchronous recognition takes, and
// a short one sent while SpeechKit's synchronous API answers 429 or 503
// is refused there: each is answered through one asynchronous request,
// with nothing said of the refusal.
func TestTelegramVoiceNotesTheSynchronousDoorDoesNotTakeGoAsynchronously(t *testing.T) {
	for name, c := range map[string]struct {
		seconds   int
		status    int
		syncCalls int
	}{
		"45 seconds":          {seconds: 45},
		"6 seconds, then 429": {seconds: 6, status: http.StatusTooManyRequests, syncCalls: 1},
		"6 seconds, then 503": {seconds: 6, status: http.StatusServiceUnavailable, syncCalls: 1},
	} {
		t.Run(name, func(t *testing.T) {
			b := newBotStack(t)
			b.sk.SyncScript(func(speechkittest.SyncCall) speechkittest.SyncPlan { return speechkittest.SyncPlan{Status: c.status} })
			b.sk.Script(func(*stt.RecognizeFileRequest) speechkittest.Plan {
				p := speechkittest.DefaultPlan()
				p.Utterances = []transcript.Utterance{{StartMs: 0, EndMs: 3000, Text: "долго", Normal: "Асинхронно."}}
				return p
			})
			j := b.sendVoice(voiceOf(t, c.seconds), 602, 1)
			if j.State == job.Transcribe {
				b.poll()
				j = b.job(j.ID)
			}
			require.Equal(t, job.Done, j.State, "%s %s", j.ErrorCode, j.ErrorMessage)
			require.Empty(t, j.ErrorCode)
			require.Equal(t, job.RecognitionAsync, j.Recognition)
			require.Equal(t, c.syncCalls, b.sk.SyncCallCount())
			require.Equal(t, 1, b.sk.RecognizeCalls(), "one asynchronous request")
			require.Equal(t, "Асинхронно.", b.lastEdit())
			require.Equal(t, []job.State{job.Done}, b.ended.of(j.ID))
		})
	}
}

// Ogg files whose granule positions understate their length, sent as fast
// jobs under a month of 20 s, through the whole service with real ffmpeg:
// neither goes to the synchronous door as it is (the check refuses a
// granule that says much less than the packets hold), each is probed and
// converted, and the audio SpeechKit's synchronous door counts in each
// request is never more than its job reserved, nor, over both, the month.
func TestAPIFastJobsThatUnderstateTheirLengthGetNoMoreThanReserved(t *testing.T) {
	st := newStack(t, func(c *app.Config) {
		c.Limits.AudioPerMonth = 20 * time.Second
		c.Pipeline.Limits = c.Limits
	})
	c := st.client()
	dir := t.TempDir()
	a, err := mediatest.LyingOgg(dir, "a.ogg", 25_000, 5_000)
	require.NoError(t, err)
	b, err := mediatest.LyingOgg(dir, "b.ogg", 15_000, 3_000)
	require.NoError(t, err)

	uploads := map[string][]byte{}
	var ids []string
	for _, l := range []mediatest.Liar{a, b} {
		audio, err := os.ReadFile(l.Path)
		require.NoError(t, err)
		var made fastJob
		status, body, _ := c.call(http.MethodPost, "/v1/jobs",
			`{"filename":"`+l.Name+`","size_bytes":`+itoa(len(audio))+`,"priority":"fast"}`, &made)
		require.Equal(t, http.StatusCreated, status, body)
		put(t, made.apiJob, audio)
		st.ingest(st.nextEvent())
		uploads[made.ID] = audio
		ids = append(ids, made.ID)
	}

	calls := st.sk.SyncCalls()
	require.NotEmpty(t, calls)
	require.Zero(t, st.sk.RecognizeCalls())
	var sent int64
	for _, id := range ids {
		j := st.job(id)
		if j.State == job.Failed {
			require.Equal(t, spend.CodeQuotaExceeded, j.ErrorCode)
			continue
		}
		require.Equal(t, job.Done, j.State, "%s %s", j.ErrorCode, j.ErrorMessage)
		require.Equal(t, job.RecognitionSync, j.Recognition)
		stored, err := st.app.Objects.Get(st.ctx, job.AudioKey(id, 0))
		require.NoError(t, err)
		kept, err := io.ReadAll(stored)
		require.NoError(t, err)
		_ = stored.Close()
		var call *speechkittest.SyncCall
		for i := range calls {
			if bytes.Equal(calls[i].Audio, kept) {
				call = &calls[i]
			}
		}
		require.NotNil(t, call, "job %s: its stored audio is what was sent", j.Filename)
		require.NotEqual(t, uploads[id], call.Audio, "job %s: converted, not sent as it is", j.Filename)
		require.LessOrEqual(t, call.DurationMs, j.ReservedSeconds*1000, "job %s: no more than was reserved", j.Filename)
		require.Equal(t, call.DurationMs, j.DurationMs, "job %s shows the audio it sent", j.Filename)
		sent += call.DurationMs
	}
	require.LessOrEqual(t, sent, int64(20_000), "nor, over both, the month")
}
