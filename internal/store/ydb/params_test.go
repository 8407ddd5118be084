package ydb

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/errs"
	"transcriber/internal/job"
)

// A time a Timestamp cannot hold is refused when the parameters are built,
// before any statement is sent; an optional column binds NULL for the zero
// time instead.
func TestBadTimesAreRefused(t *testing.T) {
	now := t0()
	refused := func(t *testing.T, p params, where string) {
		t.Helper()
		_, err := p.build()
		require.ErrorIs(t, err, errBadTime)
		require.Equal(t, errs.Internal, errs.KindOf(translate(err)), "a bug in the caller, not an outage")
		require.Equal(t, "store_bad_time", errs.CodeOf(translate(err)))
		require.Contains(t, err.Error(), where, "the error names the parameter and field")
	}

	t.Run("the zero time as a required parameter", func(t *testing.T) {
		refused(t, dueParams(utf8("created"), time.Time{}, 10), "$now is the zero time")
		refused(t, revokeParams("h", time.Time{}), "$revoked_at")
		refused(t, stepParams(1, "jobs", time.Time{}), "$applied_at")
	})
	t.Run("the zero time as a required field of a row", func(t *testing.T) {
		for _, c := range []struct {
			name  string
			clear func(*job.Job)
		}{
			{"next_run_at", func(j *job.Job) { j.NextRunAt = time.Time{} }},
			{"created_at", func(j *job.Job) { j.CreatedAt = time.Time{} }},
			{"updated_at", func(j *job.Job) { j.UpdatedAt = time.Time{} }},
		} {
			j := fullJob()
			c.clear(&j)
			refused(t, jobsParams(fullJob(), j), "$jobs[1]."+c.name+" is the zero time")
		}
		e := fullEntry()
		e.LeaseUntil = time.Time{}
		refused(t, entriesParams(e), "lease_until")
	})
	t.Run("a time outside 1970 to 2105", func(t *testing.T) {
		refused(t, dueParams(utf8("created"), time.Date(1969, 12, 31, 0, 0, 0, 0, time.UTC), 10), "$now is outside the range")
		refused(t, dueParams(utf8("created"), time.Date(2106, 1, 1, 0, 0, 0, 0, time.UTC), 10), "$now is outside the range")
		j := fullJob()
		j.UploadBy = time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)
		refused(t, jobsParams(j), "$jobs[0].upload_by is outside the range")
	})
	t.Run("an optional column binds NULL for the zero time", func(t *testing.T) {
		j := fullJob()
		j.ClaimID, j.ClaimUntil, j.DeletedAt, j.UploadBy, j.EndedAt = "", time.Time{}, time.Time{}, time.Time{}, time.Time{}
		_, err := jobsParams(j).build()
		require.NoError(t, err)
		_, err = tokenParams(fullToken(now)).build()
		require.NoError(t, err, "a live token: revoked_at is NULL")
		c := fullChat()
		c.BlockedAt = time.Time{}
		_, err = chatParams(c).build()
		require.NoError(t, err)
	})
	t.Run("the times of the range's ends", func(t *testing.T) {
		_, err := dueParams(utf8("created"), time.Unix(0, 0), 10).build()
		require.NoError(t, err)
		_, err = dueParams(utf8("created"), time.Date(2105, 12, 31, 23, 59, 59, 999_999_000, time.UTC), 10).build()
		require.NoError(t, err)
	})
	t.Run("every statement's parameters as the store binds them", func(t *testing.T) {
		for name, p := range boundParams() {
			_, err := p.build()
			require.NoError(t, err, name)
		}
	})
}
