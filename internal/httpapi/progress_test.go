package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"transcriber/internal/httpapi"
	"transcriber/internal/job"
)

// A job's progress follows its stages up to 100 once done; a job that
// failed or died shows none, in its own view and in listings: it did not
// complete, and 100 would say it had.
func TestProgressOfAnEndedJob(t *testing.T) {
	h := newHarness(t, httpapi.Config{})
	_, secret := h.token("ci")
	create := func() string {
		var j jobReply
		h.do(http.MethodPost, "/v1/jobs", secret, createBody).json(t, &j)
		return j.ID
	}
	progress := func(id string) any {
		t.Helper()
		var v map[string]any
		h.do(http.MethodGet, "/v1/jobs/"+id, secret, "").json(t, &v)
		return v["progress"]
	}

	failed := create()
	require.EqualValues(t, 0, progress(failed))
	h.move(failed, job.Created)
	require.EqualValues(t, 10, progress(failed))
	h.move(failed, job.Failed)
	require.Nil(t, progress(failed), "failed")

	dead := create()
	h.move(dead, job.Created, job.Converted)
	require.EqualValues(t, 30, progress(dead))
	h.save(dead, job.Dead, "speechkit_unavailable", "recognition is unavailable")
	require.Nil(t, progress(dead), "dead")

	done := h.doneJob(secret, true)
	require.EqualValues(t, 100, progress(done))

	var list struct{ Jobs []map[string]any }
	h.do(http.MethodGet, "/v1/jobs", secret, "").json(t, &list)
	require.Len(t, list.Jobs, 3)
	for _, j := range list.Jobs {
		p, has := j["progress"]
		switch j["id"] {
		case done:
			require.EqualValues(t, 100, p)
		default:
			require.False(t, has, "job %v (%v) shows progress %v", j["id"], j["state"], p)
		}
	}
}
