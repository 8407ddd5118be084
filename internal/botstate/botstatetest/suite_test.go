package botstatetest_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"transcriber/internal/botstate"
	"transcriber/internal/botstate/botstatetest"
	"transcriber/internal/outbox"
	"transcriber/internal/racetest"
)

// The suite on the smallest correct store: shows the suite's own
// expectations are consistent.
func TestMemStoreKeepsTheContract(t *testing.T) {
	botstatetest.Run(t, func(*testing.T) (botstate.Store, outbox.Store) { return newMemStore(false), nil })
}

// TestBrokenStore runs the suite on a store whose UpdateChat is a read
// and a separate write. It runs only inside
// TestSuiteCatchesRacyStores, which expects it to fail.
func TestBrokenStore(t *testing.T) {
	if !racetest.Subject() {
		t.Skip("runs only as the subject of TestSuiteCatchesRacyStores")
	}
	botstatetest.Run(t, func(*testing.T) (botstate.Store, outbox.Store) { return newMemStore(true), nil })
}

// A store whose read-check-writes are not atomic must fail the suite, in
// the races and nowhere else (the rest of the broken store is correct).
func TestSuiteCatchesRacyStores(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the suite in a child process")
	}
	out, failed := racetest.BrokenSuite()
	require.True(t, failed, "the suite must fail a store with racy writes; output:\n%s", out)

	s := out
	for _, failed := range []string{
		"--- FAIL: TestBrokenStore/Races/of_updaters_of_one_chat_none_loses_an_update",
	} {
		require.Contains(t, s, failed)
	}
	for _, passed := range []string{
		"--- PASS: TestBrokenStore/Chat ",
		"--- PASS: TestBrokenStore/UpdateChat ",
		"--- PASS: TestBrokenStore/ForgetChat ",
	} {
		require.Contains(t, s, passed)
	}
}
