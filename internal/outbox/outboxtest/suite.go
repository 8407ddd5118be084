// Package outboxtest is the contract every outbox.Store must keep.
//
// Run it from an implementation's tests:
//
//	func TestOutboxContract(t *testing.T) {
//		outboxtest.Run(t, func(t *testing.T) outbox.Store { … })
//	}
//
// Each test opens a fresh, empty store; the suite moves the time by hand
// from Base. The races (many senders beginning one entry, many putting
// one, many sweepers draining the due ones) must hand each attempt to
// exactly one sender. Run it with -race.
package outboxtest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/errs"
	"transcriber/internal/outbox"
	"transcriber/internal/racetest"
)

// Opener opens a fresh, empty store.
type Opener func(t *testing.T) outbox.Store

// Base is the suite's first moment: UTC, whole milliseconds.
var Base = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// Lease is the lease the suite's senders take.
const Lease = 30 * time.Second

// Racers run at once in a race, repeated Rounds times.
const (
	Racers = 16
	Rounds = 20
)

const jobID = "01jd0m3y8k9q2r5t7v4w6x8z0a"

func at(d time.Duration) time.Time { return Base.Add(d) }

// callback is a callback entry as a job's creation puts it.
func callback(id string) outbox.Entry {
	return outbox.Entry{Kind: outbox.Callback, Key: id, JobID: id, Payload: `{"url":"https://hooks.example.com/?id=` + id + `"}`}
}

// message is a Telegram entry of a group's message (chat ids of groups
// are negative).
func message(msg int, part string) outbox.Entry {
	return outbox.Entry{Kind: outbox.Telegram, Key: fmt.Sprintf("-100123/%d/%s", msg, part), JobID: jobID}
}

type env struct {
	st  outbox.Store
	ctx context.Context
}

func (e *env) mustPut(t *testing.T, d outbox.Entry, due, now time.Time) outbox.Entry {
	t.Helper()
	got, _, err := e.st.Put(e.ctx, d, due, now)
	require.NoError(t, err)
	return got
}

func (e *env) mustTake(t *testing.T, d outbox.Entry, now time.Time) outbox.Entry {
	t.Helper()
	got, taken, err := e.st.Begin(e.ctx, d, now, Lease)
	require.NoError(t, err)
	require.True(t, taken, "Begin %s at %s takes it", d.Key, now)
	return got
}

func (e *env) mustFinish(t *testing.T, d outbox.Entry, o outbox.Outcome, now time.Time) outbox.Entry {
	t.Helper()
	got, err := e.st.Finish(e.ctx, d.Kind, d.Key, o, now)
	require.NoError(t, err)
	return got
}

func (e *env) mustGet(t *testing.T, d outbox.Entry) outbox.Entry {
	t.Helper()
	got, err := e.st.Get(e.ctx, d.Kind, d.Key)
	require.NoError(t, err)
	return got
}

func (e *env) mustClaim(t *testing.T, kind outbox.Kind, now time.Time, limit int) []string {
	t.Helper()
	got, err := e.st.ClaimDue(e.ctx, kind, now, Lease, limit)
	require.NoError(t, err)
	keys := []string{}
	for _, d := range got {
		require.Equal(t, kind, d.Kind)
		require.Equal(t, now.Add(Lease), d.LeaseUntil)
		require.Equal(t, d, e.mustGet(t, d), "returned as stored")
		keys = append(keys, d.Key)
	}
	return keys
}

func requireInvalid(t *testing.T, err error, what string) {
	t.Helper()
	require.ErrorIs(t, err, outbox.ErrInvalid, what)
	require.Equal(t, errs.Invalid, errs.KindOf(err), what)
}

func failedPost(now time.Time, status int) *outbox.Attempt {
	return &outbox.Attempt{At: now, Status: status, Error: "bad_status"}
}

// Run runs the whole contract against stores made by open.
func Run(t *testing.T, open Opener) {
	newEnv := func(t *testing.T) *env { return &env{st: open(t), ctx: context.Background()} }

	t.Run("Put", func(t *testing.T) {
		e := newEnv(t)
		d, created, err := e.st.Put(e.ctx, callback(jobID), at(time.Hour), at(0))
		require.NoError(t, err)
		require.True(t, created)
		want := callback(jobID)
		want.State, want.NextAt, want.LeaseUntil, want.CreatedAt, want.UpdatedAt = outbox.Pending, at(time.Hour), at(0), at(0), at(0)
		require.Equal(t, want, d)
		require.Equal(t, want, e.mustGet(t, d))

		other := callback(jobID)
		other.Payload = "other"
		again, created, err := e.st.Put(e.ctx, other, at(2*time.Hour), at(time.Minute))
		require.NoError(t, err)
		require.False(t, created, "one entry a key")
		require.Equal(t, want, again, "the first is kept as it is")

		m := e.mustPut(t, message(1, "result"), at(time.Hour), at(0))
		require.Equal(t, outbox.Telegram, m.Kind, "kinds are apart: the same key in two kinds is two entries")
		same := message(1, "result")
		same.Kind = outbox.Callback
		same.JobID = ""
		_, created, err = e.st.Put(e.ctx, same, at(time.Hour), at(0))
		require.NoError(t, err)
		require.True(t, created)

		taken := e.mustTake(t, message(1, "result"), at(time.Second))
		require.Equal(t, taken, e.mustPut(t, message(1, "result"), at(time.Hour), at(time.Second)), "a held one is left as it is")
		final := e.mustFinish(t, taken, outbox.Outcome{State: outbox.Delivered, SentID: 7}, at(2*time.Second))
		require.Equal(t, final, e.mustPut(t, message(1, "result"), at(time.Hour), at(time.Minute)), "and a final one")

		for what, bad := range map[string]outbox.Entry{
			"no kind":         {Key: "k"},
			"an unknown kind": {Kind: "mail", Key: "k"},
			"no key":          {Kind: outbox.Callback},
			"a long key":      {Kind: outbox.Callback, Key: strings.Repeat("k", outbox.MaxKeyLen+1)},
			"a long job id":   {Kind: outbox.Callback, Key: "k", JobID: strings.Repeat("j", outbox.MaxJobIDLen+1)},
			"a long payload":  {Kind: outbox.Callback, Key: "k", Payload: strings.Repeat("p", outbox.MaxPayloadLen+1)},
		} {
			_, _, err := e.st.Put(e.ctx, bad, at(time.Hour), at(0))
			requireInvalid(t, err, what)
		}
		_, _, err = e.st.Put(e.ctx, callback("j3"), time.Time{}, at(0))
		requireInvalid(t, err, "no due time")
		_, _, err = e.st.Put(e.ctx, callback("j3"), at(0), time.Time{})
		requireInvalid(t, err, "no time")
		_, err = e.st.Get(e.ctx, outbox.Callback, "j3")
		require.ErrorIs(t, err, outbox.ErrNotFound, "a refused Put records nothing")
		require.Equal(t, errs.NotFound, errs.KindOf(err))

		long := outbox.Entry{Kind: outbox.Callback, Key: strings.Repeat("k", outbox.MaxKeyLen), JobID: strings.Repeat("j", outbox.MaxJobIDLen),
			Payload: strings.Repeat("p", outbox.MaxPayloadLen)}
		require.Equal(t, long.Payload, e.mustPut(t, long, at(0), at(0)).Payload, "the longest fields fit")
	})

	t.Run("Begin", func(t *testing.T) {
		e := newEnv(t)
		_, _, err := e.st.Begin(e.ctx, callback(jobID), at(0), Lease)
		require.ErrorIs(t, err, outbox.ErrNotFound, "a callback is put before it is sent")

		reg := e.mustPut(t, callback(jobID), at(time.Hour), at(0))
		d := e.mustTake(t, callback(jobID), at(time.Second))
		want := reg
		want.LeaseUntil, want.UpdatedAt = at(time.Second+Lease), at(time.Second)
		require.Equal(t, want, d, "taken before it is due: NextAt kept, no attempt")
		require.Equal(t, want, e.mustGet(t, d))

		held, taken, err := e.st.Begin(e.ctx, callback(jobID), at(time.Second+Lease-time.Millisecond), Lease)
		require.NoError(t, err)
		require.False(t, taken, "held by an unexpired lease")
		require.Equal(t, want, held)
		require.Equal(t, want, e.mustGet(t, d), "a refused Begin changes nothing")

		over := e.mustTake(t, callback(jobID), at(time.Second+Lease))
		require.Equal(t, at(time.Second+2*Lease), over.LeaseUntil, "an expired lease is taken over")

		m := e.mustTake(t, message(1, "reply"), at(0))
		require.Equal(t, outbox.Entry{Kind: outbox.Telegram, Key: message(1, "reply").Key, JobID: jobID, State: outbox.Pending,
			NextAt: at(Lease), LeaseUntil: at(Lease), CreatedAt: at(0), UpdatedAt: at(0)}, m, "a Telegram message is made by its first send")
		refusal := outbox.Entry{Kind: outbox.Telegram, Key: "-100123/2/reply"}
		require.Empty(t, e.mustTake(t, refusal, at(0)).JobID, "one without a job")

		for _, final := range []outbox.State{outbox.Delivered, outbox.Failed} {
			d := message(3, string(final))
			e.mustTake(t, d, at(0))
			stored := e.mustFinish(t, d, outbox.Outcome{State: final}, at(time.Second))
			got, taken, err := e.st.Begin(e.ctx, d, at(time.Hour), Lease)
			require.NoError(t, err)
			require.False(t, taken, "%s is final", final)
			require.Equal(t, stored, got)
		}
		for _, lease := range []time.Duration{0, -time.Second} {
			_, _, err := e.st.Begin(e.ctx, callback(jobID), at(time.Hour), lease)
			requireInvalid(t, err, "lease "+lease.String())
		}
		_, _, err = e.st.Begin(e.ctx, outbox.Entry{Kind: outbox.Telegram}, at(time.Hour), Lease)
		requireInvalid(t, err, "no key")
		_, _, err = e.st.Begin(e.ctx, message(9, "x"), time.Time{}, Lease)
		requireInvalid(t, err, "no time")
		_, err = e.st.Get(e.ctx, outbox.Telegram, message(9, "x").Key)
		require.ErrorIs(t, err, outbox.ErrNotFound, "a refused Begin records nothing")
	})

	t.Run("Finish", func(t *testing.T) {
		e := newEnv(t)
		e.mustPut(t, callback(jobID), at(time.Hour), at(0))
		taken := e.mustTake(t, callback(jobID), at(time.Second))

		d := e.mustFinish(t, taken, outbox.Outcome{State: outbox.Pending, NextAt: at(time.Minute),
			Attempt: failedPost(at(2*time.Second), 500)}, at(3*time.Second))
		want := taken
		want.Attempts, want.NextAt = 1, at(time.Minute)
		want.FirstAt, want.LastAt, want.LastStatus, want.LastError = at(2*time.Second), at(2*time.Second), 500, "bad_status"
		want.LeaseUntil, want.UpdatedAt = at(3*time.Second), at(3*time.Second)
		require.Equal(t, want, d, "an attempt recorded, due again at NextAt, the lease ended")
		require.Equal(t, want, e.mustGet(t, d))

		e.mustTake(t, d, at(time.Minute))
		d = e.mustFinish(t, d, outbox.Outcome{State: outbox.Delivered,
			Attempt: &outbox.Attempt{At: at(time.Minute + time.Second), Status: 204}}, at(time.Minute+2*time.Second))
		require.Equal(t, outbox.Delivered, d.State)
		require.Equal(t, 2, d.Attempts)
		require.Equal(t, at(2*time.Second), d.FirstAt, "the first attempt is kept")
		require.Equal(t, at(time.Minute+time.Second), d.LastAt)
		require.Equal(t, 204, d.LastStatus)
		require.Empty(t, d.LastError)

		late := e.mustFinish(t, d, outbox.Outcome{State: outbox.Pending, NextAt: at(time.Hour),
			Attempt: failedPost(at(time.Hour), 500)}, at(time.Hour))
		require.Equal(t, outbox.Delivered, late.State, "a final entry keeps its state")
		require.Equal(t, 2, late.Attempts, "and its record")
		require.Equal(t, 204, late.LastStatus)
		require.Equal(t, at(time.Hour), late.UpdatedAt)

		// SentID: recorded while pending, kept by 0, replaced on a
		// delivered one by a new one (an edit that posted anew).
		m := e.mustTake(t, message(1, "result"), at(0))
		m = e.mustFinish(t, m, outbox.Outcome{State: outbox.Pending, SentID: -1, NextAt: at(time.Minute)}, at(time.Second))
		require.Equal(t, int64(-1), m.SentID)
		m = e.mustFinish(t, m, outbox.Outcome{State: outbox.Delivered, SentID: 900}, at(2*time.Second))
		require.Equal(t, int64(900), m.SentID)
		m = e.mustFinish(t, m, outbox.Outcome{State: outbox.Delivered}, at(3*time.Second))
		require.Equal(t, int64(900), m.SentID, "0 keeps the one recorded")
		require.Equal(t, at(3*time.Second), m.UpdatedAt)
		m = e.mustFinish(t, m, outbox.Outcome{State: outbox.Failed, SentID: 901}, at(4*time.Second))
		require.Equal(t, outbox.Delivered, m.State)
		require.Equal(t, int64(900), m.SentID, "only a Delivered outcome replaces it")
		m = e.mustFinish(t, m, outbox.Outcome{State: outbox.Delivered, SentID: 902}, at(5*time.Second))
		require.Equal(t, int64(902), m.SentID)
		require.Equal(t, at(time.Minute), m.NextAt, "a final entry keeps its NextAt")

		untaken := e.mustPut(t, message(2, "result"), at(time.Hour), at(0))
		gone := e.mustFinish(t, untaken, outbox.Outcome{State: outbox.Failed}, at(time.Second))
		require.Equal(t, outbox.Failed, gone.State, "an entry not taken may be finished")
		require.Zero(t, gone.Attempts)
		require.Empty(t, e.mustClaim(t, outbox.Telegram, at(2*time.Hour), 10), "a failed entry is never due")

		_, err := e.st.Finish(e.ctx, outbox.Callback, "unknown", outbox.Outcome{State: outbox.Failed}, at(0))
		require.ErrorIs(t, err, outbox.ErrNotFound)
		for what, o := range map[string]outbox.Outcome{
			"no state":               {},
			"an unknown state":       {State: "sent"},
			"pending without NextAt": {State: outbox.Pending},
			"an attempt, no time":    {State: outbox.Failed, Attempt: &outbox.Attempt{Status: 500}},
		} {
			_, err := e.st.Finish(e.ctx, outbox.Callback, jobID, o, at(2*time.Hour))
			requireInvalid(t, err, what)
		}
		_, err = e.st.Finish(e.ctx, outbox.Callback, jobID, outbox.Outcome{State: outbox.Failed}, time.Time{})
		requireInvalid(t, err, "no time")
	})

	t.Run("ClaimDue", func(t *testing.T) {
		e := newEnv(t)
		e.mustPut(t, callback("b"), at(2*time.Minute), at(0))
		e.mustPut(t, callback("a"), at(time.Minute), at(0))
		e.mustPut(t, callback("c"), at(time.Hour), at(0))
		e.mustPut(t, callback("held"), at(time.Minute), at(0))
		e.mustTake(t, callback("held"), at(2*time.Minute))
		e.mustPut(t, callback("done"), at(0), at(0))
		e.mustFinish(t, callback("done"), outbox.Outcome{State: outbox.Delivered}, at(0))
		e.mustPut(t, message(1, "result"), at(0), at(0))

		require.Empty(t, e.mustClaim(t, outbox.Callback, at(time.Minute-time.Millisecond), 10), "nothing due yet")
		require.Equal(t, []string{"a", "b"}, e.mustClaim(t, outbox.Callback, at(2*time.Minute), 10),
			"due, not held, not final, of its kind, by NextAt")
		require.Zero(t, e.mustGet(t, callback("a")).Attempts, "a claim is not a send")
		require.Empty(t, e.mustClaim(t, outbox.Callback, at(2*time.Minute), 10), "claimed ones are held")
		require.Equal(t, []string{"a"}, e.mustClaim(t, outbox.Callback, at(2*time.Minute+Lease), 1),
			"an expired claim is due again; at most limit")
		require.Equal(t, []string{message(1, "result").Key}, e.mustClaim(t, outbox.Telegram, at(time.Hour), 10))

		for _, id := range []string{"a", "b", "held"} {
			e.mustFinish(t, callback(id), outbox.Outcome{State: outbox.Delivered}, at(time.Hour))
		}
		left := e.mustFinish(t, callback("c"), outbox.Outcome{State: outbox.Pending, NextAt: at(3 * time.Hour)}, at(time.Hour))
		require.Empty(t, e.mustClaim(t, outbox.Callback, at(3*time.Hour-time.Millisecond), 10))
		require.Equal(t, []string{left.Key}, e.mustClaim(t, outbox.Callback, at(3*time.Hour), 10), "one left pending is due at its NextAt")

		for _, limit := range []int{0, outbox.MaxClaimLimit + 1} {
			_, err := e.st.ClaimDue(e.ctx, outbox.Callback, at(time.Hour), Lease, limit)
			requireInvalid(t, err, fmt.Sprint("limit ", limit))
		}
		_, err := e.st.ClaimDue(e.ctx, outbox.Callback, at(time.Hour), 0, 1)
		requireInvalid(t, err, "lease 0")
		_, err = e.st.ClaimDue(e.ctx, "mail", at(time.Hour), Lease, 1)
		requireInvalid(t, err, "an unknown kind")
	})

	t.Run("times come back in UTC", func(t *testing.T) {
		e := newEnv(t)
		msk := time.FixedZone("MSK", 3*3600)
		_, _, err := e.st.Put(e.ctx, callback(jobID), at(time.Minute).In(msk), at(0).In(msk))
		require.NoError(t, err)
		d := e.mustGet(t, callback(jobID))
		require.Equal(t, at(time.Minute), d.NextAt)
		require.Equal(t, at(0), d.CreatedAt)
	})

	t.Run("Races", func(t *testing.T) { testRaces(t, newEnv) })
}

func testRaces(t *testing.T, newEnv func(*testing.T) *env) {
	t.Run("of senders beginning one entry exactly one takes each attempt and sends once", func(t *testing.T) {
		e := newEnv(t)
		for round := 0; round < Rounds; round++ {
			d := callback(fmt.Sprintf("job-%d", round))
			if round%2 == 1 {
				d = message(round, "result") // made by the first Begin
			} else {
				e.mustPut(t, d, at(time.Hour), at(0))
			}
			var mu sync.Mutex
			sends := 0
			var failures []error
			for attempt := 0; attempt < 3; attempt++ {
				now := at(time.Duration(attempt) * time.Hour)
				racetest.Run(Racers, func(int) {
					_, taken, err := e.st.Begin(e.ctx, d, now, Lease)
					if err == nil && taken {
						mu.Lock()
						sends++
						mu.Unlock()
						_, err = e.st.Finish(e.ctx, d.Kind, d.Key, outbox.Outcome{State: outbox.Pending, NextAt: now.Add(time.Minute),
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
			require.Equal(t, 3, sends, "round %d: one send per attempt", round)
			require.Equal(t, 3, e.mustGet(t, d).Attempts, "round %d: every send recorded, once", round)
		}
	})

	t.Run("of putters of one entry all get the one recorded", func(t *testing.T) {
		e := newEnv(t)
		for round := 0; round < Rounds; round++ {
			d := message(round, "result")
			got := make([]outbox.Entry, Racers)
			created := make([]bool, Racers)
			errList := make([]error, Racers)
			racetest.Run(Racers, func(i int) {
				got[i], created[i], errList[i] = e.st.Put(e.ctx, d, at(time.Duration(i)*time.Second), at(0))
			})
			stored, n := e.mustGet(t, d), 0
			for i := range got {
				require.NoError(t, errList[i], "round %d", round)
				require.Equal(t, stored, got[i], "round %d: putter %d gets the entry recorded", round, i)
				if created[i] {
					n++
				}
			}
			require.Equal(t, 1, n, "round %d: exactly one made it", round)
		}
	})

	t.Run("of sweepers of due entries each goes to exactly one", func(t *testing.T) {
		e := newEnv(t)
		for round := 0; round < Rounds/4; round++ {
			const entries = 40
			now := at(time.Duration(round+1) * time.Hour)
			for i := 0; i < entries; i++ {
				e.mustPut(t, callback(fmt.Sprintf("r%d-%02d", round, i)), now.Add(-time.Duration(i)*time.Millisecond), at(0))
			}
			var mu sync.Mutex
			claimed := map[string]int{}
			var failures []error
			racetest.Run(Racers, func(int) {
				for {
					got, err := e.st.ClaimDue(e.ctx, outbox.Callback, now, Lease, 3)
					mu.Lock()
					if err != nil {
						failures = append(failures, err)
					}
					for _, d := range got {
						claimed[d.Key]++
					}
					mu.Unlock()
					if err != nil || len(got) == 0 {
						return
					}
				}
			})
			require.Empty(t, failures, "round %d", round)
			require.Len(t, claimed, entries, "round %d: every due entry is taken", round)
			for id, n := range claimed {
				require.Equal(t, 1, n, "round %d: %s goes to exactly one sweeper", round, id)
				e.mustFinish(t, callback(id), outbox.Outcome{State: outbox.Delivered}, now)
			}
		}
	})
}
