package clock_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/clock"
)

func TestSystemIsUTC(t *testing.T) {
	require.Equal(t, time.UTC, clock.System().Now().Location())
}

func TestFakeMovesOnlyWhenTold(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("MSK", 3*3600))
	f := clock.NewFake(start)

	require.Equal(t, time.UTC, f.Now().Location(), "a fake clock shows UTC like the real one")
	require.True(t, f.Now().Equal(start))
	require.True(t, f.Now().Equal(f.Now()), "time does not pass by itself")

	got := f.Advance(90 * time.Second)
	require.True(t, got.Equal(start.Add(90*time.Second)))
	require.True(t, f.Now().Equal(got))

	later := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	f.Set(later)
	require.True(t, f.Now().Equal(later))
}
