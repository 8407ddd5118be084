package botstatetest

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/botstate"
	"transcriber/internal/errs"
)

const jobID = "01jd0m3y8k9q2r5t7v4w6x8z0a"

func testBegin(t *testing.T, open Opener) {
	t.Run("creates a delivery and takes it", func(t *testing.T) {
		e := newEnv(t, open)
		k := key(1, "result")
		d := e.mustTake(t, k, jobID, at(0))
		want := botstate.Delivery{
			Key: k, JobID: jobID, State: botstate.Pending, Attempts: 1,
			NextAt: at(Lease), LeaseUntil: at(Lease), UpdatedAt: at(0),
		}
		require.Equal(t, want, d)
		require.Equal(t, want, e.mustGet(t, k))
	})

	t.Run("a delivery without a job", func(t *testing.T) {
		e := newEnv(t, open)
		d := e.mustTake(t, key(1, "refusal"), "", at(0))
		require.Empty(t, d.JobID)
		require.Equal(t, d, e.mustGet(t, key(1, "refusal")))
	})

	t.Run("a held delivery is not taken", func(t *testing.T) {
		e := newEnv(t, open)
		k := key(1, "status")
		first := e.mustTake(t, k, jobID, at(0))
		d, taken := e.mustBegin(t, k, jobID, at(Lease-time.Millisecond))
		require.False(t, taken)
		require.Equal(t, first, d, "the delivery as stored")
		require.Equal(t, first, e.mustGet(t, k), "a refused Begin changes nothing")
	})

	t.Run("an expired lease is taken over", func(t *testing.T) {
		e := newEnv(t, open)
		k := key(1, "result")
		first := e.mustTake(t, k, jobID, at(0))
		d := e.mustTake(t, k, "01jd0m3y8k9q2r5t7v4w6x8z0b", at(Lease))
		want := first
		want.Attempts = 2
		want.LeaseUntil = at(2 * Lease)
		want.UpdatedAt = at(Lease)
		require.Equal(t, want, d, "Attempts one higher, a new lease, NextAt and the job recorded first kept")
		require.Equal(t, want, e.mustGet(t, k))

		_, taken := e.mustBegin(t, k, jobID, at(Lease+time.Second))
		require.False(t, taken, "the new sender holds it now")
	})

	t.Run("a sent or abandoned delivery is not taken", func(t *testing.T) {
		e := newEnv(t, open)
		for i, o := range []botstate.Outcome{sent(501), abandoned} {
			k := key(int64(10+i), "result")
			e.mustTake(t, k, jobID, at(0))
			final := e.mustFinish(t, k, o, at(time.Second))
			for _, now := range []time.Time{at(2 * time.Second), at(time.Hour)} {
				d, taken := e.mustBegin(t, k, jobID, now)
				require.False(t, taken, "%s", o.State)
				require.Equal(t, final, d, "%s: the delivery as stored", o.State)
			}
			require.Equal(t, final, e.mustGet(t, k))
		}
	})

	t.Run("a scheduled delivery is taken before it is due", func(t *testing.T) {
		e := newEnv(t, open)
		k := key(1, "result")
		e.mustSchedule(t, k, jobID, at(time.Hour), at(0))
		d := e.mustTake(t, k, "", at(time.Second))
		want := botstate.Delivery{
			Key: k, JobID: jobID, State: botstate.Pending, Attempts: 1,
			NextAt: at(time.Hour), LeaseUntil: at(time.Second + Lease), UpdatedAt: at(time.Second),
		}
		require.Equal(t, want, d, "NextAt kept: an event sends it now")
	})

	t.Run("a delivery left pending is taken again at once", func(t *testing.T) {
		e := newEnv(t, open)
		k := key(1, "result")
		e.mustTake(t, k, jobID, at(0))
		e.mustFinish(t, k, retry(at(time.Minute)), at(time.Second))
		d := e.mustTake(t, k, jobID, at(2*time.Second))
		require.Equal(t, 2, d.Attempts)
		require.Equal(t, at(time.Minute), d.NextAt)
		require.Equal(t, at(2*time.Second+Lease), d.LeaseUntil)
	})

	t.Run("keys differ by chat, message and part", func(t *testing.T) {
		e := newEnv(t, open)
		ks := []botstate.Key{
			{ChatID: 1, MessageID: 1, Part: "status"},
			{ChatID: 1, MessageID: 1, Part: "result"},
			{ChatID: 1, MessageID: 2, Part: "status"},
			{ChatID: 2, MessageID: 1, Part: "status"},
			{ChatID: -1, MessageID: 1, Part: "status"},
		}
		for i, k := range ks {
			e.mustTake(t, k, "", at(time.Duration(i)*time.Second))
		}
		for i, k := range ks {
			d := e.mustGet(t, k)
			require.Equal(t, k, d.Key)
			require.Equal(t, at(time.Duration(i)*time.Second), d.UpdatedAt, "%v", k)
		}
	})

	t.Run("a part of MaxPartLen bytes is a part", func(t *testing.T) {
		e := newEnv(t, open)
		k := key(1, strings.Repeat("p", botstate.MaxPartLen))
		e.mustTake(t, k, "", at(0))
		require.Equal(t, k, e.mustGet(t, k).Key)
	})

	t.Run("refuses a malformed key or a lease not positive", func(t *testing.T) {
		e := newEnv(t, open)
		for what, k := range malformedKeys() {
			_, _, err := e.st.Begin(e.ctx, k, jobID, at(0), Lease)
			requireInvalid(t, err, what)
		}
		for _, lease := range []time.Duration{0, -time.Second} {
			_, _, err := e.st.Begin(e.ctx, key(1, "result"), jobID, at(0), lease)
			requireInvalid(t, err, "lease "+lease.String())
		}
		e.requireGone(t, key(1, "result"))
	})
}

func testSchedule(t *testing.T, open Opener) {
	t.Run("records a pending delivery without taking it", func(t *testing.T) {
		e := newEnv(t, open)
		k := key(1, "result")
		d := e.mustSchedule(t, k, jobID, at(time.Minute), at(0))
		require.Equal(t, k, d.Key)
		require.Equal(t, jobID, d.JobID)
		require.Equal(t, botstate.Pending, d.State)
		require.Zero(t, d.SentID)
		require.Zero(t, d.Attempts, "nobody took it")
		require.Equal(t, at(time.Minute), d.NextAt)
		require.False(t, d.LeaseUntil.After(at(0)), "no lease: LeaseUntil %s is not after now", d.LeaseUntil)
		require.Equal(t, at(0), d.UpdatedAt)
		require.Equal(t, d, e.mustGet(t, k))
	})

	t.Run("a recorded delivery is left exactly as it is", func(t *testing.T) {
		e := newEnv(t, open)
		scheduled := e.mustSchedule(t, key(1, "result"), jobID, at(time.Minute), at(0))
		again := e.mustSchedule(t, key(1, "result"), "01jd0m3y8k9q2r5t7v4w6x8z0b", at(time.Hour), at(time.Second))
		require.Equal(t, scheduled, again)
		require.Equal(t, scheduled, e.mustGet(t, key(1, "result")))

		begun := e.mustTake(t, key(2, "result"), jobID, at(0))
		require.Equal(t, begun, e.mustSchedule(t, key(2, "result"), jobID, at(time.Hour), at(time.Second)), "a held one")
		require.Equal(t, begun, e.mustGet(t, key(2, "result")))

		e.mustTake(t, key(3, "result"), jobID, at(0))
		final := e.mustFinish(t, key(3, "result"), sent(77), at(time.Second))
		require.Equal(t, final, e.mustSchedule(t, key(3, "result"), jobID, at(time.Hour), at(time.Minute)), "a sent one")
		require.Equal(t, final, e.mustGet(t, key(3, "result")))
	})

	t.Run("a scheduled delivery is not due before its time", func(t *testing.T) {
		e := newEnv(t, open)
		e.mustSchedule(t, key(1, "result"), jobID, at(time.Minute), at(0))
		require.Empty(t, e.mustClaimDue(t, at(time.Minute-time.Millisecond), 10))
		require.Equal(t, []botstate.Key{key(1, "result")}, keys(e.mustClaimDue(t, at(time.Minute), 10)))
	})

	t.Run("refuses a malformed key", func(t *testing.T) {
		e := newEnv(t, open)
		for what, k := range malformedKeys() {
			_, err := e.st.Schedule(e.ctx, k, jobID, at(time.Minute), at(0))
			requireInvalid(t, err, what)
		}
	})
}

func testFinish(t *testing.T, open Opener) {
	t.Run("records a send and ends the lease", func(t *testing.T) {
		e := newEnv(t, open)
		k := key(1, "result")
		begun := e.mustTake(t, k, jobID, at(0))
		d := e.mustFinish(t, k, sent(501), at(time.Second))
		want := begun
		want.State, want.SentID = botstate.Sent, 501
		want.LeaseUntil, want.UpdatedAt = at(time.Second), at(time.Second)
		require.Equal(t, want, d)
		require.Equal(t, want, e.mustGet(t, k))
	})

	t.Run("pending again at NextAt", func(t *testing.T) {
		e := newEnv(t, open)
		k := key(1, "result")
		begun := e.mustTake(t, k, jobID, at(0))
		d := e.mustFinish(t, k, retry(at(time.Minute)), at(time.Second))
		want := begun
		want.NextAt = at(time.Minute)
		want.LeaseUntil, want.UpdatedAt = at(time.Second), at(time.Second)
		require.Equal(t, want, d)
		require.Equal(t, want, e.mustGet(t, k))
	})

	t.Run("a SentID is kept until a new one comes", func(t *testing.T) {
		e := newEnv(t, open)
		k := key(1, "status")
		e.mustTake(t, k, jobID, at(0))
		o := retry(at(time.Minute))
		o.SentID = 900 // the status message is posted; its edits go on
		d := e.mustFinish(t, k, o, at(time.Second))
		require.Equal(t, botstate.Pending, d.State)
		require.Equal(t, int64(900), d.SentID)

		e.mustTake(t, k, jobID, at(time.Minute))
		d = e.mustFinish(t, k, sent(0), at(time.Minute+time.Second))
		require.Equal(t, botstate.Sent, d.State)
		require.Equal(t, int64(900), d.SentID, "SentID 0 keeps the one recorded")
	})

	t.Run("abandoned", func(t *testing.T) {
		e := newEnv(t, open)
		k := key(1, "result")
		begun := e.mustTake(t, k, jobID, at(0))
		d := e.mustFinish(t, k, abandoned, at(time.Second))
		want := begun
		want.State = botstate.Abandoned
		want.LeaseUntil, want.UpdatedAt = at(time.Second), at(time.Second)
		require.Equal(t, want, d)
		require.Equal(t, want, e.mustGet(t, k))
	})

	t.Run("a delivery not taken may be finished", func(t *testing.T) {
		e := newEnv(t, open)
		k := key(1, "result")
		e.mustSchedule(t, k, jobID, at(time.Minute), at(0))
		d := e.mustFinish(t, k, abandoned, at(time.Second))
		require.Equal(t, botstate.Abandoned, d.State)
		require.Zero(t, d.Attempts)
		require.Empty(t, e.mustClaimDue(t, at(time.Hour), 10), "an abandoned delivery is never due")
	})

	t.Run("a sent delivery stays sent; a new SentID replaces the old", func(t *testing.T) {
		e := newEnv(t, open)
		k := key(1, "result")
		e.mustTake(t, k, jobID, at(0))
		first := e.mustFinish(t, k, sent(501), at(time.Second))

		for i, o := range []botstate.Outcome{retry(at(time.Hour)), abandoned, sent(0)} {
			now := at(time.Duration(2+i) * time.Second)
			d := e.mustFinish(t, k, o, now)
			require.Equal(t, botstate.Sent, d.State, "after %s", o.State)
			require.Equal(t, int64(501), d.SentID, "after %s", o.State)
			require.Equal(t, first.NextAt, d.NextAt, "after %s", o.State)
			require.Equal(t, first.Attempts, d.Attempts, "after %s", o.State)
			require.Equal(t, now, d.UpdatedAt, "after %s", o.State)
			require.False(t, d.LeaseUntil.After(now), "after %s: no lease", o.State)
			require.Equal(t, d, e.mustGet(t, k))
		}

		d := e.mustFinish(t, k, sent(502), at(time.Minute))
		require.Equal(t, botstate.Sent, d.State)
		require.Equal(t, int64(502), d.SentID, "an edit that posted anew")
		require.Equal(t, at(time.Minute), d.UpdatedAt)
		require.Equal(t, jobID, d.JobID)
		require.Equal(t, d, e.mustGet(t, k))
	})

	t.Run("an abandoned delivery stays abandoned", func(t *testing.T) {
		e := newEnv(t, open)
		k := key(1, "result")
		e.mustTake(t, k, jobID, at(0))
		e.mustFinish(t, k, abandoned, at(time.Second))
		for _, o := range []botstate.Outcome{retry(at(time.Hour)), sent(0)} {
			d := e.mustFinish(t, k, o, at(time.Minute))
			require.Equal(t, botstate.Abandoned, d.State, "after %s", o.State)
			require.Equal(t, d, e.mustGet(t, k))
		}
		_, taken := e.mustBegin(t, k, jobID, at(time.Hour))
		require.False(t, taken)
	})

	t.Run("an unknown delivery is not found", func(t *testing.T) {
		e := newEnv(t, open)
		e.mustTake(t, key(1, "status"), jobID, at(0))
		for _, k := range []botstate.Key{key(1, "result"), key(2, "status"), {ChatID: 5, MessageID: 1, Part: "status"}} {
			_, err := e.st.Finish(e.ctx, k, sent(1), at(time.Second))
			require.ErrorIs(t, err, botstate.ErrNotFound, "%v", k)
			require.Equal(t, errs.NotFound, errs.KindOf(err))
			e.requireGone(t, k)
		}
	})

	t.Run("refuses an unknown state, pending without NextAt, a malformed key", func(t *testing.T) {
		e := newEnv(t, open)
		k := key(1, "result")
		begun := e.mustTake(t, k, jobID, at(0))
		for what, o := range map[string]botstate.Outcome{
			"no state":               {},
			"an unknown state":       {State: "delivered", SentID: 5},
			"pending without NextAt": {State: botstate.Pending},
		} {
			_, err := e.st.Finish(e.ctx, k, o, at(time.Second))
			requireInvalid(t, err, what)
		}
		require.Equal(t, begun, e.mustGet(t, k), "a refused Finish changes nothing")
		for what, k := range malformedKeys() {
			_, err := e.st.Finish(e.ctx, k, sent(1), at(time.Second))
			requireInvalid(t, err, what)
		}
	})
}

func testGet(t *testing.T, open Opener) {
	t.Run("an unknown delivery is not found", func(t *testing.T) {
		e := newEnv(t, open)
		e.mustTake(t, key(1, "status"), jobID, at(0))
		_, err := e.st.Get(e.ctx, key(1, "result"))
		require.ErrorIs(t, err, botstate.ErrNotFound)
		require.Equal(t, errs.NotFound, errs.KindOf(err))
		e.requireGone(t, key(2, "status"))
		e.requireGone(t, botstate.Key{ChatID: 7, MessageID: 1, Part: "status"})
	})

	t.Run("refuses a malformed key", func(t *testing.T) {
		e := newEnv(t, open)
		for what, k := range malformedKeys() {
			_, err := e.st.Get(e.ctx, k)
			requireInvalid(t, err, what)
		}
	})

	t.Run("times come back in UTC", func(t *testing.T) {
		e := newEnv(t, open)
		msk := time.FixedZone("MSK", 3*3600)
		k := key(1, "result")
		_, taken, err := e.st.Begin(e.ctx, k, jobID, at(0).In(msk), Lease)
		require.NoError(t, err)
		require.True(t, taken)
		d := e.mustGet(t, k)
		require.Equal(t, at(0), d.UpdatedAt)
		require.Equal(t, at(Lease), d.NextAt)
		require.Equal(t, at(Lease), d.LeaseUntil)
	})
}

// requireInvalid checks err is botstate.ErrInvalid.
func requireInvalid(t *testing.T, err error, what string) {
	t.Helper()
	require.ErrorIs(t, err, botstate.ErrInvalid, what)
	require.Equal(t, errs.Invalid, errs.KindOf(err), what)
}
