package botstatetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/botstate"
)

func testClaimDue(t *testing.T, open Opener) {
	t.Run("takes due deliveries by NextAt", func(t *testing.T) {
		e := newEnv(t, open)
		// Recorded in this order, due in another: b, c, a; d later.
		a := e.mustSchedule(t, key(1, "result"), jobID, at(3*time.Second), at(0))
		b := e.mustSchedule(t, key(2, "result"), jobID, at(time.Second), at(0))
		c := e.mustSchedule(t, key(3, "refusal"), "", at(2*time.Second), at(0))
		d := e.mustSchedule(t, key(4, "result"), jobID, at(time.Hour), at(0))
		now := at(10 * time.Second)

		got := e.mustClaimDue(t, now, 2)
		require.Equal(t, []botstate.Key{b.Key, c.Key}, keys(got))
		for i, want := range []botstate.Delivery{b, c} {
			want.Attempts = 1
			want.LeaseUntil = now.Add(Lease)
			want.UpdatedAt = now
			require.Equal(t, want, got[i], "taken as Begin takes it: NextAt kept")
			require.Equal(t, want, e.mustGet(t, want.Key))
		}

		rest := e.mustClaimDue(t, now, 10)
		require.Equal(t, []botstate.Key{a.Key}, keys(rest), "taken ones are not taken twice; d is not due")
		require.Equal(t, d, e.mustGet(t, d.Key))
	})

	t.Run("skips held, sent and abandoned deliveries", func(t *testing.T) {
		e := newEnv(t, open)
		due := e.mustSchedule(t, key(1, "result"), jobID, at(0), at(0))
		held := e.mustTake(t, key(2, "result"), jobID, at(0))
		e.mustTake(t, key(3, "result"), jobID, at(0))
		e.mustFinish(t, key(3, "result"), sent(5), at(time.Second))
		e.mustTake(t, key(4, "result"), jobID, at(0))
		e.mustFinish(t, key(4, "result"), abandoned, at(time.Second))

		got := e.mustClaimDue(t, at(Lease-time.Millisecond), botstate.MaxClaimLimit)
		require.Equal(t, []botstate.Key{due.Key}, keys(got))

		got = e.mustClaimDue(t, at(Lease), botstate.MaxClaimLimit)
		require.Equal(t, []botstate.Key{held.Key}, keys(got), "a lease that ran out makes a begun delivery due")
		require.Equal(t, 2, got[0].Attempts)
		require.Equal(t, held.NextAt, got[0].NextAt)
	})

	t.Run("an expired claim makes the delivery due again", func(t *testing.T) {
		e := newEnv(t, open)
		k := key(1, "result")
		e.mustSchedule(t, k, jobID, at(0), at(0))
		first := e.mustClaimDue(t, at(time.Second), 10)
		require.Len(t, first, 1)
		require.Empty(t, e.mustClaimDue(t, at(time.Second+Lease-time.Millisecond), 10), "held by the sweep")
		again := e.mustClaimDue(t, at(time.Second+Lease), 10)
		require.Len(t, again, 1)
		require.Equal(t, 2, again[0].Attempts)
		require.Equal(t, at(time.Second+2*Lease), again[0].LeaseUntil)
	})

	t.Run("a delivery left pending is due at its NextAt", func(t *testing.T) {
		e := newEnv(t, open)
		k := key(1, "result")
		e.mustTake(t, k, jobID, at(0))
		e.mustFinish(t, k, retry(at(time.Minute)), at(time.Second))
		require.Empty(t, e.mustClaimDue(t, at(time.Minute-time.Millisecond), 10))
		got := e.mustClaimDue(t, at(time.Minute), 10)
		require.Equal(t, []botstate.Key{k}, keys(got))
		require.Equal(t, 2, got[0].Attempts)
	})

	t.Run("nothing due is an empty answer", func(t *testing.T) {
		e := newEnv(t, open)
		require.Empty(t, e.mustClaimDue(t, at(0), 10))
		e.mustSchedule(t, key(1, "result"), jobID, at(time.Hour), at(0))
		require.Empty(t, e.mustClaimDue(t, at(0), 10))
	})

	t.Run("takes up to the limit", func(t *testing.T) {
		e := newEnv(t, open)
		for i := range botstate.MaxClaimLimit + 5 {
			e.mustSchedule(t, key(int64(i+1), "result"), "", at(time.Duration(i)*time.Millisecond), at(0))
		}
		got := e.mustClaimDue(t, at(time.Hour), botstate.MaxClaimLimit)
		require.Len(t, got, botstate.MaxClaimLimit)
		for i := 1; i < len(got); i++ {
			require.True(t, got[i-1].NextAt.Before(got[i].NextAt), "ordered by NextAt")
		}
		require.Len(t, e.mustClaimDue(t, at(time.Hour), botstate.MaxClaimLimit), 5)
	})

	t.Run("refuses a limit out of range or a lease not positive", func(t *testing.T) {
		e := newEnv(t, open)
		e.mustSchedule(t, key(1, "result"), jobID, at(0), at(0))
		for _, limit := range []int{0, -1, botstate.MaxClaimLimit + 1} {
			_, err := e.st.ClaimDue(e.ctx, at(time.Second), Lease, limit)
			requireInvalid(t, err, "limit")
		}
		for _, lease := range []time.Duration{0, -time.Second} {
			_, err := e.st.ClaimDue(e.ctx, at(time.Second), lease, 10)
			requireInvalid(t, err, "lease "+lease.String())
		}
		require.Zero(t, e.mustGet(t, key(1, "result")).Attempts, "a refused ClaimDue takes nothing")
	})
}

func testForgetChat(t *testing.T, open Opener) {
	t.Run("removes the chat's settings and deliveries, and no other chat's", func(t *testing.T) {
		e := newEnv(t, open)
		const gone, kept = int64(-100123), int64(555)
		e.mustUpdate(t, gone, at(0), func(c *botstate.Chat) { c.Language = "ru-RU" })
		keptChat := e.mustUpdate(t, kept, at(0), func(c *botstate.Chat) { c.Language = "en-US" })
		goneKeys := []botstate.Key{
			{ChatID: gone, MessageID: 1, Part: "status"},
			{ChatID: gone, MessageID: 1, Part: "result"},
			{ChatID: gone, MessageID: 2, Part: "refusal"},
		}
		e.mustSchedule(t, goneKeys[0], jobID, at(0), at(0))
		e.mustTake(t, goneKeys[1], jobID, at(0))
		e.mustFinish(t, goneKeys[1], sent(9), at(time.Second))
		e.mustTake(t, goneKeys[2], "", at(0))
		keptKey := botstate.Key{ChatID: kept, MessageID: 1, Part: "status"}
		keptDelivery := e.mustSchedule(t, keptKey, jobID, at(0), at(0))

		require.NoError(t, e.st.ForgetChat(e.ctx, gone))

		require.Equal(t, botstate.Chat{ID: gone}, e.mustChat(t, gone))
		for _, k := range goneKeys {
			e.requireGone(t, k)
		}
		require.Equal(t, keptChat, e.mustChat(t, kept))
		require.Equal(t, keptDelivery, e.mustGet(t, keptKey))
		require.Equal(t, []botstate.Key{keptKey}, keys(e.mustClaimDue(t, at(time.Hour), 10)))
	})

	t.Run("a chat never seen is no error", func(t *testing.T) {
		e := newEnv(t, open)
		require.NoError(t, e.st.ForgetChat(e.ctx, 42))
		require.NoError(t, e.st.ForgetChat(e.ctx, 42))
	})

	t.Run("a forgotten chat starts afresh", func(t *testing.T) {
		e := newEnv(t, open)
		k := botstate.Key{ChatID: 42, MessageID: 1, Part: "result"}
		e.mustTake(t, k, jobID, at(0))
		e.mustFinish(t, k, sent(3), at(time.Second))
		require.NoError(t, e.st.ForgetChat(e.ctx, 42))
		d := e.mustTake(t, k, "", at(time.Minute))
		require.Equal(t, 1, d.Attempts)
		require.Empty(t, d.JobID)
		require.Zero(t, d.SentID)
	})
}
