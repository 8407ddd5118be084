package pipeline_test

import (
	"context"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/clock/clocktest"
	"transcriber/internal/errs"
	"transcriber/internal/job"
	"transcriber/internal/media/ffmpeg"
	"transcriber/internal/pipeline"
	"transcriber/internal/transcript"
)

// slowMedia converts as passMedia does, but only once release is closed:
// a conversion that outlasts the claim's lease. It says when one started,
// and how the last one ended.
type slowMedia struct {
	passMedia
	started chan struct{}
	release chan struct{}
	mu      sync.Mutex
	ended   error
}

func newSlowMedia() *slowMedia {
	return &slowMedia{passMedia: passMedia{durationMs: 600_000}, started: make(chan struct{}, 1), release: make(chan struct{})}
}

func (m *slowMedia) Convert(ctx context.Context, src string, seg ffmpeg.Segment, w io.Writer) error {
	m.started <- struct{}{}
	var err error
	select {
	case <-m.release:
		err = m.passMedia.Convert(ctx, src, seg, w)
	case <-ctx.Done():
		err = ctx.Err()
	}
	m.mu.Lock()
	m.ended = err
	m.mu.Unlock()
	return err
}

func (m *slowMedia) endedWith() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.ended
}

// heartbeatPipeline renews its claims on the fake clock, every
// job.RenewEvery of it: the test moves the clock, and the renewals due on
// the way run as it moves.
func (e *quotaEnv) heartbeatPipeline(m pipeline.Media, rec pipeline.Recognizer, n pipeline.Notifier) *pipeline.Pipeline {
	return pipeline.New(pipeline.Deps{
		Store: e.st, Objects: resultObjects{}, Media: m, Recognizer: rec, Notifier: n, Clock: e.clk, Log: quiet(),
		Sleep: func(_ context.Context, d time.Duration) error { e.clk.Advance(d); return nil },
	}, pipeline.Config{InlineCheckMax: time.Nanosecond})
}

// stillStore is a job store whose renewals fail while still is set: a
// worker that stands still (frozen, cut off from the store) past its lease.
type stillStore struct {
	job.Store
	still atomic.Bool
}

func (s *stillStore) Renew(ctx context.Context, c job.Claim, step job.Step) (job.Claim, error) {
	if s.still.Load() {
		return job.Claim{}, errs.New(errs.Unavailable, "store_unavailable", "the job store is unavailable")
	}
	return s.Store.Renew(ctx, c, step)
}

// wait fails the test if ch gives nothing for a long while: what it waits
// for never comes without the behaviour under test.
func wait[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(20 * time.Second):
		t.Fatalf("waited in vain: %s", what)
	}
	var zero T
	return zero
}

// A conversion that runs for three leases of the pipeline's clock keeps
// its job's claim all the while: nobody takes the job from under it, and
// it goes on to submit. The renewals follow the clock the lease is read
// on, not the real one.
func TestAStepLongerThanTheLeaseKeepsItsClaim(t *testing.T) {
	e := newQuotaEnv(t)
	m := newSlowMedia()
	rec := &submitRecognizer{}
	p := e.heartbeatPipeline(m, rec, nil)
	j := e.accepted(t, "tok:a")
	done := make(chan error, 1)
	go func() { done <- p.Uploaded(e.ctx, job.SourceKey(j.ID)) }()
	wait(t, m.started, "the conversion to start")

	for i := 0; i < 3; i++ {
		now := e.clk.Advance(job.Lease - time.Second)
		got := e.get(t, j.ID)
		require.True(t, got.ClaimUntil.After(now), "the claim is renewed while the conversion runs: held until %s at %s", got.ClaimUntil, now)
		_, err := e.st.Claim(e.ctx, j.ID, job.Ingest)
		require.ErrorIs(t, err, job.ErrNotClaimable, "held %d leases after its claim", i+1)
		swept, err := e.st.ClaimDue(e.ctx, job.Ingest, 10)
		require.NoError(t, err)
		require.Empty(t, swept, "the sweep does not take it either")
	}

	close(m.release)
	require.NoError(t, wait(t, done, "the ingest to end"))
	got := e.get(t, j.ID)
	require.Equal(t, job.Transcribe, got.State, "%s: %s", got.ErrorCode, got.ErrorMessage)
	require.Equal(t, 1, rec.count())
}

// A claim lost under a running step stops the step: a deletion takes it
// away, or the worker stood still past its lease (its renewals did not
// reach the store) and another took the job.
func TestALostClaimStopsTheWork(t *testing.T) {
	for name, lose := range map[string]func(e *quotaEnv, st *stillStore, id string){
		"deleted": func(e *quotaEnv, _ *stillStore, id string) {
			_, err := e.st.Delete(e.ctx, id)
			require.NoError(t, err)
			e.clk.Advance(job.RenewEvery)
		},
		"taken after its lease": func(e *quotaEnv, st *stillStore, id string) {
			st.still.Store(true)
			e.clk.Advance(job.Lease)
			_, err := e.st.Claim(e.ctx, id, job.Ingest)
			require.NoError(t, err)
			st.still.Store(false)
			e.clk.Advance(job.RenewEvery)
		},
	} {
		t.Run(name, func(t *testing.T) {
			e := newQuotaEnv(t)
			st := &stillStore{Store: e.st}
			e.st = st
			m := newSlowMedia()
			rec := &submitRecognizer{}
			p := e.heartbeatPipeline(m, rec, nil)
			j := e.accepted(t, "tok:a")
			done := make(chan error, 1)
			go func() { done <- p.Uploaded(e.ctx, job.SourceKey(j.ID)) }()
			wait(t, m.started, "the conversion to start")

			lose(e, st, j.ID)
			require.NoError(t, wait(t, done, "the ingest to stop"))
			require.ErrorIs(t, m.endedWith(), context.Canceled, "the conversion was stopped, not finished")
			require.Zero(t, rec.count(), "nothing was submitted")
		})
	}
}

// doneRecognizer takes every submission and has it done at the first
// check, with an empty transcript.
type doneRecognizer struct{ submitRecognizer }

func (*doneRecognizer) Check(context.Context, string) (bool, error) { return true, nil }
func (*doneRecognizer) Result(context.Context, string) (transcript.Transcript, error) {
	return transcript.Transcript{}, nil
}
func (*doneRecognizer) Delete(context.Context, string) error { return nil }

// resultObjects also takes results and removes anything.
type resultObjects struct{ presignObjects }

func (resultObjects) Put(context.Context, string, []byte, string) error { return nil }
func (resultObjects) Delete(context.Context, string) error              { return nil }

// lateNotifier hears of an ended job a little after the save that ended
// it, and notes whether its call could still do anything.
type lateNotifier struct {
	clk *clocktest.Fake
	mu  sync.Mutex
	err []error
}

func (*lateNotifier) Moved(context.Context, job.Job) error { return nil }

func (n *lateNotifier) Finished(ctx context.Context, _ job.Job) error {
	n.clk.Advance(3 * job.RenewEvery) // the renewals due meanwhile run
	n.mu.Lock()
	defer n.mu.Unlock()
	n.err = append(n.err, ctx.Err())
	return nil
}

// The save that ends a claim stops its renewals: the claim it ended is
// not "lost", and what follows the ending (telling the owner) runs on.
func TestTheStepsOwnEndingIsNoLostClaim(t *testing.T) {
	e := newQuotaEnv(t)
	n := &lateNotifier{clk: e.clk}
	p := pipeline.New(pipeline.Deps{
		Store: e.st, Objects: resultObjects{}, Media: passMedia{durationMs: 10_000}, Recognizer: &doneRecognizer{}, Notifier: n,
		Clock: e.clk, Log: quiet(),
		Sleep: func(_ context.Context, d time.Duration) error { e.clk.Advance(d); return nil },
	}, pipeline.Config{})
	for i := 0; i < 3; i++ {
		j := e.accepted(t, "tok:a")
		require.NoError(t, p.Uploaded(e.ctx, job.SourceKey(j.ID)))
		require.Equal(t, job.Done, e.get(t, j.ID).State)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	require.Len(t, n.err, 3)
	for _, err := range n.err {
		require.NoError(t, err)
	}
}
