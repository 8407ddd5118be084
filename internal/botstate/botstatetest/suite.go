// Package botstatetest is the contract every botstate.Store must keep.
//
// Run it from an implementation's tests:
//
//	func TestBotStateContract(t *testing.T) {
//		botstatetest.Run(t, func(t *testing.T) botstate.Store { … })
//	}
//
// Each test opens a fresh, empty store. The store takes the time as an
// argument, so the suite moves it by hand from Base: leases and due times
// are tested without sleeping. It includes the races: many goroutines
// updating one chat, beginning one delivery, scheduling one delivery and
// draining the due deliveries; none may lose an update or hand one delivery
// to two senders. Run it with -race.
package botstatetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/botstate"
)

// Opener opens a fresh, empty store.
type Opener func(t *testing.T) botstate.Store

// Base is the suite's first moment: UTC, whole milliseconds (the precision
// the stores keep), so what a store returns equals what the suite expects.
var Base = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// Lease is the lease the suite's senders take.
const Lease = 30 * time.Second

// Racers is how many goroutines the race tests run at once, and Rounds how
// many times each race is repeated.
const (
	Racers = 16
	Rounds = 20
)

// Run runs the whole contract against stores made by open.
func Run(t *testing.T, open Opener) {
	t.Run("Chat", func(t *testing.T) { testChat(t, open) })
	t.Run("UpdateChat", func(t *testing.T) { testUpdateChat(t, open) })
	t.Run("Begin", func(t *testing.T) { testBegin(t, open) })
	t.Run("Schedule", func(t *testing.T) { testSchedule(t, open) })
	t.Run("Finish", func(t *testing.T) { testFinish(t, open) })
	t.Run("Get", func(t *testing.T) { testGet(t, open) })
	t.Run("ClaimDue", func(t *testing.T) { testClaimDue(t, open) })
	t.Run("ForgetChat", func(t *testing.T) { testForgetChat(t, open) })
	t.Run("Races", func(t *testing.T) { testRaces(t, open) })
}

// env is one fresh store.
type env struct {
	st  botstate.Store
	ctx context.Context
}

func newEnv(t *testing.T, open Opener) *env {
	t.Helper()
	return &env{st: open(t), ctx: context.Background()}
}

// at is the moment d after Base.
func at(d time.Duration) time.Time { return Base.Add(d) }

// key names a delivery of chat -100123 (a group, as Telegram numbers them).
func key(msg int64, part string) botstate.Key {
	return botstate.Key{ChatID: -100123, MessageID: msg, Part: part}
}

func (e *env) mustChat(t *testing.T, id int64) botstate.Chat {
	t.Helper()
	c, err := e.st.Chat(e.ctx, id)
	require.NoError(t, err)
	return c
}

func (e *env) mustUpdate(t *testing.T, id int64, now time.Time, change func(*botstate.Chat)) botstate.Chat {
	t.Helper()
	c, err := e.st.UpdateChat(e.ctx, id, now, change)
	require.NoError(t, err)
	return c
}

func (e *env) mustBegin(t *testing.T, k botstate.Key, jobID string, now time.Time) (botstate.Delivery, bool) {
	t.Helper()
	d, taken, err := e.st.Begin(e.ctx, k, jobID, now, Lease)
	require.NoError(t, err)
	return d, taken
}

// mustTake begins k and requires that it was taken.
func (e *env) mustTake(t *testing.T, k botstate.Key, jobID string, now time.Time) botstate.Delivery {
	t.Helper()
	d, taken := e.mustBegin(t, k, jobID, now)
	require.True(t, taken, "Begin %v at %s takes it", k, now)
	return d
}

func (e *env) mustSchedule(t *testing.T, k botstate.Key, jobID string, due, now time.Time) botstate.Delivery {
	t.Helper()
	d, err := e.st.Schedule(e.ctx, k, jobID, due, now)
	require.NoError(t, err)
	return d
}

func (e *env) mustFinish(t *testing.T, k botstate.Key, o botstate.Outcome, now time.Time) botstate.Delivery {
	t.Helper()
	d, err := e.st.Finish(e.ctx, k, o, now)
	require.NoError(t, err)
	return d
}

func (e *env) mustGet(t *testing.T, k botstate.Key) botstate.Delivery {
	t.Helper()
	d, err := e.st.Get(e.ctx, k)
	require.NoError(t, err)
	return d
}

func (e *env) mustClaimDue(t *testing.T, now time.Time, limit int) []botstate.Delivery {
	t.Helper()
	ds, err := e.st.ClaimDue(e.ctx, now, Lease, limit)
	require.NoError(t, err)
	return ds
}

// requireGone checks that k is not recorded.
func (e *env) requireGone(t *testing.T, k botstate.Key) {
	t.Helper()
	_, err := e.st.Get(e.ctx, k)
	require.ErrorIs(t, err, botstate.ErrNotFound, "%v is not recorded", k)
}

// sent is the outcome of a send that posted message id.
func sent(id int64) botstate.Outcome { return botstate.Outcome{State: botstate.Sent, SentID: id} }

// retry is the outcome of a send to try again at next.
func retry(next time.Time) botstate.Outcome {
	return botstate.Outcome{State: botstate.Pending, NextAt: next}
}

var abandoned = botstate.Outcome{State: botstate.Abandoned}

func keys(ds []botstate.Delivery) []botstate.Key {
	out := make([]botstate.Key, len(ds))
	for i, d := range ds {
		out[i] = d.Key
	}
	return out
}

// malformedKeys are keys every method that takes one refuses.
func malformedKeys() map[string]botstate.Key {
	long := make([]byte, botstate.MaxPartLen+1)
	for i := range long {
		long[i] = 'p'
	}
	return map[string]botstate.Key{
		"zero chat id":    {ChatID: 0, MessageID: 1, Part: "result"},
		"zero message id": {ChatID: 1, MessageID: 0, Part: "result"},
		"empty part":      {ChatID: 1, MessageID: 1, Part: ""},
		"part too long":   {ChatID: 1, MessageID: 1, Part: string(long)},
		// 17 two-byte letters: 17 characters but 34 bytes.
		"part too long in bytes": {ChatID: 1, MessageID: 1, Part: "жжжжжжжжжжжжжжжжж"},
	}
}
