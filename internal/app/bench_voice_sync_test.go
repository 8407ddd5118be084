package app_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/job"
)

// voiceSyncGoalMs is the goal for a voice note answered by synchronous
// recognition.
const voiceSyncGoalMs = 300

// BenchmarkVoiceSyncOverhead measures what the service adds to a Telegram
// voice note answered by synchronous recognition: from the webhook call to
// the transcript's arrival at the Bot API, with a synchronous recognizer
// (speechkittest's REST endpoint) that answers at once. The path is
// BenchmarkVoiceOverhead's, with synchronous recognition on as shipped:
// the telegram function's handler takes the update, posts the status
// message and streams the file into Object Storage; the ingest function's
// handler claims the job, accepts and pins the upload, reads it back and
// checks it packet by packet (a plain mono Ogg Opus file, as Telegram
// keeps a voice note, goes as it is: no ffprobe, no ffmpeg), reserves the
// audio and stores it, takes a place in the second's synchronous quota,
// records the try, sends the one request, stores the transcript, saves the
// job done and edits the status message into the transcript. No
// submission, no wait, no check, no conversion: the run fails if any
// happens.
//
// Not included, as in BenchmarkVoiceOverhead: the platform's part, the
// network to each service, and the recognition itself.
//
// It reports the median of voiceRounds voice notes, in ms:
//
//   - voice-sync-overhead-ms: the whole, against goal-ms;
//   - download-ms: from getFile's arrival at the Bot API to the source
//     object stored;
//   - sync-ms: the synchronous request, sent and answered;
//   - send-ms: from the job saved done to the transcript's arrival at the
//     Bot API;
//   - other-ms: the rest: the webhook's job and status message, the claim,
//     accepting and pinning the upload, reading and checking it, the
//     reservation, storing the audio, the quota's counter, the saves,
//     storing the transcript.
func BenchmarkVoiceSyncOverhead(b *testing.B) {
	tools := benchTools(b)
	vb := newVoiceBench(b, tools, true)
	voice := voiceNote(b, tools)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var got []syncPhases
		for r := 0; r < voiceRounds; r++ {
			start, marks := vb.round(voice, fmt.Sprintf("bench-sync-%d-%d", i, r), job.RecognitionSync)
			got = append(got, syncPhasesOf(b, start, marks))
		}
		m := syncMedians(got)
		b.ReportMetric(ms(m.total), "voice-sync-overhead-ms")
		b.ReportMetric(voiceSyncGoalMs, "goal-ms")
		b.ReportMetric(ms(m.download), "download-ms")
		b.ReportMetric(ms(m.sync), "sync-ms")
		b.ReportMetric(ms(m.send), "send-ms")
		b.ReportMetric(ms(m.other), "other-ms")
		b.Logf("a voice note answered synchronously, median of %d: %.0f ms, of which the request %.0f ms",
			voiceRounds, ms(m.total), ms(m.sync))
	}
}

// syncPhases is where one synchronously answered voice note's time went
// (see BenchmarkVoiceSyncOverhead).
type syncPhases struct {
	total, download, sync, send, other time.Duration
}

// syncPhasesOf reads the phases off a voice note's timeline, which starts
// at the webhook call. It fails the run if anything was submitted or
// checked: the note must have gone in one synchronous request.
func syncPhasesOf(b *testing.B, start time.Time, marks []mark) syncPhases {
	b.Helper()
	find := func(what string) (mark, int) { return first(marks, what) }
	for _, what := range []string{"submit", "check", "wait", "probe", "convert"} {
		_, n := find(what)
		require.Zero(b, n, "a voice note answered synchronously has no %q", what)
	}
	getFile, n := find("botapi getFile")
	require.Equal(b, 1, n)
	stored, _ := find("stored")
	syncCall, n := find("sync")
	require.Equal(b, 1, n, "one synchronous request")
	done, n := find("save-done")
	require.Equal(b, 1, n)
	deliver, n := find("deliver")
	require.Equal(b, 1, n)
	require.True(b, syncCall.end.Before(done.end), "the job was saved done after the answer")
	require.True(b, done.end.Before(deliver.start), "the transcript was sent after the job was saved done")

	var p syncPhases
	p.total = deliver.start.Sub(start)
	p.download = stored.end.Sub(getFile.start)
	p.sync = sumOf(marks, "sync")
	p.send = deliver.start.Sub(done.end)
	p.other = p.total - p.download - p.sync - p.send
	return p
}

// syncMedians is each phase's median over ps.
func syncMedians(ps []syncPhases) syncPhases {
	pick := func(f func(syncPhases) time.Duration) time.Duration { return medianBy(ps, f) }
	return syncPhases{
		total:    pick(func(p syncPhases) time.Duration { return p.total }),
		download: pick(func(p syncPhases) time.Duration { return p.download }),
		sync:     pick(func(p syncPhases) time.Duration { return p.sync }),
		send:     pick(func(p syncPhases) time.Duration { return p.send }),
		other:    pick(func(p syncPhases) time.Duration { return p.other }),
	}
}
