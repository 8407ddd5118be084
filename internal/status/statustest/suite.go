// Package statustest is the contract every store keeps for the status's
// reads (status.Jobs, status.Deliveries, status.Callbacks).
//
// Run it from an implementation's tests:
//
//	func TestStatusContract(t *testing.T) {
//		statustest.Run(t, func(t *testing.T, clk clock.Clock) statustest.Stores { … })
//	}
//
// Each test opens fresh, empty stores of one database whose job store
// reads the time from clk, a fake the suite moves.
package statustest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/clock"
	"transcriber/internal/clock/clocktest"
	"transcriber/internal/job"
	"transcriber/internal/outbox"
	"transcriber/internal/status"
)

// Stores are one database's stores, as the status reads them and as the
// suite fills them.
type Stores struct {
	Jobs interface {
		job.Store
		status.Jobs
	}
	Outbox interface {
		outbox.Store
		status.Outbox
	}
}

// Opener opens fresh, empty stores reading the time from clk.
type Opener func(t *testing.T, clk clock.Clock) Stores

// Base is the suite's first moment: UTC, whole milliseconds.
var Base = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// Run runs the contract.
func Run(t *testing.T, open Opener) {
	t.Run("StateEntries", func(t *testing.T) { testStateEntries(t, open) })
	t.Run("LatestInState", func(t *testing.T) { testLatestInState(t, open) })
	t.Run("InState", func(t *testing.T) { testInState(t, open) })
	t.Run("limits", func(t *testing.T) { testLimits(t, open) })
}

type env struct {
	Stores
	clk *clocktest.Fake
	ctx context.Context
}

func newEnv(t *testing.T, open Opener) *env {
	clk := clocktest.NewFake(Base)
	return &env{Stores: open(t, clk), clk: clk, ctx: context.Background()}
}

// create makes an API job waiting for its upload, due when its window
// closes.
func (e *env) create(t *testing.T, window time.Duration) job.Job {
	t.Helper()
	j, err := e.Jobs.Create(e.ctx, job.Draft{Source: job.SourceAPI, OwnerID: "o", UploadWindow: window})
	require.NoError(t, err)
	return j
}

// end takes a new job to state (a final one) with code.
func (e *env) end(t *testing.T, state job.State, code string) job.Job {
	t.Helper()
	j := e.create(t, time.Hour)
	c, err := e.Jobs.Claim(e.ctx, j.ID, job.Ingest)
	require.NoError(t, err)
	if state == job.Done {
		for _, st := range []job.State{job.Created, job.Converted, job.Transcribe} {
			c.State = st
			c, err = e.Jobs.Save(e.ctx, c, job.Next{Keep: true})
			require.NoError(t, err)
		}
	}
	c.State, c.ErrorCode, c.ErrorMessage = state, code, "words for "+code
	saved, err := e.Jobs.Save(e.ctx, c, job.Next{})
	require.NoError(t, err)
	return saved
}

func ids(jobs []job.Job) []string {
	out := make([]string, len(jobs))
	for i, j := range jobs {
		out[i] = j.ID
	}
	return out
}

func testStateEntries(t *testing.T, open Opener) {
	e := newEnv(t, open)
	// Made in one order, due in another: the range is by next_run_at.
	late := e.create(t, 3*time.Hour)
	e.clk.Advance(time.Millisecond)
	early := e.create(t, time.Hour)
	e.clk.Advance(time.Millisecond)
	middle := e.create(t, 2*time.Hour)
	e.end(t, job.Done, "")

	got, err := e.Jobs.StateEntries(e.ctx, job.AwaitingUpload, time.Time{}, 10)
	require.NoError(t, err)
	require.Equal(t, []string{early.ID, middle.ID, late.ID}, ids(got))
	for i, want := range []job.Job{early, middle, late} {
		require.Equal(t, job.Job{ID: want.ID, State: job.AwaitingUpload, NextRunAt: want.NextRunAt}, got[i],
			"only the id, the state and the next run")
	}

	got, err = e.Jobs.StateEntries(e.ctx, job.AwaitingUpload, time.Time{}, 2)
	require.NoError(t, err)
	require.Equal(t, []string{early.ID, middle.ID}, ids(got), "at most limit, the earliest")

	got, err = e.Jobs.StateEntries(e.ctx, job.AwaitingUpload, middle.NextRunAt, 10)
	require.NoError(t, err)
	require.Equal(t, []string{middle.ID, late.ID}, ids(got), "from since on, since included")

	got, err = e.Jobs.StateEntries(e.ctx, job.Created, time.Time{}, 10)
	require.NoError(t, err)
	require.Empty(t, got, "no job in that state")
}

func testLatestInState(t *testing.T, open Opener) {
	e := newEnv(t, open)
	first := e.end(t, job.Dead, "storage_unavailable")
	e.clk.Advance(time.Hour)
	failed := e.end(t, job.Failed, "no_audio_stream")
	e.clk.Advance(time.Hour)
	second := e.end(t, job.Dead, "recognition_failed")
	e.create(t, time.Hour)

	got, err := e.Jobs.LatestInState(e.ctx, job.Dead, time.Time{}, 10)
	require.NoError(t, err)
	require.Equal(t, []string{second.ID, first.ID}, ids(got), "the latest ended first")
	require.Equal(t, second, got[0], "the whole row, without segments")
	require.Equal(t, "recognition_failed", got[0].ErrorCode)
	require.Equal(t, got[0].EndedAt, got[0].NextRunAt, "an ended job's next run is its end")

	got, err = e.Jobs.LatestInState(e.ctx, job.Dead, time.Time{}, 1)
	require.NoError(t, err)
	require.Equal(t, []string{second.ID}, ids(got), "at most limit, the latest")

	got, err = e.Jobs.LatestInState(e.ctx, job.Dead, first.EndedAt.Add(time.Millisecond), 10)
	require.NoError(t, err)
	require.Equal(t, []string{second.ID}, ids(got), "ended before since: left out")

	got, err = e.Jobs.LatestInState(e.ctx, job.Failed, first.EndedAt, 10)
	require.NoError(t, err)
	require.Equal(t, []string{failed.ID}, ids(got))

	// The entries of a final state count by the end too.
	entries, err := e.Jobs.StateEntries(e.ctx, job.Dead, second.EndedAt, 10)
	require.NoError(t, err)
	require.Equal(t, []string{second.ID}, ids(entries))

	// A job deleted while live ends then.
	live := e.create(t, time.Hour)
	e.clk.Advance(time.Minute)
	deleted, err := e.Jobs.Delete(e.ctx, live.ID)
	require.NoError(t, err)
	got, err = e.Jobs.LatestInState(e.ctx, job.Failed, time.Time{}, 10)
	require.NoError(t, err)
	require.Equal(t, []string{deleted.ID, failed.ID}, ids(got))
	require.Equal(t, "deleted", got[0].ErrorCode)
}

func testInState(t *testing.T, open Opener) {
	e := newEnv(t, open)
	begin := func(kind outbox.Kind, key string, due time.Duration, o *outbox.Outcome) {
		_, _, err := e.Outbox.Put(e.ctx, outbox.Entry{Kind: kind, Key: key}, Base.Add(due), Base)
		require.NoError(t, err)
		if o != nil {
			_, taken, err := e.Outbox.Begin(e.ctx, outbox.Entry{Kind: kind, Key: key}, Base, time.Minute)
			require.NoError(t, err)
			require.True(t, taken)
			_, err = e.Outbox.Finish(e.ctx, kind, key, *o, Base)
			require.NoError(t, err)
		}
	}
	failed := &outbox.Attempt{At: Base, Status: 503, Error: "status_503"}
	begin(outbox.Callback, "a", 2*time.Minute, &outbox.Outcome{State: outbox.Pending, NextAt: Base.Add(5 * time.Minute), Attempt: failed})
	begin(outbox.Callback, "b", time.Minute, nil)
	begin(outbox.Callback, "c", 3*time.Minute, &outbox.Outcome{State: outbox.Failed, Attempt: failed})
	begin(outbox.Callback, "d", 4*time.Minute, &outbox.Outcome{State: outbox.Delivered, Attempt: &outbox.Attempt{At: Base, Status: 200}})
	begin(outbox.Telegram, "42/1/status", 0, nil)
	begin(outbox.Telegram, "42/2/result", time.Hour, nil)

	read := func(kind outbox.Kind, state outbox.State, since time.Time, limit int) ([]string, []outbox.Entry) {
		t.Helper()
		got, err := e.Outbox.InState(e.ctx, kind, state, since, limit)
		require.NoError(t, err)
		var keys []string
		for _, x := range got {
			require.Equal(t, kind, x.Kind)
			require.Equal(t, state, x.State)
			keys = append(keys, x.Key)
		}
		return keys, got
	}
	keys, got := read(outbox.Callback, outbox.Pending, time.Time{}, 10)
	require.Equal(t, []string{"b", "a"}, keys, "by next_at, of its kind")
	require.Equal(t, 1, got[1].Attempts)
	require.Equal(t, "status_503", got[1].LastError)
	keys, _ = read(outbox.Callback, outbox.Pending, Base.Add(2*time.Minute), 10)
	require.Equal(t, []string{"a"}, keys, "from since on")
	keys, _ = read(outbox.Callback, outbox.Pending, time.Time{}, 1)
	require.Equal(t, []string{"b"}, keys, "at most limit")
	keys, got = read(outbox.Callback, outbox.Failed, time.Time{}, 10)
	require.Equal(t, []string{"c"}, keys)
	require.Equal(t, 503, got[0].LastStatus)
	keys, _ = read(outbox.Telegram, outbox.Pending, time.Time{}, 10)
	require.Equal(t, []string{"42/1/status", "42/2/result"}, keys)
}

func testLimits(t *testing.T, open Opener) {
	e := newEnv(t, open)
	for _, limit := range []int{0, -1, status.MaxRead + 1} {
		_, err := e.Jobs.StateEntries(e.ctx, job.Created, time.Time{}, limit)
		require.ErrorIs(t, err, status.ErrInvalid, "StateEntries %d", limit)
		_, err = e.Jobs.LatestInState(e.ctx, job.Dead, time.Time{}, limit)
		require.ErrorIs(t, err, status.ErrInvalid, "LatestInState %d", limit)
		_, err = e.Outbox.InState(e.ctx, outbox.Callback, outbox.Pending, time.Time{}, limit)
		require.ErrorIs(t, err, status.ErrInvalid, "InState %d", limit)
	}
	_, err := e.Jobs.StateEntries(e.ctx, job.Created, time.Time{}, status.MaxRead)
	require.NoError(t, err, "MaxRead itself is allowed")
}
