package app_test

import (
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	stt "github.com/yandex-cloud/go-genproto/yandex/cloud/ai/stt/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"transcriber/internal/app"
	"transcriber/internal/job"
	"transcriber/internal/pipeline/admission"
	"transcriber/internal/speechkit/speechkittest"
)

// A job whose submissions keep failing while other jobs' are taken fails
// for reasons of its own: it spends its attempts and ends dead, saying
// so. The other jobs' answers keep the recognizer's breaker closed.
func TestAJobThatKeepsFailingWhileOthersPassEndsDead(t *testing.T) {
	st := newStack(t, func(c *app.Config) { c.Pipeline.PollFor = time.Second })
	var bad atomic.Value
	bad.Store("none")
	st.sk.Script(func(req *stt.RecognizeFileRequest) speechkittest.Plan {
		if strings.Contains(req.GetUri(), bad.Load().(string)) {
			return speechkittest.Plan{Err: status.Error(codes.Unavailable, "down")}
		}
		return speechkittest.DefaultPlan()
	})
	voice := fixtures(t)["voice.ogg"]
	j, ev := st.upload(voice)
	bad.Store(j.ID)
	st.ingest(ev)
	for i := 0; i < 2*job.DefaultPolicy.MaxAttempts && !st.job(j.ID).State.Terminal(); i++ {
		other, oev := st.upload(voice)
		st.ingest(oev)
		require.Equal(t, job.Done, st.job(other.ID).State, "another job passes")
		st.clk.Set(st.job(j.ID).NextRunAt)
		st.poll() // the failing job's next attempt
	}
	got := st.job(j.ID)
	require.Equal(t, job.Dead, got.State)
	require.Equal(t, []job.State{job.Dead}, st.ended.of(j.ID))
	mine := 0
	for _, r := range st.sk.Requests() {
		if strings.Contains(r.GetUri(), j.ID) {
			mine++
		}
	}
	require.Equal(t, job.DefaultPolicy.MaxAttempts, mine, "one submission per attempt")
	require.NotContains(t, got.ErrorMessage, "down", "the recognizer's own text is not shown")
	require.NotContains(t, got.ErrorMessage, "tried again", "a dead job is not tried again: %q", got.ErrorMessage)
	require.Contains(t, got.ErrorMessage, "gave up after 5 attempts")
}

// SpeechKit answering UNAVAILABLE to every call for 90 seconds costs no
// job: the jobs in flight — two waiting for their recognitions, two
// uploaded during the outage — are held, not failed, while the breaker
// lets a probe through at a growing interval; once the recognizer answers
// they all end done, the ones held at submission submitted in the order
// they were made. A few calls open the breaker; after that, one probe an
// interval.
func TestAnOutageOfTheRecognizerCostsNoJob(t *testing.T) {
	st := newStack(t)
	st.sk.Script(func(*stt.RecognizeFileRequest) speechkittest.Plan {
		p := speechkittest.DefaultPlan()
		p.PendingChecks = 1 << 30 // still running when the outage starts
		return p
	})
	voice := fixtures(t)["voice.ogg"]
	var ids []string
	for range 2 {
		j, ev := st.upload(voice)
		st.ingest(ev)
		require.Equal(t, job.Transcribe, st.job(j.ID).State)
		ids = append(ids, j.ID)
	}

	var (
		mu      sync.Mutex
		refused int
	)
	end := st.clk.Now().Add(90 * time.Second)
	st.sk.Down(func() bool {
		if !st.clk.Now().Before(end) {
			return false
		}
		mu.Lock()
		defer mu.Unlock()
		refused++
		return true
	})
	st.sk.FinishAll() // done at their next check, once one is answered
	st.sk.Script(func(*stt.RecognizeFileRequest) speechkittest.Plan { return speechkittest.DefaultPlan() })
	for range 2 {
		st.clk.Advance(time.Second) // made one after the other
		j, ev := st.upload(voice)
		st.ingest(ev)
		require.Equal(t, job.Converted, st.job(j.ID).State, "its submission met the outage")
		ids = append(ids, j.ID)
	}

	// The timer calls the poll function every minute.
	for tick, i := st.clk.Now(), 0; i < 20 && !allEnded(st, ids); i++ {
		st.poll()
		if tick = tick.Add(time.Minute); st.clk.Now().Before(tick) {
			st.clk.Set(tick)
		}
	}
	require.False(t, st.clk.Now().Before(end), "the outage lasted its 90 s")
	for _, id := range ids {
		got := st.job(id)
		require.Equal(t, job.Done, got.State, "%s: %s", got.ErrorCode, got.ErrorMessage)
		require.Equal(t, []job.State{job.Done}, st.ended.of(id))
	}
	mu.Lock()
	defer mu.Unlock()
	// 3 to open it, then probes 10, 30 and 70 s after it opened; a stale
	// view of the breaker lets a call or two more through.
	require.LessOrEqual(t, refused, admission.DefaultOutageAfter+5, "calls during the outage")
	var order []string
	for _, r := range st.sk.Requests() {
		for _, id := range ids[2:] {
			if strings.Contains(r.GetUri(), id) {
				order = append(order, id)
			}
		}
	}
	require.Equal(t, ids[2:], order, "held at submission, submitted in the order they were made")
}

func allEnded(st *stack, ids []string) bool {
	for _, id := range ids {
		if !st.job(id).State.Terminal() {
			return false
		}
	}
	return true
}
