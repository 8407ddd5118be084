package quotatest_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"transcriber/internal/quota"
	"transcriber/internal/quota/quotatest"
	"transcriber/internal/racetest"
)

// The suite on the smallest correct store: shows the suite's own
// expectations are consistent.
func TestMemStoreKeepsTheContract(t *testing.T) {
	quotatest.Run(t, func(*testing.T) quota.Counters { return newMemStore(false) })
}

// TestBrokenStore runs the suite on a store whose reservation is a read
// and a separate write. It runs only inside TestSuiteCatchesARacyReserve,
// which expects it to fail.
func TestBrokenStore(t *testing.T) {
	if !racetest.Subject() {
		t.Skip("runs only as the subject of TestSuiteCatchesARacyReserve")
	}
	quotatest.Run(t, func(*testing.T) quota.Counters { return newMemStore(true) })
}

// A store that lets two reservers take the last unit must fail the suite,
// in the race and nowhere else (the rest of the broken store is correct).
func TestSuiteCatchesARacyReserve(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the suite in a child process")
	}
	out, failed := racetest.BrokenSuite()
	require.True(t, failed, "the suite must fail a store with a racy reservation; output:\n%s", out)

	s := out
	require.Contains(t, s, "--- FAIL: TestBrokenStore/Race/of_reservers_against_one_limit_exactly_limit_win")
	require.Contains(t, s, "the counter never passes the limit")
	require.Contains(t, s, "--- PASS: TestBrokenStore/Reserve/")
	require.Contains(t, s, "--- PASS: TestBrokenStore/Race/of_releasers_the_counter_never_goes_below_0")
}
