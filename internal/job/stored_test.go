package job_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/job"
)

func TestStoredAndLive(t *testing.T) {
	at := time.Date(2026, 3, 1, 13, 0, 0, 123_456_789, time.FixedZone("MSK", 3*3600))
	j := job.Stored(job.Job{CreatedAt: at, ReservedDay: at})
	require.Equal(t, at.UTC().Truncate(time.Millisecond), j.CreatedAt)
	require.Equal(t, time.UTC, j.ReservedDay.Location())
	require.True(t, j.EndedAt.IsZero(), "zero stays zero")
	require.Equal(t, []job.State{job.Created, job.Transcribe}, job.Live([]job.State{job.Created, job.Done, job.Transcribe, job.Dead}))
}

// A rerun keeps the claims its earlier run wrote that still stand and
// claims only the rest of the limit; a claim changed meanwhile is not its.
func TestClaimedRun(t *testing.T) {
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	due := []job.Job{{ID: "a", State: job.Created, NextRunAt: now}, {ID: "b", State: job.Created, NextRunAt: now}}
	var c job.Claimed
	rows := map[string]job.Job{}
	claim := func(n int) ([]job.Job, error) {
		next, err := job.ClaimAll(due[:min(n, len(due))], job.Ingest, now)
		for _, j := range next {
			rows[j.ID] = j
		}
		return next, err
	}
	get := func(id string) (job.Job, error) {
		if j, ok := rows[id]; ok {
			return j, nil
		}
		return job.Job{}, job.ErrNotFound
	}
	first, err := c.Run(2, get, claim)
	require.NoError(t, err)
	require.Len(t, first, 2)
	require.NotEmpty(t, first[0].ClaimID)

	delete(rows, "b") // gone meanwhile
	due = nil
	again, err := c.Run(2, get, claim)
	require.NoError(t, err)
	require.Equal(t, first[:1], again)

	boom := errors.New("boom")
	_, err = c.Run(2, func(string) (job.Job, error) { return job.Job{}, boom }, claim)
	require.ErrorIs(t, err, boom)

	_, err = job.ClaimAll([]job.Job{{ID: "d", State: job.Done}}, job.Ingest, now)
	require.ErrorIs(t, err, job.ErrNotClaimable)
}
