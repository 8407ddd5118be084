package loadsim

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var t0 = time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)

// notes records what happened when, in simulated time since t0.
type notes struct {
	mu  sync.Mutex
	s   *Sched
	got []string
}

func (n *notes) add(what string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.got = append(n.got, fmt.Sprintf("%s@%s", what, n.s.Now().Sub(t0)))
}

func (n *notes) all() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.got...)
}

// Time passes only while every goroutine sleeps, and they wake in the
// order of their times; goroutines started at one moment run in the order
// they were started.
func TestTheClockMovesWhenEveryGoroutineSleeps(t *testing.T) {
	s := NewSched(t0)
	n := &notes{s: s}
	ctx := context.Background()
	s.Go(func() {
		s.Go(func() {
			require.NoError(t, s.Sleep(ctx, 5*time.Second))
			n.add("a")
			require.NoError(t, s.Sleep(ctx, time.Hour))
			n.add("a")
		})
		s.Go(func() {
			require.NoError(t, s.Sleep(ctx, 3*time.Second))
			n.add("b")
			s.Go(func() { n.add("b's child") })
			n.add("b")
		})
		s.Go(func() { n.add("c") })
	})
	<-s.Idle()
	require.Equal(t, []string{"c@0s", "b@3s", "b@3s", "b's child@3s", "a@5s", "a@1h0m5s"}, n.all())
	require.Equal(t, t0.Add(time.Hour+5*time.Second), s.Now())
}

// The clock keeps whole milliseconds, as the stores keep times.
func TestSleepsEndOnAMillisecond(t *testing.T) {
	s := NewSched(t0)
	s.Go(func() { _ = s.Sleep(context.Background(), 1500*time.Microsecond) })
	<-s.Idle()
	require.Equal(t, t0.Add(2*time.Millisecond), s.Now())
}

// A call's context ends at its timeout in simulated time and wakes what
// sleeps on it; it says its deadline.
func TestACallEndsAtItsTimeout(t *testing.T) {
	s := NewSched(t0)
	var slept error
	var deadline time.Time
	s.Go(func() {
		ctx, end := s.call(10 * time.Minute)
		defer end()
		deadline, _ = ctx.Deadline()
		slept = s.Sleep(ctx, time.Hour)
	})
	<-s.Idle()
	require.ErrorIs(t, slept, context.Canceled)
	require.Equal(t, t0.Add(10*time.Minute), deadline)
	require.Equal(t, t0.Add(10*time.Minute), s.Now(), "woken at the timeout, not after the hour")
}

// A call that ends early stops its timer: the clock does not move on to
// a deadline nobody waits for.
func TestACallThatEndsStopsItsTimer(t *testing.T) {
	s := NewSched(t0)
	s.Go(func() {
		ctx, end := s.call(10 * time.Minute)
		_ = s.Sleep(ctx, time.Minute)
		end()
	})
	<-s.Idle()
	require.Equal(t, t0.Add(time.Minute), s.Now())
}

// Calls past the slots wait for one, first come first served, without
// holding the clock; the slots report the waits.
func TestSlotsMakeCallsWait(t *testing.T) {
	s := NewSched(t0)
	slots := NewSlots(s, 2)
	n := &notes{s: s}
	ctx := context.Background()
	// Started from one goroutine of the simulation, as a run starts them:
	// four Go calls from outside would race the first call, which runs as
	// soon as it is started, and the clock could move (or the run end)
	// before the others were scheduled.
	s.Go(func() {
		for i, name := range []string{"a", "b", "c", "d"} {
			s.Go(func() {
				_ = s.Sleep(ctx, time.Duration(i)*time.Second)
				waited := slots.Acquire()
				n.add(fmt.Sprintf("%s in after %s", name, waited))
				_ = s.Sleep(ctx, time.Minute)
				slots.Release()
			})
		}
	})
	<-s.Idle()
	require.Equal(t, []string{
		"a in after 0s@0s", "b in after 0s@1s",
		"c in after 58s@1m0s", "d in after 58s@1m1s",
	}, n.all())
	require.Equal(t, 2, slots.waits)
	require.Equal(t, 58*time.Second, slots.maxWait)
	require.Equal(t, t0.Add(2*time.Second), slots.firstWait)
	require.Equal(t, 2, slots.busiest)
}

// A timer runs its function as a goroutine of the simulation at its time:
// in turn with the others, and it may sleep on the clock. A stopped timer
// neither runs nor moves the clock to its time.
func TestATimerRunsAsAGoroutineOfTheSimulation(t *testing.T) {
	s := NewSched(t0)
	n := &notes{s: s}
	ctx := context.Background()
	s.Go(func() {
		s.AfterFunc(30*time.Second, func() {
			n.add("timer")
			require.NoError(t, s.Sleep(ctx, 10*time.Second))
			n.add("timer")
		})
		stop := s.AfterFunc(time.Hour, func() { n.add("stopped") })
		require.NoError(t, s.Sleep(ctx, 35*time.Second))
		n.add("sleeper")
		stop()
	})
	<-s.Idle()
	require.Equal(t, []string{"timer@30s", "sleeper@35s", "timer@40s"}, n.all())
	require.Equal(t, t0.Add(40*time.Second), s.Now())
}
