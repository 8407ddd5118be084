package app_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/app"
	"transcriber/internal/job"
	"transcriber/internal/media/oggopus"
	"transcriber/internal/spend"
	"transcriber/internal/status"
)

// The budget's tests send what SpeechKit bills by its units, through the
// whole service with real ffmpeg, and reckon the bill from what the fakes
// were sent: each asynchronous request's file, counted packet by packet
// from the object it named, and each synchronous request's audio.

// shortVoice makes an Ogg Opus voice note of ms milliseconds.
func shortVoice(t *testing.T, ms int) []byte {
	t.Helper()
	path := fixture(t, fmt.Sprintf("voice-%d.ogg", ms), "-f", "lavfi", "-i",
		fmt.Sprintf("sine=frequency=440:duration=%d.%03d:sample_rate=48000", ms/1000, ms%1000), "-c:a", "libopus", "-b:a", "24k")
	voice, err := os.ReadFile(path)
	require.NoError(t, err)
	return voice
}

// send makes an API job of the file audio with options, uploads it and
// runs its ingest; it returns the job's id.
func (st *stack) send(c *client, audio []byte, options string) string {
	st.t.Helper()
	var j apiJob
	status, body, _ := c.call(http.MethodPost, "/v1/jobs", `{"filename":"a.ogg","size_bytes":`+itoa(len(audio))+options+`}`, &j)
	require.Equal(st.t, http.StatusCreated, status, body)
	put(st.t, j, audio)
	st.ingest(st.nextEvent())
	return j.ID
}

// bill is what SpeechKit bills for what its fakes were sent, by its rules
// (package spend) and the default prices: seconds, and µ₽ with the
// summaries the asynchronous fake answered (230 tokens each).
type bill struct {
	async, sync, seconds, micros int64
}

func (st *stack) billed(t *testing.T) bill {
	t.Helper()
	p := spend.DefaultPrices
	var b bill
	for _, r := range st.sk.Requests() {
		u, err := url.Parse(r.GetUri())
		require.NoError(t, err)
		m := &oggopus.Meter{}
		_, err = m.Write(st.s3.Object(t, strings.TrimPrefix(u.Path, "/"+st.s3.Bucket+"/")))
		require.NoError(t, err)
		require.NoError(t, m.Close())
		secs := spend.BilledSeconds(m.Ms(), spend.SubmittedChannels)
		mode := spend.ModeAsync
		if strings.HasPrefix(r.GetRecognitionModel().GetModel(), "deferred") {
			mode = spend.ModeDeferred
		}
		b.async += secs
		b.micros += p.Recognition(mode, secs)
		if r.GetSummarization() != nil {
			b.micros += p.Summary(230)
		}
	}
	for _, c := range st.sk.SyncCalls() {
		secs := spend.SyncBilledSeconds(c.DurationMs, 1)
		b.sync += secs
		b.micros += p.Recognition(spend.ModeSync, secs)
	}
	b.seconds = b.async + b.sync
	return b
}

// Twelve voice notes of 0.9 s under a month of 30 s, through either door:
// SpeechKit bills each 15 s, so two are recognized, billed 30 s, and the
// other ten end quota_exceeded without a request.
func TestTwelveShortNotesStayWithinTheMonthAsBilled(t *testing.T) {
	for _, door := range []string{"async", "sync"} {
		t.Run(door, func(t *testing.T) {
			st := newStack(t, func(c *app.Config) {
				c.Limits.AudioPerMonth = 30 * time.Second
				c.Pipeline.Limits, c.API.Limits = c.Limits, c.Limits
			})
			c := st.client()
			note := shortVoice(t, 900)
			options := `,"reuse":false` // the same note each time: recognized, not reused
			if door == "sync" {
				options += `,"priority":"fast"`
			}
			var ids []string
			for range 12 {
				ids = append(ids, st.send(c, note, options))
				st.poll()
			}
			states := map[string]int{}
			for _, id := range ids {
				j := st.job(id)
				states[string(j.State)+" "+j.ErrorCode]++
			}
			require.Equal(t, map[string]int{"done ": 2, "failed quota_exceeded": 10}, states)
			b := st.billed(t)
			require.LessOrEqual(t, b.seconds, int64(30), "SpeechKit billed %d s under a month of 30 s", b.seconds)
			if door == "sync" {
				require.Equal(t, int64(30), b.sync)
				require.Zero(t, b.async)
			} else {
				require.Equal(t, int64(30), b.async)
			}
		})
	}
}

// A day of 37 s takes two notes of 6 s, billed 15 s each, and refuses the
// third before any request; the usage says 30 billed and 12 of audio.
func TestADayOf37SecondsTakesTwoSixSecondNotes(t *testing.T) {
	st := newStack(t, func(c *app.Config) {
		c.Limits.AudioPerDay = 37 * time.Second
		c.Pipeline.Limits, c.API.Limits = c.Limits, c.Limits
	})
	c := st.client()
	note := shortVoice(t, 6_000)
	var ids []string
	for range 3 {
		ids = append(ids, st.send(c, note, `,"reuse":false`))
		st.poll()
	}
	require.Equal(t, job.Done, st.job(ids[0]).State)
	require.Equal(t, job.Done, st.job(ids[1]).State)
	third := st.job(ids[2])
	require.Equal(t, job.Failed, third.State)
	require.Equal(t, spend.CodeQuotaExceeded, third.ErrorCode)
	require.Contains(t, third.ErrorMessage, "billed as 15 s; 7 s of today's 37 s billed is left")
	require.Equal(t, 2, st.sk.RecognizeCalls(), "the third made no request")

	var u spend.Usage
	status, body, _ := c.call(http.MethodGet, "/v1/usage", "", &u)
	require.Equal(t, http.StatusOK, status, body)
	require.Equal(t, int64(30), u.Day.UsedSeconds, body)
	require.Equal(t, int64(12), u.Day.AudioSeconds, body)
	require.Equal(t, int64(37), u.Day.LimitSeconds)
	require.Equal(t, int64(30), u.Month.UsedSeconds)
	require.Equal(t, int64(12), u.Month.AudioSeconds)

	var v struct {
		BilledSeconds int64    `json:"billed_seconds"`
		CostRub       *float64 `json:"cost_rub"`
	}
	status, body, _ = c.call(http.MethodGet, "/v1/jobs/"+ids[0], "", &v)
	require.Equal(t, http.StatusOK, status, body)
	require.Equal(t, int64(15), v.BilledSeconds)
	require.NotNil(t, v.CostRub, body)
	require.InDelta(t, 0.1515, *v.CostRub, 1e-9, "15 s at 0.1515 ₽ per 15 s")
}

// A budget of 3 ₽ with the default prices, spent through the API (with
// and without a summary) and the bot: jobs are recognized until the next
// would pass it, and then refused budget_exceeded before any request;
// what the fakes were sent, at the default prices, never passes it; the
// status shows the month's money by kind, and the owner's 80 % and 100 %
// alerts are decided from it.
func TestTheBudgetHoldsAcrossTheAPITheBotAndSummaries(t *testing.T) {
	const budget = 3_000_000 // µ₽
	b := newBotStackWith(t, nil, withSummaryModel, func(c *app.Config) {
		c.Limits.BudgetPerMonth = budget
		c.Pipeline.Limits, c.API.Limits, c.Telegram.Limits = c.Limits, c.Limits, c.Limits
	})
	c := b.client()
	note := shortVoice(t, 900)

	// A summary's job reserves its bound (2,212 tokens for 0.9 s: 2.65 ₽,
	// which fits the 3 ₽) and is settled to what the answer reported.
	sum := b.job(b.send(c, note, `,"language":"en-US","summary":true,"reuse":false`))
	b.poll()
	sum = b.job(sum.ID)
	require.Equal(t, job.Done, sum.State, "%s %s", sum.ErrorCode, sum.ErrorMessage)
	require.Equal(t, int64(151_500+276_000), sum.ReservedMicros, "settled: 15 s and 230 tokens")

	var refused job.Job
	for i := 0; refused.ID == "" && i < 40; i++ {
		var j job.Job
		if i%2 == 0 {
			j = b.job(b.send(c, note, `,"reuse":false`))
			b.poll()
			j = b.job(j.ID)
		} else {
			j = b.sendVoice(note, 700, int64(i))
		}
		switch j.State {
		case job.Done:
		case job.Failed:
			require.Equal(t, spend.CodeBudgetExceeded, j.ErrorCode, j.ErrorMessage)
			refused = j
		default:
			t.Fatalf("job %d is %s", i, j.State)
		}
	}
	require.NotEmpty(t, refused.ID, "the budget was reached")
	require.Contains(t, refused.ErrorMessage, "of this month's budget for the whole service is left")
	require.Zero(t, refused.ReservedMicros, "nothing kept for it")

	bill := b.billed(t)
	require.LessOrEqual(t, bill.micros, int64(budget), "the fakes were sent %s ₽ under a budget of 3 ₽", spend.Rubles(bill.micros))
	require.Greater(t, bill.micros, int64(budget-200_000), "spent up to the budget, less than a note short")
	require.NotZero(t, bill.sync, "the bot's notes went synchronously")

	r := status.Reader{Jobs: b.store.(status.Jobs), Counters: b.app.Counters, Config: app.StatusConfig(b.cfg)}
	s, err := r.Read(context.Background(), b.clk.Now())
	require.NoError(t, err)
	require.Equal(t, bill.micros, s.Spend.UsedMicros, "what counts against the budget is what was billed")
	byKind := map[spend.Mode]int64{}
	for _, k := range s.Spend.Kinds {
		byKind[k.Kind] = k.Micros
	}
	require.Equal(t, int64(276_000), byKind[spend.KindSummary])
	require.Equal(t, bill.micros, byKind[spend.ModeAsync]+byKind[spend.ModeSync]+byKind[spend.KindSummary])
	kinds := status.Decide(s, status.Sent{}, b.clk.Now())
	require.NotEmpty(t, kinds)
	require.Equal(t, status.AlertBudget80, kinds[0].Kind, "past 80 %% and under 100 %%: %+v", s.Spend)
}

// A stereo Matroska file of 1.9 s whose timestamps were halved probes as
// 1 s. Under a day of 10 s nothing reaches SpeechKit (it bills 15 s at
// least); under a day of 15 s the one request's file is the audio cut at
// the length read (timestamps made anew from the samples, so -t cuts real
// audio), its granule positions, decoded, agree with its packets, and it
// is billed within the reservation.
func TestAFileWithHalvedTimestampsIsBilledWithinTheDay(t *testing.T) {
	dir := t.TempDir()
	src, halved := filepath.Join(dir, "src.mkv"), filepath.Join(dir, "halved.mkv")
	for _, args := range [][]string{
		{"-f", "lavfi", "-i", "sine=frequency=440:duration=1.9:sample_rate=48000", "-ac", "2", "-c:a", "libopus", "-b:a", "32k", src},
		{"-i", src, "-c", "copy", "-bsf:a", "setts=ts=TS*0.5", halved},
	} {
		out, err := exec.Command("ffmpeg", append([]string{"-v", "error", "-y"}, args...)...).CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	audio, err := os.ReadFile(halved)
	require.NoError(t, err)

	for _, tc := range []struct {
		day  time.Duration
		sent bool
	}{{10 * time.Second, false}, {15 * time.Second, true}} {
		st := newStack(t, func(c *app.Config) {
			c.Limits.AudioPerDay = tc.day
			c.Pipeline.Limits, c.API.Limits = c.Limits, c.Limits
		})
		id := st.send(st.client(), audio, "")
		j := st.job(id)
		if !tc.sent {
			require.Equal(t, job.Failed, j.State)
			require.Equal(t, spend.CodeQuotaExceeded, j.ErrorCode)
			require.Zero(t, st.sk.RecognizeCalls()+st.sk.SyncCallCount(), "nothing reached SpeechKit")
			continue
		}
		require.Contains(t, []job.State{job.Transcribe, job.Done}, j.State, "%s %s", j.ErrorCode, j.ErrorMessage)
		reqs := st.sk.Requests()
		require.Len(t, reqs, 1)
		u, err := url.Parse(reqs[0].GetUri())
		require.NoError(t, err)
		sent := st.s3.Object(t, strings.TrimPrefix(u.Path, "/"+st.s3.Bucket+"/"))
		m := &oggopus.Meter{}
		_, err = m.Write(sent)
		require.NoError(t, err)
		require.NoError(t, m.Close())
		decoded := decodedMs(t, sent)
		require.InDelta(t, 970, m.Ms(), 30, "the packets hold the length read, not the 1.9 s nor half of that")
		require.InDelta(t, m.Ms(), decoded, 30, "the granule positions agree with the packets")
		require.LessOrEqual(t, spend.BilledSeconds(max(m.Ms(), decoded), spend.SubmittedChannels), j.ReservedSeconds)
		require.LessOrEqual(t, j.ReservedSeconds, int64(15))
	}
}

// decodedMs is how long ffmpeg decodes the Ogg file b to: what its granule
// positions say, the last page's trimming the packets.
func decodedMs(t *testing.T, b []byte) int64 {
	t.Helper()
	cmd := exec.Command("ffmpeg", "-v", "error", "-i", "pipe:0", "-f", "s16le", "-ac", "1", "-ar", "48000", "pipe:1")
	cmd.Stdin = bytes.NewReader(b)
	out, err := cmd.Output()
	require.NoError(t, err)
	return int64(len(out)) / 2 * 1000 / 48_000
}
