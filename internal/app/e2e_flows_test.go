package app_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	stt "github.com/yandex-cloud/go-genproto/yandex/cloud/ai/stt/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"transcriber/internal/app"
	"transcriber/internal/job"
	"transcriber/internal/speechkit/speechkittest"
	"transcriber/internal/transcript"
)

func TestUploadBecomesATranscript(t *testing.T) {
	st := newStack(t)
	files := fixtures(t)
	// The second recognition (the MP3's) is slow: it outlasts the ingest
	// call's inline checks, and the poll function finishes it.
	var submitted atomic.Int32
	st.sk.Script(func(req *stt.RecognizeFileRequest) speechkittest.Plan {
		p := speechkittest.DefaultPlan()
		if submitted.Add(1) == 2 {
			p.PendingChecks = 20
		}
		return p
	})

	// Every file is converted, even those SpeechKit would take as they
	// are: what it gets is audio whose every packet was counted.
	tests := []struct {
		file    string
		viaPoll bool
	}{
		{file: "voice.ogg"},
		{file: "song.mp3", viaPoll: true},
		{file: "call.wav"},
		{file: "clip.mp4"},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			j, ev := st.upload(files[tc.file])
			st.ingest(ev)
			if tc.viaPoll {
				require.Equal(t, job.Transcribe, st.job(j.ID).State, "not ready within the ingest call")
				st.poll()
			}
			got := st.job(j.ID)
			require.Equal(t, job.Done, got.State, "error: %s %s", got.ErrorCode, got.ErrorMessage)
			require.InDelta(t, 4000, got.DurationMs, 200)
			require.Len(t, got.Segments, 1)
			sg := got.Segments[0]
			require.Equal(t, "OGG_OPUS", sg.Container)
			require.Equal(t, job.AudioKey(j.ID, 0), sg.AudioKey)
			info, err := st.app.Objects.Head(st.ctx, sg.AudioKey)
			require.NoError(t, err)
			require.Positive(t, info.Size, "the converted audio is in storage")
			var uris []string
			for _, r := range st.sk.Requests() {
				uris = append(uris, r.GetUri())
			}
			require.Contains(t, uris, st.app.Objects.URI(sg.AudioKey), "SpeechKit reads the audio by its object URI")
			require.Contains(t, st.sk.Deletes(), sg.OperationID, "the recognition is deleted once the transcript is ours")
			require.Equal(t, []job.State{job.Done}, st.ended.of(j.ID), "delivery hears of it once")

			tr := st.result(j.ID)
			require.Len(t, tr.Utterances, 1)
			require.Equal(t, "Привет мир.", tr.Utterances[0].Normal)
			for _, f := range transcript.Formats {
				var b bytes.Buffer
				require.NoError(t, transcript.Render(&b, tr, f))
				require.Contains(t, b.String(), "ривет", "format %s", f)
			}
		})
	}
	require.Equal(t, len(tests), st.sk.RecognizeCalls(), "one recognition per upload")
}

func TestNotMediaFailsWithAReadableReason(t *testing.T) {
	st := newStack(t)
	file := writeFile(t, "notes.txt", []byte("this is not audio, just some text that someone sent by mistake\n"))
	j, ev := st.upload(file)
	st.ingest(ev)
	got := st.job(j.ID)
	require.Equal(t, job.Failed, got.State)
	require.Equal(t, "unreadable_media", got.ErrorCode)
	require.Equal(t, "the file could not be read as audio or video", got.ErrorMessage)
	require.Zero(t, st.sk.RecognizeCalls())

	st.ingest(ev) // the event again: a failed job stays failed
	st.poll()
	require.Equal(t, got, st.job(j.ID))
	require.Equal(t, []job.State{job.Failed}, st.ended.of(j.ID), "the owner hears of the failure once")
}

func TestTransientRecognizerErrorIsRetriedThenDone(t *testing.T) {
	st := newStack(t)
	calls := 0
	st.sk.Script(func(*stt.RecognizeFileRequest) speechkittest.Plan {
		calls++
		if calls == 1 {
			return speechkittest.Plan{Err: status.Error(codes.Unavailable, "try later")}
		}
		return speechkittest.DefaultPlan()
	})
	j, ev := st.upload(fixtures(t)["voice.ogg"])
	st.ingest(ev)
	got := st.job(j.ID)
	require.Equal(t, job.Converted, got.State, "the audio is ready; the submission failed")
	require.Equal(t, 1, got.Attempts)
	require.NotEmpty(t, got.ErrorCode)
	require.WithinDuration(t, st.clk.Now().Add(job.DefaultPolicy.Pause(1)), got.NextRunAt, time.Millisecond, "paused by the retry policy")

	st.poll() // sleeps until the pause is over, then sweeps the job back into ingest
	got = st.job(j.ID)
	require.Equal(t, job.Done, got.State, "error: %s", got.ErrorCode)
	require.Zero(t, got.Attempts)
	require.Equal(t, 2, st.sk.RecognizeCalls())
}

func TestCrashAfterClaimIsTakenBackAfterTheLease(t *testing.T) {
	st := newStack(t)
	j, _ := st.upload(fixtures(t)["clip.mp4"])
	// A call claims the job and dies before doing anything.
	_, err := st.store.Claim(st.ctx, j.ID, job.Ingest)
	require.NoError(t, err)

	st.poll()
	require.Equal(t, job.AwaitingUpload, st.job(j.ID).State, "the dead call's claim holds until its lease ends")
	require.Zero(t, st.sk.RecognizeCalls())

	st.clk.Advance(job.Ingest.Lease - 30*time.Second)
	st.poll() // waits inside the call for the lease's last 30 s, then takes the job
	got := st.job(j.ID)
	require.Equal(t, job.Done, got.State, "error: %s", got.ErrorCode)
	require.Equal(t, 1, st.sk.RecognizeCalls())
}

func TestRedeliveredUploadEventRecognizesOnce(t *testing.T) {
	st := newStack(t)
	j, ev := st.upload(fixtures(t)["voice.ogg"])
	for i := 0; i < 3; i++ {
		st.ingest(ev)
	}
	st.poll()
	require.Equal(t, job.Done, st.job(j.ID).State)
	require.Equal(t, 1, st.sk.RecognizeCalls())
}

func TestUploadThatNeverCameFailsTheJob(t *testing.T) {
	st := newStack(t)
	j, err := st.store.Create(st.ctx, job.Draft{Source: job.SourceAPI, OwnerID: "e2e", UploadWindow: 30 * time.Second})
	require.NoError(t, err)
	st.poll() // the window closes within the call
	got := st.job(j.ID)
	require.Equal(t, job.Failed, got.State)
	require.Equal(t, "upload_missing", got.ErrorCode)
}

func TestIdlePollEndsAtOnce(t *testing.T) {
	st := newStack(t)
	before := st.clk.Now()
	st.poll()
	require.Equal(t, before, st.clk.Now(), "nothing in flight: no waiting")
}

func writeFile(t *testing.T, name string, body []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, body, 0o600))
	return p
}

func TestFailedRecognitionIsSubmittedAgain(t *testing.T) {
	st := newStack(t)
	calls := 0
	st.sk.Script(func(*stt.RecognizeFileRequest) speechkittest.Plan {
		calls++
		if calls == 1 {
			return speechkittest.Plan{OpErr: status.New(codes.Unavailable, "worker lost")}
		}
		return speechkittest.DefaultPlan()
	})
	j, ev := st.upload(fixtures(t)["voice.ogg"])
	st.ingest(ev)
	got := st.job(j.ID)
	require.Equal(t, job.Transcribe, got.State)
	require.Empty(t, got.Segments[0].OperationID, "the failed recognition is dropped")
	require.Equal(t, "recognition_failed", got.ErrorCode)

	st.poll()
	got = st.job(j.ID)
	require.Equal(t, job.Done, got.State, "error: %s", got.ErrorCode)
	require.Equal(t, 2, st.sk.RecognizeCalls())
}

func TestLongAudioIsRecognizedInSegmentsAndJoined(t *testing.T) {
	st := newStack(t, func(c *app.Config) { c.Media.SegmentLength = 2 * time.Second })
	file := fixture(t, "long.wav", "-f", "lavfi", "-i", "sine=frequency=440:duration=5:sample_rate=16000", "-c:a", "pcm_s16le")
	j, ev := st.upload(file)
	st.ingest(ev)
	st.poll()
	got := st.job(j.ID)
	require.Equal(t, job.Done, got.State, "error: %s", got.ErrorCode)
	require.Len(t, got.Segments, 3, "5 s in pieces of at most 2 s")
	var end int64
	for i, sg := range got.Segments {
		require.Equal(t, job.AudioKey(j.ID, i), sg.AudioKey, "a piece is converted even from a format that passes through")
		require.InDelta(t, end, sg.StartMs, 1, "piece %d starts where the one before ended", i)
		require.LessOrEqual(t, sg.DurationMs, int64(2000)+20, "piece %d is no longer than SEGMENT_LENGTH (and a frame)", i)
		end = sg.StartMs + sg.DurationMs
	}
	require.InDelta(t, 5000, end, 50, "the pieces cover the recording")
	require.Equal(t, 3, st.sk.RecognizeCalls())

	tr := st.result(j.ID)
	require.Len(t, tr.Utterances, 3)
	for i, u := range tr.Utterances {
		// The fake says "привет мир" at 0–1200 ms of each piece.
		start := got.Segments[i].StartMs
		require.Equal(t, start, u.StartMs, "utterance %d is shifted by its piece's start", i)
		require.Equal(t, start+120, u.Words[0].StartMs, "and so are its words")
	}
	// Each utterance ends within its piece: timed to 1.2 s, it is held at
	// the piece's end when the piece is shorter.
	last := got.Segments[2]
	var srt bytes.Buffer
	require.NoError(t, transcript.Render(&srt, tr, transcript.SRT))
	require.Contains(t, srt.String(), "3\n"+srtTime(last.StartMs)+" --> "+srtTime(last.StartMs+min(1200, last.DurationMs))+"\n")
}

// srtTime is ms as an SRT timestamp.
func srtTime(ms int64) string {
	return fmt.Sprintf("%02d:%02d:%02d,%03d", ms/3_600_000, ms/60_000%60, ms/1000%60, ms%1000)
}

// An event that comes before its file is visible (or for a file that is not
// there) is no failure while the upload window is open: the job waits on,
// and the real upload finishes it.
func TestEarlyEventWaitsForTheUpload(t *testing.T) {
	st := newStack(t)
	j, ev := st.upload(fixtures(t)["voice.ogg"])
	body := st.s3.Object(t, job.SourceKey(j.ID))
	require.NoError(t, st.app.Objects.Delete(st.ctx, job.SourceKey(j.ID)))

	st.ingest(ev)
	got := st.job(j.ID)
	require.Equal(t, job.AwaitingUpload, got.State)
	require.Zero(t, got.Attempts, "not a failed attempt")
	require.WithinDuration(t, got.UploadBy, got.NextRunAt, time.Millisecond, "due again when the window closes")

	require.NoError(t, st.app.Objects.Put(st.ctx, job.SourceKey(j.ID), body, ""))
	st.ingest(<-st.events)
	require.Equal(t, job.Done, st.job(j.ID).State)
}

// Audio sent inline over the recognizer's message limit is refused by gRPC
// with RESOURCE_EXHAUSTED, the request quota's code. The job fails at once
// with a code and words of its own, instead of waiting out quota windows
// until its attempts run out.
func TestInlineAudioOverTheRecognizersMessageLimitFailsAtOnce(t *testing.T) {
	small := speechkittest.StartReceivingAtMost(t, 4<<10)
	st := newStack(t, func(c *app.Config) {
		c.SpeechKit = small.Config()
		c.Pipeline.InlineAudio = true
	})
	j, ev := st.upload(fixtures(t)["voice.ogg"]) // about 12 KB of Opus
	st.ingest(ev)
	got := st.job(j.ID)
	require.Equal(t, job.Failed, got.State, "error: %s %s", got.ErrorCode, got.ErrorMessage)
	require.Equal(t, "audio_too_large_for_request", got.ErrorCode)
	require.Contains(t, got.ErrorMessage, "too large to send to the speech recognizer in one request")
	require.Equal(t, []job.State{job.Failed}, st.ended.of(j.ID))
	require.Zero(t, small.RecognizeCalls(), "refused before the recognizer's handler")
}
