package job

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// lostAnswer is a store's Change whose first run commits and whose
// answer is then lost, so the transaction runs again on what the first
// committed, as YDB's SDK runs an idempotent transaction after a
// connection lost once the commit was sent. later, when set, is another
// writer's change committed between the two runs.
type lostAnswer struct {
	row   Job
	now   time.Time
	later func(Job) Job
	runs  int
}

func (s *lostAnswer) change(_ context.Context, _ string, _ bool, apply func(cur Job, now time.Time) (Job, error)) (Job, error) {
	next, err := apply(s.row, s.now)
	s.runs++
	if err != nil {
		return Job{}, err
	}
	s.row = next // committed
	if s.later != nil {
		s.row = s.later(s.row)
	}
	s.now = s.now.Add(time.Second) // the retry comes later
	next, err = apply(s.row, s.now)
	s.runs++
	if err != nil {
		return Job{}, err
	}
	s.row = next
	return next, nil
}

var rerunNow = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

func rerunJob(t *testing.T) Job {
	t.Helper()
	j, err := NewJob(Draft{Source: SourceAPI, OwnerID: "owner", UploadWindow: time.Hour}, rerunNow.Add(-time.Minute))
	require.NoError(t, err)
	return j
}

// Every write of Change, run twice for one call with the first run
// committed, answers what the first run wrote: the claim is the call's
// own, the save and the release are not refused as a claim lost, and no
// attempt is counted twice.
func TestWritesRunTwiceAnswerWhatTheFirstRunWrote(t *testing.T) {
	ctx := context.Background()

	t.Run("claim", func(t *testing.T) {
		s := &lostAnswer{row: rerunJob(t), now: rerunNow}
		j, err := Change(s.change).Claim(ctx, s.row.ID, Ingest)
		require.NoError(t, err, "the second run finds the job held by the first run's claim: its own")
		require.Equal(t, 2, s.runs)
		require.Equal(t, 1, j.Attempts, "one attempt, not two")
		require.Equal(t, s.row.ClaimID, j.ClaimID)
		require.Equal(t, rerunNow.Add(Ingest.Lease), j.ClaimUntil)
	})

	t.Run("save that ends the claim", func(t *testing.T) {
		claimed, err := ApplyClaim(rerunJob(t), Ingest, rerunNow)
		require.NoError(t, err)
		s := &lostAnswer{row: claimed, now: rerunNow.Add(time.Second)}
		next := claimed
		next.State = Created
		j, err := Change(s.change).Save(ctx, next, Next{After: time.Minute})
		require.NoError(t, err, "the claim the first run ended is not lost to the second")
		require.Equal(t, Created, j.State)
		require.Empty(t, j.ClaimID)
		require.Zero(t, j.Attempts)
		require.Equal(t, rerunNow.Add(time.Second+time.Minute), j.NextRunAt, "due as the first run wrote it")
	})

	t.Run("release", func(t *testing.T) {
		claimed, err := ApplyClaim(rerunJob(t), Ingest, rerunNow)
		require.NoError(t, err)
		s := &lostAnswer{row: claimed, now: rerunNow.Add(time.Second)}
		j, err := Change(s.change).Release(ctx, claimed.Claim(), 4*time.Second, Failure{Code: "store_unavailable"})
		require.NoError(t, err)
		require.Empty(t, j.ClaimID)
		require.Equal(t, 1, j.Attempts, "the attempt stays as counted")
		require.Equal(t, rerunNow.Add(5*time.Second), j.NextRunAt)
	})

	t.Run("delete", func(t *testing.T) {
		s := &lostAnswer{row: rerunJob(t), now: rerunNow}
		j, err := Change(s.change).Delete(ctx, s.row.ID)
		require.NoError(t, err)
		require.Equal(t, rerunNow, j.DeletedAt, "deleted at the first run")
		require.Equal(t, Failed, j.State)
	})

	t.Run("another writer between the runs is not taken for the first run", func(t *testing.T) {
		claimed, err := ApplyClaim(rerunJob(t), Ingest, rerunNow)
		require.NoError(t, err)
		s := &lostAnswer{row: claimed, now: rerunNow.Add(time.Second), later: func(j Job) Job {
			return ApplyDelete(j, rerunNow.Add(1500*time.Millisecond))
		}}
		next := claimed
		next.State = Created
		_, err = Change(s.change).Save(ctx, next, Next{})
		require.ErrorIs(t, err, ErrClaimLost, "the job deleted since is the deletion's, not this save's")
	})
}

// Without once, the same calls fail or count twice: the test above can
// fail.
func TestRulesAloneDoNotRecognizeTheirOwnWrite(t *testing.T) {
	claimed, err := ApplyClaim(rerunJob(t), Ingest, rerunNow)
	require.NoError(t, err)
	_, err = ApplyClaim(claimed, Ingest, rerunNow.Add(time.Second))
	require.ErrorIs(t, err, ErrNotClaimable, "a claim run again finds the job held")

	next := claimed
	next.State = Created
	saved, err := ApplySave(claimed, next, Next{}, rerunNow.Add(time.Second))
	require.NoError(t, err)
	_, err = ApplySave(saved, next, Next{}, rerunNow.Add(2*time.Second))
	require.ErrorIs(t, err, ErrClaimLost, "a save run again finds its claim ended")
}

// Claimed finds a due selection's earlier claims among the jobs read
// again: those still as written, not those another writer changed since.
func TestClaimedFindsItsOwnClaims(t *testing.T) {
	var c Claimed
	require.Empty(t, c.IDs())
	a, err := ApplyClaim(rerunJob(t), Ingest, rerunNow)
	require.NoError(t, err)
	b, err := ApplyClaim(rerunJob(t), Ingest, rerunNow)
	require.NoError(t, err)
	c.Wrote([]Job{a, b})
	require.Equal(t, []string{a.ID, b.ID}, c.IDs())

	deleted := ApplyDelete(b, rerunNow.Add(time.Second))
	require.Equal(t, []Job{a}, c.Ours([]Job{a, deleted}))
	require.Empty(t, c.Ours(nil), "a run whose earlier run did not commit finds none")

	other := a
	other.ClaimID = "01JD0000000000000000000001"
	require.Empty(t, c.Ours([]Job{other}), "another caller's claim is not ours")
}

func TestSameIsAtMilliseconds(t *testing.T) {
	j := rerunJob(t)
	read := j
	read.UpdatedAt = j.UpdatedAt.Add(400 * time.Microsecond).In(time.FixedZone("MSK", 3*3600))
	require.True(t, Same(read, j), "a store keeps milliseconds, in UTC")
	read.UpdatedAt = j.UpdatedAt.Add(time.Millisecond)
	require.False(t, Same(read, j))
	read = j
	read.DeletedAt = rerunNow
	require.False(t, Same(read, j), "zero is equal only to zero")
}
