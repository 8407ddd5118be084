package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"transcriber/internal/clock"
	"transcriber/internal/job"
	"transcriber/internal/store"
	"transcriber/internal/store/sqlite"
	"transcriber/internal/store/storecheck"
)

// sqliteScratch opens embedded stores in a test's directory, with a meter
// that bills every call 2 units; removed counts the removals.
func sqliteScratch(t *testing.T, removed *int, wrap func(store.Set) store.Set) scratchOpener {
	return func(ctx context.Context, _ io.Writer) (store.Set, storecheck.Meter, func(context.Context) error, error) {
		s, err := sqlite.OpenSet(ctx, filepath.Join(t.TempDir(), "scratch.db"), clock.System())
		if err != nil {
			return store.Set{}, nil, nil, err
		}
		meter := func(ctx context.Context) (context.Context, func() (float64, bool)) {
			return ctx, func() (float64, bool) { return 2, true }
		}
		return wrap(s), meter, func(context.Context) error { *removed++; return s.Close() }, nil
	}
}

func storeSelftest(t *testing.T, opener scratchOpener, args ...string) (string, selftestReport) {
	t.Helper()
	o, done, err := parseSelftest(append([]string{"--store"}, args...), env(map[string]string{"YDB_CONNECTION_STRING": "grpc://127.0.0.1:1/local"}), io.Discard)
	require.NoError(t, err)
	require.False(t, done)
	o.openScratch = opener
	var out bytes.Buffer
	rep := newSelftest(o).run(context.Background(), &out)
	return out.String(), rep
}

func TestSelftestStoreProbesAScratchDirectoryAndPrintsItsUnits(t *testing.T) {
	removed := 0
	out, rep := storeSelftest(t, sqliteScratch(t, &removed, func(s store.Set) store.Set { return s }))
	require.True(t, rep.OK, out)
	require.Len(t, rep.Checks, 1)
	require.Equal(t, checkStore, rep.Checks[0].Name)
	require.Equal(t, 1, removed, "the scratch directory is removed")
	require.Regexp(t, `(?m)^PASS store `, out)
	require.Regexp(t, `(?m)^\s+Claim\s+2\s+≈ 8$`, out, "each call's units beside its estimate")
	require.Len(t, rep.Store, len(storecheck.Estimates))

	_, rep = storeSelftest(t, sqliteScratch(t, &removed, func(s store.Set) store.Set { return s }), "--json")
	b, err := json.Marshal(rep)
	require.NoError(t, err)
	require.Contains(t, string(b), `"store":[{"name":"Create","ru":2,"estimate":"≈ 8"}`)
}

// lostClaims answers every renewal as if the claim were lost.
type lostClaims struct{ job.Store }

func (lostClaims) Renew(context.Context, job.Claim, job.Step) (job.Claim, error) {
	return job.Claim{}, job.ErrClaimLost
}

func TestSelftestStoreFailsOnABrokenContractAndStillRemoves(t *testing.T) {
	removed := 0
	out, rep := storeSelftest(t, sqliteScratch(t, &removed, func(s store.Set) store.Set { s.Jobs = lostClaims{s.Jobs}; return s }))
	require.False(t, rep.OK)
	require.Regexp(t, `(?m)^FAIL store .*Renew`, out)
	require.Equal(t, 1, removed)

	_, rep = storeSelftest(t, func(context.Context, io.Writer) (store.Set, storecheck.Meter, func(context.Context) error, error) {
		return store.Set{}, nil, nil, errors.New("unauthenticated")
	})
	require.False(t, rep.OK)
	require.Contains(t, rep.Checks[0].Detail, "ydb.editor")
}
