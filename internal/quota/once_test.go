package quota_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"transcriber/internal/quota"
)

// A change run twice on what its first run wrote (the first run's commit
// answered nothing) counts once; another change counts as always.
func TestChangesRunTwiceCountOnce(t *testing.T) {
	first, used, ok, write := quota.ReserveOnce(quota.Row{Used: 5}, "op1", 3, 10)
	require.True(t, ok)
	require.True(t, write)
	require.Equal(t, int64(8), used)
	require.Equal(t, []string{"op1"}, first.Ops)

	again, used, ok, write := quota.ReserveOnce(first, "op1", 3, 10)
	require.True(t, ok, "the reservation the first run made stands")
	require.False(t, write, "and nothing more is written")
	require.Equal(t, int64(8), used)
	require.Equal(t, first, again)

	_, used, ok, _ = quota.ReserveOnce(first, "op2", 3, 10)
	require.False(t, ok, "another change is checked against the limit")
	require.Equal(t, int64(8), used)

	released, write := quota.ReleaseOnce(first, true, "op3", 2)
	require.True(t, write)
	require.Equal(t, int64(6), released.Used)
	again, write = quota.ReleaseOnce(released, true, "op3", 2)
	require.False(t, write, "a release run again gives back once")
	require.Equal(t, int64(6), again.Used)

	_, write = quota.ReleaseOnce(quota.Row{}, false, "op4", 2)
	require.False(t, write, "a counter that does not exist stays absent")
}

// A row remembers its last MaxOps changes: enough for a run again within
// seconds, and the row stays small.
func TestRowRemembersItsLastChanges(t *testing.T) {
	var r quota.Row
	for i := 0; i < quota.MaxOps+5; i++ {
		r, _, _, _ = quota.ReserveOnce(r, op(i), 1, 0)
	}
	require.Len(t, r.Ops, quota.MaxOps)
	require.Equal(t, op(5), r.Ops[0], "the oldest forgotten")
	_, _, _, write := quota.ReserveOnce(r, op(quota.MaxOps+4), 1, 0)
	require.False(t, write)
	require.Equal(t, r.Ops, quota.DecodeOps(quota.EncodeOps(r.Ops)))
	require.Empty(t, quota.DecodeOps(""))
	require.Less(t, len(quota.EncodeOps(r.Ops)), 1024, "under one write unit of YDB")
}

// op is an id as long as a ULID.
func op(i int) string { return fmt.Sprintf("%026d", i) }
