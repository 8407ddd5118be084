package admission_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/errs"
	"transcriber/internal/job"
	"transcriber/internal/pipeline/admission"
	"transcriber/internal/speechkit"
)

// The synchronous door's part of the contract: a synchronous recognition
// takes its audio as any recognition does and a place in the synchronous
// quota, and nothing of the asynchronous quota; past 20 in a second it is refused until a place may come,
// with nothing taken.
func TestTakeSync(t *testing.T) {
	syncWindow := func(e *env) int64 { return e.used(speechkit.SyncQuotaKey, e.clk.Now().Truncate(speechkit.SyncWindow)) }

	t.Run("takes a place and no request", func(t *testing.T) {
		e, a := newEnv(t, admission.Config{RequestsPerHour: 500})
		j := e.made(a, 1)
		require.NoError(t, a.TakeSync(e.ctx, j))
		require.Equal(t, int64(1), syncWindow(e))
		require.Zero(t, e.requests(), "the asynchronous quota is SpeechKit's other door")
		require.Equal(t, int64(15), e.audio(), "the billed seconds are reserved as for any recognition")
	})

	t.Run("past 20 in a second it is refused until a place may come", func(t *testing.T) {
		e, a := newEnv(t, admission.Config{})
		j := e.made(a, 1)
		for range speechkit.SyncRequestsPerSecond {
			require.NoError(t, a.TakeSync(e.ctx, j))
		}
		r := refusal(t, a.TakeSync(e.ctx, j))
		require.Equal(t, admission.SyncRequests, r.Resource)
		require.Equal(t, start.Add(2*time.Second), r.Until, "the twenty's window and the three after it")
		require.Equal(t, int64(speechkit.SyncRequestsPerSecond), syncWindow(e), "a refusal takes nothing")

		e.clk.Advance(time.Second)
		require.Equal(t, admission.SyncRequests, refusal(t, a.TakeSync(e.ctx, j)).Resource, "not in the next clock second")
		e.clk.Set(r.Until)
		require.NoError(t, a.TakeSync(e.ctx, j))
		require.Equal(t, int64(1), syncWindow(e))
	})

	t.Run("audio past the reservation is refused for good, before a place is taken", func(t *testing.T) {
		e, a := newEnv(t, admission.Config{})
		j := e.made(a, 1)
		j.Segments[0].DurationMs = 15_001 // two synchronous units; one reserved
		r := refusal(t, a.TakeSync(e.ctx, j))
		require.Equal(t, admission.Audio, r.Resource)
		require.Equal(t, admission.CodeOverReserved, errs.CodeOf(r))
		require.Zero(t, syncWindow(e))
	})

	t.Run("a failed counter is an error, not a refusal", func(t *testing.T) {
		e, _ := newEnv(t, admission.Config{})
		a := admission.New(admission.Config{Counters: failing{Counters: e.counters, key: speechkit.SyncQuotaKey}, Clock: e.clk})
		j := job.Job{ID: "j", ChargedTo: payer, State: job.Converted, DurationMs: 5_000,
			Segments: []job.Segment{{DurationMs: 5_000}}, ReservedSeconds: 15}
		err := a.TakeSync(e.ctx, j)
		require.Error(t, err)
		var r *admission.Refused
		require.NotErrorAs(t, err, &r)
	})

	t.Run("audio sent synchronously stays counted whatever the end", func(t *testing.T) {
		e, a := newEnv(t, admission.Config{})
		for _, state := range []job.State{job.Done, job.Failed, job.Dead} {
			j := e.made(a, 1)
			require.NoError(t, a.TakeSync(e.ctx, j))
			j.State = job.Transcribe // recorded before the request, as the pipeline does
			end(e.ctx, a, j, state)
		}
		require.Equal(t, int64(45), e.audio(), "what may have reached the recognizer is paid for")
		require.Zero(t, e.active(), "each job's place among the unfinished went back")
	})
}
