package storecheck_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/clock"
	"transcriber/internal/job"
	"transcriber/internal/outbox"
	"transcriber/internal/store"
	"transcriber/internal/store/sqlite"
	"transcriber/internal/store/storecheck"
)

func openSet(t *testing.T) store.Set {
	t.Helper()
	s, err := sqlite.OpenSet(context.Background(), filepath.Join(t.TempDir(), "probe.db"), clock.System())
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func names(r storecheck.Result) []string {
	var out []string
	for _, c := range r.Calls {
		out = append(out, c.Name)
	}
	return out
}

func TestAStoreThatKeepsItsContractPasses(t *testing.T) {
	s := openSet(t)
	r := storecheck.Run(context.Background(), s, clock.System(), nil)
	require.Empty(t, r.Failures)
	require.Len(t, r.Calls, len(storecheck.Estimates), "every call with an estimate is made: %v", names(r))
	for _, c := range r.Calls {
		require.Nil(t, c.Units, "%s: the embedded store reports no request units", c.Name)
		require.NotEmpty(t, c.Estimate, "%s has no estimate", c.Name)
	}
}

// greedy lets a held job be claimed again: a store that broke the claim.
type greedy struct{ job.Store }

func (g greedy) Claim(ctx context.Context, id string, step job.Step) (job.Job, error) {
	return g.Get(ctx, id)
}

func TestAStoreThatBreaksTheClaimFails(t *testing.T) {
	s := openSet(t)
	s.Jobs = greedy{s.Jobs}
	r := storecheck.Run(context.Background(), s, clock.System(), nil)
	require.NotEmpty(t, r.Failures)
	require.Contains(t, strings.Join(r.Failures, "\n"), "Claim, refused")
}

func TestUnitsAreThoseTheMeterRead(t *testing.T) {
	type key struct{}
	calls := 0
	meter := func(ctx context.Context) (context.Context, func() (float64, bool)) {
		calls++
		n := float64(calls)
		return context.WithValue(ctx, key{}, n), func() (float64, bool) { return n, true }
	}
	r := storecheck.Run(context.Background(), openSet(t), clock.System(), meter)
	require.Empty(t, r.Failures)
	for i, c := range r.Calls {
		require.NotNil(t, c.Units, c.Name)
		require.Equal(t, float64(i+1), *c.Units, "%s: its own meter's reading", c.Name)
	}
}

func TestEstimatesAreTheDocuments(t *testing.T) {
	b, err := os.ReadFile("../../../docs/database.md")
	require.NoError(t, err)
	doc := string(b)
	for name, est := range storecheck.Estimates {
		require.Contains(t, doc, "| "+name+" | "+est+" |", "docs/database.md's probe table lists %s at %s", name, est)
	}
}

func TestACallThatFailsStopsTheJobsAndSaysWhich(t *testing.T) {
	s := openSet(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := storecheck.Run(ctx, s, clock.System(), nil)
	require.NotEmpty(t, r.Failures)
	require.True(t, strings.HasPrefix(r.Failures[0], "Create: "), r.Failures[0])
}

// eager takes an entry however it is held: a store that broke the lease.
type eager struct{ outbox.Store }

func (e eager) Begin(ctx context.Context, en outbox.Entry, now time.Time, lease time.Duration) (outbox.Entry, bool, error) {
	got, _, err := e.Store.Begin(ctx, en, now.Add(lease), lease)
	return got, err == nil, err
}

func TestAnOutboxThatBreaksTheLeaseFails(t *testing.T) {
	s := openSet(t)
	s.Outbox = eager{s.Outbox}
	r := storecheck.Run(context.Background(), s, clock.System(), nil)
	require.Contains(t, strings.Join(r.Failures, "\n"), "Begin of a held entry")
}
