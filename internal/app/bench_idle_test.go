package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/app"
	"transcriber/internal/app/withbot"
	"transcriber/internal/clock"
	"transcriber/internal/clock/clocktest"
	"transcriber/internal/job"
	"transcriber/internal/media/ffmpeg"
	"transcriber/internal/quota"
	"transcriber/internal/speechkit/speechkittest"
	"transcriber/internal/storage/s3/s3test"
	"transcriber/internal/store"
	"transcriber/internal/store/sqlite"
	"transcriber/internal/telegram/telegramtest"
	"transcriber/internal/telegram/tgconf"
	"transcriber/internal/trigger"
)

// What the idle poll's store holds: jobs that ended, and recognitions in
// flight whose next check is idleDueIn away, past the end of the call
// (the pipeline's PollFor, 50 s by default).
const (
	idleDone       = 1000
	idleTranscribe = 50
	idleDueIn      = time.Hour
	idleRounds     = 5
)

// The goal of an idle poll: one store read, well under 200 ms.
const (
	idleGoalReads = 1
	idleGoalMs    = 200
)

// BenchmarkIdlePoll measures one call of the poll function's handler
// (App.OnTimer, what the timer trigger calls every minute) when nothing is
// due: idleDone jobs done and idleTranscribe in transcribe, due in an hour.
// The App is built as the poll function builds it, with the bot and the
// callbacks; every store it is given is wrapped to record its calls. It
// reports, besides the goals (goal-ms, goal-reads):
//
//   - idle-poll-reads: the store calls the handler made, on every store
//     (jobs, counters, the bot's chats, the outbox); each reads its
//     backend at least once. The calls themselves are logged by name;
//   - jobs-reads, counters-reads, botstate-reads, outbox-reads: the
//     same, store by store;
//   - idle-poll-ms: the median wall time of idleRounds calls.
//
// Two sub-benchmarks:
//
//   - cloud: the stores as the functions have them in YDB, which expires
//     rows by its TTL, so the jobs store is no job.Expirer and the
//     counters no quota.Expirer and the poll makes no expiry sweep;
//   - local: the embedded store of the local stack, with its expiry
//     sweeps of old jobs and counters.
//
// Both run on the embedded SQLite store in this process: the reads are
// those the cloud makes, the milliseconds are not YDB's.
func BenchmarkIdlePoll(b *testing.B) {
	tools := benchTools(b)
	b.Run("cloud", func(b *testing.B) { benchIdlePoll(b, tools, false) })
	b.Run("local", func(b *testing.B) { benchIdlePoll(b, tools, true) })
}

func benchIdlePoll(b *testing.B, tools ffmpeg.Tools, expiring bool) {
	ctx := context.Background()
	clk := clocktest.NewFake(clock.System().Now())
	db, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "jobs.db"), clk)
	require.NoError(b, err)
	b.Cleanup(func() { _ = db.Close() })
	jobs, counters := sqlite.NewJobStore(db), sqlite.NewCounters(db)
	seedIdle(b, jobs, clk)

	calls := &callLog{}
	counted := job.Store(countingJobs{s: jobs, log: calls})
	var ctr quota.Counters = countingCounters{s: counters, log: calls}
	if expiring {
		counted = countingExpiringJobs{countingJobs: countingJobs{s: jobs, log: calls}, x: jobs}
		ctr = countingExpiringCounters{countingCounters: countingCounters{s: counters, log: calls}, x: counters}
	}
	_, isExpirer := counted.(job.Expirer)
	require.Equal(b, expiring, isExpirer)

	tg := telegramtest.Start(b)
	s3 := s3test.Start(b)
	sk := speechkittest.Start(b)
	cfg, err := app.FromEnv(func(string) string { return "" })
	require.NoError(b, err)
	cfg.S3, cfg.SpeechKit = s3.Config(), sk.Config()
	cfg.FFmpegPath, cfg.FFprobePath = tools.FFmpeg, tools.FFprobe
	cfg.Telegram.Token, cfg.Telegram.WebhookSecret, cfg.Telegram.APIURL = telegramtest.Token, webhookSecret, tg.URL
	cfg.Telegram.Allowed = tgconf.Allowed{Everyone: true}
	var slept []time.Duration
	a, err := app.New(cfg, app.Options{
		// The stores counted below the spreading, as the store counts them.
		Stores: store.NewSet(store.Set{
			Jobs:     counted,
			Tokens:   sqlite.NewTokenStore(db),
			Bot:      countingBotState{s: sqlite.NewBotState(db), log: calls},
			Counters: ctr,
			Outbox:   countingOutbox{s: sqlite.NewOutbox(db), log: calls},
			Agenda:   countingAgenda{s: sqlite.NewAgenda(db), log: calls},
		}, nil),
		MakeBot: withbot.Make,
		Clock:   clk,
		Log:     benchLogger(),
		// An idle call never waits; a wait is recorded and fails the
		// benchmark below instead of stalling it.
		Sleep: func(ctx context.Context, d time.Duration) error {
			slept = append(slept, d)
			clk.Advance(d)
			return ctx.Err()
		},
	})
	require.NoError(b, err)
	b.Cleanup(func() { _ = a.Close() })
	require.NotNil(b, a.Bot, "the poll function runs the bot's delivery sweep")
	require.NotNil(b, a.Callbacks, "the poll function runs the callbacks' sweep")

	var ev trigger.TimerEvent
	require.NoError(b, json.Unmarshal([]byte(timerEvent), &ev))
	sys := clock.System()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var took []time.Duration
		var made []string
		for r := 0; r < idleRounds; r++ {
			start := sys.Now()
			require.NoError(b, a.OnTimer(ctx, &ev))
			took = append(took, sys.Now().Sub(start))
			got := calls.take()
			require.NotEmpty(b, got, "the wrapped stores are the ones the handler reads")
			if r > 0 {
				require.Equal(b, made, got, "every idle call makes the same calls")
			}
			made = got
		}
		require.Empty(b, slept, "an idle poll waited")
		require.Empty(b, tg.Calls(), "an idle poll called the Bot API")
		require.Zero(b, sk.RecognizeCalls(), "an idle poll submitted a recognition")

		perStore := map[string]int{}
		for _, c := range made {
			perStore[strings.SplitN(c, ".", 2)[0]]++
		}
		b.ReportMetric(ms(median(took)), "idle-poll-ms")
		b.ReportMetric(float64(len(made)), "idle-poll-reads")
		for _, s := range []string{"agenda", "jobs", "counters", "botstate", "outbox"} {
			b.ReportMetric(float64(perStore[s]), s+"-reads")
		}
		b.ReportMetric(idleGoalMs, "goal-ms")
		b.ReportMetric(idleGoalReads, "goal-reads")
		b.Logf("one idle poll call's store calls, in order: %s", strings.Join(made, ", "))
	}
}

// seedIdle fills the store as an installation that has worked for a while
// and is idle now: idleDone jobs done, and idleTranscribe jobs whose
// recognitions are next checked idleDueIn from now.
func seedIdle(b *testing.B, st job.Store, clk *clocktest.Fake) {
	b.Helper()
	ctx := context.Background()
	for i := 0; i < idleDone+idleTranscribe; i++ {
		j, err := st.Create(ctx, job.Draft{Source: job.SourceAPI, OwnerID: fmt.Sprintf("owner-%d", i%20), SizeBytes: 4096})
		require.NoError(b, err)
		j, err = st.Claim(ctx, j.ID, job.Ingest)
		require.NoError(b, err)
		for _, s := range []job.State{job.Created, job.Converted} {
			j.State = s
			j, err = st.Save(ctx, j, job.Next{Keep: true})
			require.NoError(b, err)
		}
		j.State, j.DurationMs = job.Transcribe, 4000
		j.Segments = []job.Segment{{Seq: 0, DurationMs: 4000, Container: ffmpeg.ContainerOggOpus, OperationID: fmt.Sprintf("op%d", i)}}
		if i >= idleDone {
			_, err = st.Save(ctx, j, job.Next{After: idleDueIn})
			require.NoError(b, err)
			continue
		}
		j, err = st.Save(ctx, j, job.Next{Keep: true})
		require.NoError(b, err)
		j.State, j.Segments[0].Done = job.Done, true
		_, err = st.Save(ctx, j, job.Next{})
		require.NoError(b, err)
	}
	next, ok, err := st.NextDue(ctx, []job.State{job.AwaitingUpload, job.Created, job.Converted, job.Transcribe})
	require.NoError(b, err)
	require.True(b, ok)
	require.WithinDuration(b, clk.Now().Add(idleDueIn), next, time.Millisecond, "nothing is due before the seeded checks")
}
