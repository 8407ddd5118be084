package jobstoretest_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"transcriber/internal/clock"
	"transcriber/internal/job"
	"transcriber/internal/job/jobstoretest"
	"transcriber/internal/racetest"
)

// The suite on the smallest correct store: shows the suite's own
// expectations are consistent.
func TestMemStoreKeepsTheContract(t *testing.T) {
	jobstoretest.Run(t, func(t *testing.T, clk clock.Clock) (job.Store, func()) {
		s := newMemStore(clk, false)
		return s, s.breakBackend
	})
}

// TestBrokenStore runs the suite on a store whose claim is a read and a
// separate write. It runs only inside TestSuiteCatchesADoubleClaim, which
// expects it to fail.
func TestBrokenStore(t *testing.T) {
	if !racetest.Subject() {
		t.Skip("runs only as the subject of TestSuiteCatchesADoubleClaim")
	}
	jobstoretest.Run(t, func(t *testing.T, clk clock.Clock) (job.Store, func()) {
		s := newMemStore(clk, true)
		return s, s.breakBackend
	})
}

// A store that lets two claimers win must fail the suite, in the claim race
// and nowhere else (the rest of the broken store is correct).
func TestSuiteCatchesADoubleClaim(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the suite in a child process")
	}
	out, failed := racetest.BrokenSuite()
	require.True(t, failed, "the suite must fail a store with a racy claim; output:\n%s", out)

	s := out
	require.Contains(t, s, "--- FAIL: TestBrokenStore/Races/of_claimers_of_one_job_exactly_one_wins")
	require.Contains(t, s, "exactly one of 16 claimers wins")
	require.Contains(t, s, "--- PASS: TestBrokenStore/Claim/")
	require.Contains(t, s, "--- PASS: TestBrokenStore/Races/of_claimers_of_due_jobs_each_job_goes_to_exactly_one")
}
