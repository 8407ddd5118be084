package loadsim

import (
	"container/heap"
	"context"
	"sync"
	"time"
)

// Sched is the simulation's clock: service time that passes only when
// every goroutine of the simulation waits on it. One goroutine started
// with Go runs at a time, until it sleeps (Sleep), waits for a call slot
// (Slots) or ends; then the next one due resumes, alone, and when none is
// due now the clock jumps to the earliest wake-up. So an hour of service
// time costs only the CPU the service's own code spends in it, and a run
// is the same every time: what happens at one instant runs one goroutine
// after another, in the order their wake-ups were scheduled.
//
// Goroutines the simulated code starts itself (the pipeline streams a
// conversion into an upload through one) are not counted: they must not
// sleep on the clock while the goroutine that started them does, or the
// clock may move before they get to it. The fakes of this package spend
// their time on the goroutine that calls them, which keeps to that rule.
// A timer (AfterFunc, the pipeline's heartbeat) runs its function as a
// goroutine of the simulation, started when the clock reaches it.
//
// It implements clock.Clock, and Sleep has the pipeline's signature
// (pipeline.Deps.Sleep).
type Sched struct {
	mu      sync.Mutex
	now     time.Time
	running int
	queue   wakeups
	seq     uint64
	idle    chan struct{} // closed once nothing runs and nothing is due
}

// NewSched returns a clock showing start (rounded up to the
// millisecond), with nothing running.
func NewSched(start time.Time) *Sched {
	return &Sched{now: ceilMs(start.UTC()), idle: make(chan struct{})}
}

// Now is the simulated time.
func (s *Sched) Now() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.now
}

// Go runs f as a goroutine of the simulation: it starts at the present
// moment once the goroutines before it have slept or ended, and the clock
// waits for it. Called from outside the simulation, with nothing running,
// it starts f at once, and f may run, sleep and let the clock move before
// the caller's next line: a run is started by one call from outside, whose
// f starts the rest (Run does so).
func (s *Sched) Go(f func()) {
	s.mu.Lock()
	s.spawn(f)
	s.step()
	s.mu.Unlock()
}

// spawn starts f as a goroutine of the simulation, due now; the lock is
// held.
func (s *Sched) spawn(f func()) {
	wake := make(chan struct{})
	s.push(&wakeup{at: s.now, wake: wake})
	go func() {
		<-wake
		defer s.exit()
		f()
	}()
}

// AfterFunc runs f as a goroutine of the simulation (see Go) once d has
// passed, unless stop is called first: the pipeline's heartbeat renews
// its claims on it, at the simulated time a renewal is due.
func (s *Sched) AfterFunc(d time.Duration, f func()) (stop func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := &wakeup{at: ceilMs(s.now.Add(d))}
	w.fn = func() { s.spawn(f) }
	s.push(w)
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		w.fn = nil
	}
}

func (s *Sched) exit() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.running--
	s.step()
}

// Sleep waits for d of simulated time, or until ctx ends, and returns ctx's
// error if it ended first. Only a context the simulation cancels (a call's
// deadline, see callContext) wakes a sleeper early; one cancelled by code
// that is running is seen when the sleep ends.
func (s *Sched) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d <= 0 {
		return nil
	}
	s.mu.Lock()
	w := &wakeup{at: ceilMs(s.now.Add(d)), wake: make(chan struct{}), ctx: ctx}
	s.push(w)
	s.park(w.wake)
	return ctx.Err()
}

// Until waits until t (see Sleep).
func (s *Sched) Until(ctx context.Context, t time.Time) error {
	return s.Sleep(ctx, t.Sub(s.Now()))
}

// At runs fn at t, with the clock's lock held (fn must not call the
// clock), and returns a function that cancels it if it has not run.
func (s *Sched) At(t time.Time, fn func()) (stop func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := &wakeup{at: ceilMs(t), fn: fn}
	s.push(w)
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		w.fn = nil
	}
}

// ceilMs rounds t up to the millisecond. The clock moves only in whole
// milliseconds, the precision the stores keep times at: a job saved due
// at a moment the clock shows is due at that very moment, not up to a
// millisecond before it, which the poll use case would take for work due
// and look at again and again without the clock moving.
func ceilMs(t time.Time) time.Time {
	if r := t.Truncate(time.Millisecond); r.Before(t) {
		return r.Add(time.Millisecond)
	}
	return t
}

// Idle is closed when nothing of the simulation runs or is due: the run
// is over.
func (s *Sched) Idle() <-chan struct{} { return s.idle }

func (s *Sched) push(w *wakeup) {
	s.seq++
	w.seq = s.seq
	heap.Push(&s.queue, w)
}

// park gives up the caller's turn until wake is closed. It is called with
// the lock held and returns without it.
func (s *Sched) park(wake chan struct{}) {
	s.running--
	s.step()
	s.mu.Unlock()
	<-wake
}

// unpark resumes a parked goroutine; the lock is held.
func (s *Sched) unpark(wake chan struct{}) {
	s.running++
	close(wake)
}

// step moves the clock while nothing runs: it runs the timers due and
// resumes the earliest sleeper. The lock is held.
func (s *Sched) step() {
	for s.running == 0 {
		if s.queue.Len() == 0 {
			select {
			case <-s.idle:
			default:
				close(s.idle)
			}
			return
		}
		w := heap.Pop(&s.queue).(*wakeup)
		if w.wake == nil && w.fn == nil {
			continue // a stopped timer: no time passes for it
		}
		if w.at.After(s.now) {
			s.now = w.at
		}
		if w.wake != nil {
			s.unpark(w.wake)
			return
		}
		w.fn()
		// A timer may have ended contexts that sleepers wait with: they
		// wake now, in the order they went to sleep.
		for _, q := range s.queue {
			if q.ctx != nil && q.ctx.Err() != nil && q.at.After(s.now) {
				q.at = s.now
			}
		}
		heap.Init(&s.queue)
	}
}

// wakeup is a sleeper to resume (wake) or a timer to run (fn) at a time.
type wakeup struct {
	at   time.Time
	seq  uint64
	wake chan struct{}
	ctx  context.Context
	fn   func()
}

// wakeups is a heap by time, then by the order they were scheduled.
type wakeups []*wakeup

func (q wakeups) Len() int { return len(q) }
func (q wakeups) Less(i, j int) bool {
	if !q[i].at.Equal(q[j].at) {
		return q[i].at.Before(q[j].at)
	}
	return q[i].seq < q[j].seq
}
func (q wakeups) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *wakeups) Push(x any)   { *q = append(*q, x.(*wakeup)) }
func (q *wakeups) Pop() any {
	old := *q
	w := old[len(old)-1]
	*q = old[:len(old)-1]
	return w
}

// callContext is the context of one function call: it ends when the call
// has run for its timeout in simulated time, and says so in its deadline,
// which the poll use case reads to stop in time.
type callContext struct {
	context.Context
	deadline time.Time
}

func (c callContext) Deadline() (time.Time, bool) { return c.deadline, true }

// call returns the context of a call that may live for timeout from now,
// and the function that ends it.
func (s *Sched) call(timeout time.Duration) (context.Context, func()) {
	base, cancel := context.WithCancel(context.Background())
	deadline := s.Now().Add(timeout)
	stop := s.At(deadline, cancel)
	return callContext{Context: base, deadline: deadline}, func() {
		stop()
		cancel()
	}
}

// Slots is the platform's bound on concurrent function calls: a call
// takes a slot for its whole life, and one that finds none waits, first
// come first served, without holding the clock.
type Slots struct {
	s       *Sched
	free    int
	held    int
	waiting []chan struct{}

	// What the bound did to the calls, under s's lock.
	waits     int           // calls that had to wait for a slot
	waited    time.Duration // their waits added up
	maxWait   time.Duration
	firstWait time.Time // when a call first had to wait; zero if none did
	busiest   int       // most slots taken at once
}

// NewSlots returns n free slots on s.
func NewSlots(s *Sched, n int) *Slots { return &Slots{s: s, free: n} }

// Acquire takes a slot, waiting for one if all are taken, and returns how
// long it waited.
func (p *Slots) Acquire() time.Duration {
	s := p.s
	s.mu.Lock()
	if p.free > 0 {
		p.free--
		p.held++
		p.busiest = max(p.busiest, p.held)
		s.mu.Unlock()
		return 0
	}
	start := s.now
	if p.waits == 0 {
		p.firstWait = start
	}
	p.waits++
	wake := make(chan struct{})
	p.waiting = append(p.waiting, wake)
	s.park(wake)
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.now.Sub(start)
	p.waited += w
	p.maxWait = max(p.maxWait, w)
	return w
}

// Release gives a slot back, to the longest waiting call if there is one.
func (p *Slots) Release() {
	s := p.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(p.waiting) > 0 {
		wake := p.waiting[0]
		p.waiting = p.waiting[1:]
		s.unpark(wake) // the slot passes on: as many are held
		return
	}
	p.held--
	p.free++
}
