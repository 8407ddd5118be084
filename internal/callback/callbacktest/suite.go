// Package callbacktest is the contract every callback.Store must keep.
//
// Run it from an implementation's tests:
//
//	func TestCallbackContract(t *testing.T) {
//		callbacktest.Run(t, func(t *testing.T) callback.Store { … })
//	}
//
// Each test opens a fresh, empty store. The store takes the time as an
// argument, so the suite moves it by hand from Base. It includes the
// races: many senders beginning one delivery, and many sweepers draining
// the due ones, where each attempt must go to exactly one sender, which
// makes exactly one POST. Run it with -race.
package callbacktest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/callback"
	"transcriber/internal/errs"
	"transcriber/internal/racetest"
)

// Opener opens a fresh, empty store.
type Opener func(t *testing.T) callback.Store

// Base is the suite's first moment: UTC, whole milliseconds.
var Base = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// Lease is the lease the suite's senders take.
const Lease = 30 * time.Second

// Racers is how many goroutines a race runs at once; Rounds how many
// times each race is repeated.
const (
	Racers = 16
	Rounds = 20
)

const jobID = "01jd0m3y8k9q2r5t7v4w6x8z0a"

func at(d time.Duration) time.Time { return Base.Add(d) }

// draft is the delivery of job id as a job's creation registers it.
func draft(id string) callback.Delivery {
	return callback.Delivery{JobID: id, URL: "https://hooks.example.com/transcriber?id=" + id,
		TokenHash: "5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8", WebhookID: "msg_" + id}
}

type env struct {
	st  callback.Store
	ctx context.Context
}

func (e *env) mustRegister(t *testing.T, id string, due, now time.Time) callback.Delivery {
	t.Helper()
	d, _, err := e.st.Register(e.ctx, draft(id), due, now)
	require.NoError(t, err)
	return d
}

func (e *env) mustTake(t *testing.T, id string, now time.Time) callback.Delivery {
	t.Helper()
	d, taken, err := e.st.Begin(e.ctx, id, now, Lease)
	require.NoError(t, err)
	require.True(t, taken, "Begin %s at %s takes it", id, now)
	return d
}

func (e *env) mustFinish(t *testing.T, id string, o callback.Outcome, now time.Time) callback.Delivery {
	t.Helper()
	d, err := e.st.Finish(e.ctx, id, o, now)
	require.NoError(t, err)
	return d
}

func (e *env) mustGet(t *testing.T, id string) callback.Delivery {
	t.Helper()
	d, err := e.st.Get(e.ctx, id)
	require.NoError(t, err)
	return d
}

func requireInvalid(t *testing.T, err error, what string) {
	t.Helper()
	require.ErrorIs(t, err, callback.ErrInvalid, what)
	require.Equal(t, errs.Invalid, errs.KindOf(err), what)
}

func failedPost(now time.Time, status int) *callback.Attempt {
	return &callback.Attempt{At: now, Status: status, Error: "bad_status"}
}

// Run runs the whole contract against stores made by open.
func Run(t *testing.T, open Opener) {
	newEnv := func(t *testing.T) *env { return &env{st: open(t), ctx: context.Background()} }

	t.Run("Register", func(t *testing.T) {
		e := newEnv(t)
		d, created, err := e.st.Register(e.ctx, draft(jobID), at(time.Hour), at(0))
		require.NoError(t, err)
		require.True(t, created)
		want := draft(jobID)
		want.State, want.NextAt, want.LeaseUntil, want.CreatedAt, want.UpdatedAt = callback.Pending, at(time.Hour), at(0), at(0), at(0)
		require.Equal(t, want, d)
		require.Equal(t, want, e.mustGet(t, jobID))

		other := draft(jobID)
		other.URL, other.WebhookID = "https://elsewhere.example.com/", "msg_other"
		again, created, err := e.st.Register(e.ctx, other, at(2*time.Hour), at(time.Minute))
		require.NoError(t, err)
		require.False(t, created, "a job has one callback")
		require.Equal(t, want, again, "the first is kept as it is")

		for what, bad := range map[string]callback.Delivery{
			"no job":     {URL: "https://x.example.com/", TokenHash: "h", WebhookID: "w"},
			"no url":     {JobID: "j2", TokenHash: "h", WebhookID: "w"},
			"no token":   {JobID: "j2", URL: "https://x.example.com/", WebhookID: "w"},
			"no webhook": {JobID: "j2", URL: "https://x.example.com/", TokenHash: "h"},
		} {
			_, _, err := e.st.Register(e.ctx, bad, at(time.Hour), at(0))
			requireInvalid(t, err, what)
		}
		_, _, err = e.st.Register(e.ctx, draft("j3"), time.Time{}, at(0))
		requireInvalid(t, err, "no due time")
		_, err = e.st.Get(e.ctx, "j2")
		require.ErrorIs(t, err, callback.ErrNotFound, "a refused Register records nothing")
	})

	t.Run("Begin", func(t *testing.T) {
		e := newEnv(t)
		_, _, err := e.st.Begin(e.ctx, jobID, at(0), Lease)
		require.ErrorIs(t, err, callback.ErrNotFound, "a job without a callback")
		require.Equal(t, errs.NotFound, errs.KindOf(err))

		reg := e.mustRegister(t, jobID, at(time.Hour), at(0))
		d := e.mustTake(t, jobID, at(time.Second))
		want := reg
		want.LeaseUntil, want.UpdatedAt = at(time.Second+Lease), at(time.Second)
		require.Equal(t, want, d, "taken before it is due: the job ended; NextAt kept, no attempt yet")
		require.Equal(t, want, e.mustGet(t, jobID))

		held, taken, err := e.st.Begin(e.ctx, jobID, at(time.Second+Lease-time.Millisecond), Lease)
		require.NoError(t, err)
		require.False(t, taken, "held by an unexpired lease")
		require.Equal(t, want, held)

		over := e.mustTake(t, jobID, at(time.Second+Lease))
		require.Equal(t, at(time.Second+2*Lease), over.LeaseUntil, "an expired lease is taken over")

		for _, final := range []callback.State{callback.Delivered, callback.Failed} {
			id := "final-" + string(final)
			e.mustRegister(t, id, at(time.Hour), at(0))
			e.mustTake(t, id, at(0))
			stored := e.mustFinish(t, id, callback.Outcome{State: final}, at(time.Second))
			d, taken, err := e.st.Begin(e.ctx, id, at(time.Hour), Lease)
			require.NoError(t, err)
			require.False(t, taken, "%s is final", final)
			require.Equal(t, stored, d)
		}
		for _, lease := range []time.Duration{0, -time.Second} {
			_, _, err := e.st.Begin(e.ctx, jobID, at(time.Hour), lease)
			requireInvalid(t, err, "lease "+lease.String())
		}
		_, _, err = e.st.Begin(e.ctx, "", at(time.Hour), Lease)
		requireInvalid(t, err, "no job id")
	})

	t.Run("Finish", func(t *testing.T) {
		e := newEnv(t)
		e.mustRegister(t, jobID, at(time.Hour), at(0))
		taken := e.mustTake(t, jobID, at(time.Second))

		d := e.mustFinish(t, jobID, callback.Outcome{State: callback.Pending, NextAt: at(time.Minute),
			Attempt: failedPost(at(2*time.Second), 500)}, at(3*time.Second))
		want := taken
		want.Attempts, want.NextAt = 1, at(time.Minute)
		want.FirstAt, want.LastAt, want.LastStatus, want.LastError = at(2*time.Second), at(2*time.Second), 500, "bad_status"
		want.LeaseUntil, want.UpdatedAt = at(3*time.Second), at(3*time.Second)
		require.Equal(t, want, d, "an attempt recorded, due again at NextAt, the lease ended")
		require.Equal(t, want, e.mustGet(t, jobID))

		e.mustTake(t, jobID, at(time.Minute))
		d = e.mustFinish(t, jobID, callback.Outcome{State: callback.Delivered,
			Attempt: &callback.Attempt{At: at(time.Minute + time.Second), Status: 204}}, at(time.Minute+2*time.Second))
		require.Equal(t, callback.Delivered, d.State)
		require.Equal(t, 2, d.Attempts)
		require.Equal(t, at(2*time.Second), d.FirstAt, "the first attempt is kept")
		require.Equal(t, at(time.Minute+time.Second), d.LastAt)
		require.Equal(t, 204, d.LastStatus)
		require.Empty(t, d.LastError)

		late := e.mustFinish(t, jobID, callback.Outcome{State: callback.Pending, NextAt: at(time.Hour),
			Attempt: failedPost(at(time.Hour), 500)}, at(time.Hour))
		require.Equal(t, callback.Delivered, late.State, "a final delivery keeps its state")
		require.Equal(t, 2, late.Attempts, "and its record")
		require.Equal(t, 204, late.LastStatus)

		_, err := e.st.Finish(e.ctx, "unknown", callback.Outcome{State: callback.Failed}, at(0))
		require.ErrorIs(t, err, callback.ErrNotFound)
		for what, o := range map[string]callback.Outcome{
			"no state":               {},
			"an unknown state":       {State: "sent"},
			"pending without NextAt": {State: callback.Pending},
			"an attempt, no time":    {State: callback.Failed, Attempt: &callback.Attempt{Status: 500}},
		} {
			_, err := e.st.Finish(e.ctx, jobID, o, at(2*time.Hour))
			requireInvalid(t, err, what)
		}
	})

	t.Run("ClaimDue", func(t *testing.T) {
		e := newEnv(t)
		e.mustRegister(t, "b", at(2*time.Minute), at(0))
		e.mustRegister(t, "a", at(time.Minute), at(0))
		e.mustRegister(t, "c", at(time.Hour), at(0))
		e.mustRegister(t, "held", at(time.Minute), at(0))
		e.mustTake(t, "held", at(2*time.Minute))
		e.mustRegister(t, "done", at(0), at(0))
		e.mustFinish(t, "done", callback.Outcome{State: callback.Delivered}, at(0))

		got, err := e.st.ClaimDue(e.ctx, at(2*time.Minute), Lease, 10)
		require.NoError(t, err)
		require.Len(t, got, 2, "due, not held, not final")
		require.Equal(t, "a", got[0].JobID, "by NextAt")
		require.Equal(t, "b", got[1].JobID)
		for _, d := range got {
			require.Equal(t, at(2*time.Minute+Lease), d.LeaseUntil)
			require.Zero(t, d.Attempts, "a claim is not a POST")
			require.Equal(t, d, e.mustGet(t, d.JobID))
		}
		again, err := e.st.ClaimDue(e.ctx, at(2*time.Minute), Lease, 10)
		require.NoError(t, err)
		require.Empty(t, again, "claimed ones are held")

		one, err := e.st.ClaimDue(e.ctx, at(time.Hour), Lease, 1)
		require.NoError(t, err)
		require.Len(t, one, 1, "at most limit")

		for _, limit := range []int{0, callback.MaxClaimLimit + 1} {
			_, err := e.st.ClaimDue(e.ctx, at(time.Hour), Lease, limit)
			requireInvalid(t, err, fmt.Sprint("limit ", limit))
		}
		_, err = e.st.ClaimDue(e.ctx, at(time.Hour), 0, 1)
		requireInvalid(t, err, "lease 0")
	})

	t.Run("times come back in UTC", func(t *testing.T) {
		e := newEnv(t)
		msk := time.FixedZone("MSK", 3*3600)
		_, _, err := e.st.Register(e.ctx, draft(jobID), at(time.Minute).In(msk), at(0).In(msk))
		require.NoError(t, err)
		d := e.mustGet(t, jobID)
		require.Equal(t, at(time.Minute), d.NextAt)
		require.Equal(t, at(0), d.CreatedAt)
	})

	t.Run("Races", func(t *testing.T) { testRaces(t, newEnv) })
}

func testRaces(t *testing.T, newEnv func(*testing.T) *env) {
	t.Run("of senders beginning one delivery exactly one takes each attempt and POSTs once", func(t *testing.T) {
		e := newEnv(t)
		for round := 0; round < Rounds; round++ {
			id := fmt.Sprintf("job-%d", round)
			e.mustRegister(t, id, at(time.Hour), at(0))
			var mu sync.Mutex
			posts := 0
			var failures []error
			// Three attempts, each raced by every sender: the job's end
			// (Begin) and the retries.
			for attempt := 0; attempt < 3; attempt++ {
				now := at(time.Duration(attempt) * time.Hour)
				racetest.Run(Racers, func(int) {
					_, taken, err := e.st.Begin(e.ctx, id, now, Lease)
					if err == nil && taken {
						mu.Lock()
						posts++
						mu.Unlock()
						_, err = e.st.Finish(e.ctx, id, callback.Outcome{State: callback.Pending, NextAt: now.Add(time.Minute),
							Attempt: failedPost(now, 503)}, now.Add(time.Second))
					}
					if err != nil {
						mu.Lock()
						failures = append(failures, err)
						mu.Unlock()
					}
				})
			}
			require.Empty(t, failures, "round %d", round)
			require.Equal(t, 3, posts, "round %d: one POST per attempt", round)
			require.Equal(t, 3, e.mustGet(t, id).Attempts, "round %d: every POST recorded, once", round)
		}
	})

	t.Run("of sweepers of due deliveries each goes to exactly one", func(t *testing.T) {
		e := newEnv(t)
		for round := 0; round < Rounds/4; round++ {
			const deliveries = 40
			now := at(time.Duration(round+1) * time.Hour)
			for i := 0; i < deliveries; i++ {
				e.mustRegister(t, fmt.Sprintf("r%d-%02d", round, i), now.Add(-time.Duration(i)*time.Millisecond), at(0))
			}
			var mu sync.Mutex
			claimed := map[string]int{}
			var failures []error
			racetest.Run(Racers, func(int) {
				for {
					got, err := e.st.ClaimDue(e.ctx, now, Lease, 3)
					mu.Lock()
					if err != nil {
						failures = append(failures, err)
					}
					for _, d := range got {
						claimed[d.JobID]++
					}
					mu.Unlock()
					if err != nil || len(got) == 0 {
						return
					}
				}
			})
			require.Empty(t, failures, "round %d", round)
			require.Len(t, claimed, deliveries, "round %d: every due delivery is taken", round)
			for id, n := range claimed {
				require.Equal(t, 1, n, "round %d: %s goes to exactly one sweeper", round, id)
			}
			for id := range claimed {
				// Finish them so the next round sees only its own.
				e.mustFinish(t, id, callback.Outcome{State: callback.Delivered}, now)
			}
		}
	})
}
