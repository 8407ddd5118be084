package ydb

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/job"
)

// ClaimDue reads each state's first limit due jobs in the index's order
// and merges them: the earliest next_run_at first, then the lower id, at
// most limit, whatever state they are in.
func TestFirstDueMerges(t *testing.T) {
	now := t0()
	at := func(d time.Duration) time.Time { return now.Add(d) }
	mk := func(id string, st job.State, next time.Time) job.Job {
		return job.Job{ID: id, State: st, NextRunAt: next}
	}
	ids := func(js []job.Job) []string {
		var out []string
		for _, j := range js {
			out = append(out, j.ID)
		}
		return out
	}
	// As the per-state reads return them: each state's rows in order.
	rows := func() []job.Job {
		return []job.Job{
			mk("c1", job.Created, at(-3*time.Minute)), mk("c2", job.Created, at(-time.Minute)),
			mk("a1", job.AwaitingUpload, at(-2*time.Minute)), mk("a2", job.AwaitingUpload, at(-time.Minute)),
			mk("v1", job.Converted, at(-4*time.Minute)),
		}
	}

	require.Equal(t, []string{"v1", "c1", "a1", "a2", "c2"}, ids(firstDue(rows(), now, 10)), "by next_run_at, then id")
	require.Equal(t, []string{"v1", "c1"}, ids(firstDue(rows(), now, 2)), "at most limit")

	t.Run("a job a claim still holds is not taken", func(t *testing.T) {
		held := mk("h1", job.Created, at(-5*time.Minute))
		held.ClaimID, held.ClaimUntil = "claim", at(time.Minute) // next_run_at and claim disagree
		got := firstDue(append(rows(), held), now, 10)
		require.NotContains(t, ids(got), "h1")
		require.Len(t, got, 5)
	})
	t.Run("an expired claim does not hold", func(t *testing.T) {
		expired := mk("e1", job.Created, at(-5*time.Minute))
		expired.ClaimID, expired.ClaimUntil = "claim", now
		require.Equal(t, "e1", ids(firstDue(append(rows(), expired), now, 1))[0])
	})
	t.Run("nothing due", func(t *testing.T) {
		require.Empty(t, firstDue(nil, now, 10))
		require.Empty(t, firstDue([]job.Job{mk("f", job.Created, at(time.Second))}, now, 10))
	})
}
