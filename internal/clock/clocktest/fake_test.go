package clocktest_test

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/clock/clocktest"
)

func TestFakeMovesOnlyWhenTold(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("MSK", 3*3600))
	f := clocktest.NewFake(start)

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

// A Fake's timers run as it is moved past them, in the order of their
// times, each seeing its own time; one a timer sets on the way runs in
// the same move if it is due within it. A stopped timer never runs.
func TestFakeRunsItsTimersAsItMoves(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
	f := clocktest.NewFake(start)
	var ran []time.Duration
	note := func() { ran = append(ran, f.Now().Sub(start)) }
	var every func()
	every = func() {
		note()
		f.AfterFunc(30*time.Second, every)
	}
	f.AfterFunc(30*time.Second, every)
	f.AfterFunc(45*time.Second, note)
	stop := f.AfterFunc(50*time.Second, func() { t.Error("a stopped timer ran") })
	stop()

	require.Empty(t, ran, "nothing runs before the clock moves")
	require.True(t, f.Advance(100*time.Second).Equal(start.Add(100*time.Second)))
	require.Equal(t, []time.Duration{30 * time.Second, 45 * time.Second, 60 * time.Second, 90 * time.Second}, ran)
	require.True(t, f.Now().Equal(start.Add(100*time.Second)), "the clock ends where it was moved to")

	f.Set(start.Add(2 * time.Minute))
	require.Equal(t, []time.Duration{30 * time.Second, 45 * time.Second, 60 * time.Second, 90 * time.Second, 120 * time.Second}, ran,
		"Set runs what is due on the way too")
}

// Advances from several goroutines add up, and each timer due on the way
// runs once, whichever of them gets to it.
func TestFakeAdvancesAddUp(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
	f := clocktest.NewFake(start)
	var mu sync.Mutex
	runs := map[int]int{}
	for i := 1; i <= 80; i++ {
		f.AfterFunc(time.Duration(i)*time.Second, func() {
			mu.Lock()
			defer mu.Unlock()
			runs[i]++
		})
	}
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; k < 10; k++ {
				f.Advance(time.Second)
			}
		}()
	}
	wg.Wait()
	require.True(t, f.Now().Equal(start.Add(80*time.Second)))
	require.Len(t, runs, 80)
	for i, n := range runs {
		require.Equal(t, 1, n, "the timer of %ds", i)
	}
}

// The real clock's timers run on the real clock.
