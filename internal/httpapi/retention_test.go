package httpapi_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/httpapi"
	"transcriber/internal/job"
)

// doneJob makes a job through the API and walks it to done; with
// withResult its transcript is stored.
func (h *harness) doneJob(secret string, withResult bool) string {
	h.t.Helper()
	ctx := context.Background()
	var j jobReply
	h.do(http.MethodPost, "/v1/jobs", secret, createBody).json(h.t, &j)
	id := j.ID
	for _, s := range []job.State{job.Created, job.Converted, job.Transcribe, job.Done} {
		step := job.Ingest
		if s == job.Done {
			step = job.Poll
		}
		c, err := h.jobs.Claim(ctx, id, step)
		require.NoError(h.t, err)
		c.State = s
		_, err = h.jobs.Save(ctx, c, job.Next{})
		require.NoError(h.t, err)
	}
	if withResult {
		require.NoError(h.t, h.objects.Put(ctx, job.ResultKey(id), []byte(`{"duration_ms": 1000, "language": "ru-RU", "utterances": []}`), "application/json"))
	}
	return id
}

// A done job whose transcript the bucket's lifecycle removed answers 410
// expired, not a server error.
func TestTranscriptRemovedByTheBucketIsGone(t *testing.T) {
	h := newHarness(t, httpapi.Config{})
	_, secret := h.token("ci")

	kept := h.doneJob(secret, true)
	r := h.do(http.MethodGet, "/v1/jobs/"+kept+"/transcript?format=json", secret, "")
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)

	gone := h.doneJob(secret, false)
	r = h.do(http.MethodGet, "/v1/jobs/"+gone+"/transcript?format=txt", secret, "")
	require.Equal(t, http.StatusGone, r.status, "%s", r.body)
	require.Equal(t, "expired", r.errorCode(t))
	require.Contains(t, string(r.body), "expired")

	var v jobReply
	r = h.do(http.MethodGet, "/v1/jobs/"+gone, secret, "")
	require.Equal(t, http.StatusOK, r.status)
	r.json(t, &v)
	require.Equal(t, "done", v.State, "the job itself stands")
}

// A job whose row expired is simply not found, like one never made.
func TestExpiredJobIsNotFound(t *testing.T) {
	h := newHarness(t, httpapi.Config{})
	_, secret := h.token("ci")
	id := h.doneJob(secret, true)
	ex, ok := h.jobs.Store.(job.Expirer)
	require.True(t, ok)
	n, err := ex.Remove(context.Background(), []string{id}, h.clk.Now().Add(time.Millisecond))
	require.NoError(t, err)
	require.Equal(t, 1, n)
	for _, path := range []string{"/v1/jobs/" + id, "/v1/jobs/" + id + "/transcript"} {
		r := h.do(http.MethodGet, path, secret, "")
		require.Equal(t, http.StatusNotFound, r.status, path)
		require.Equal(t, "job_not_found", r.errorCode(t), path)
	}
	r := h.do(http.MethodDelete, "/v1/jobs/"+id, secret, "")
	require.Equal(t, http.StatusNotFound, r.status)
}

// DELETE forgets the filename and the Idempotency-Key: the deleted job
// still answers its owner (410 for its transcript), and the same key
// makes a new job.
func TestDeleteForgetsTheFilenameAndTheKey(t *testing.T) {
	h := newHarness(t, httpapi.Config{})
	_, secret := h.token("ci")
	_, other := h.token("other")
	r := h.do(http.MethodPost, "/v1/jobs", secret, createBody, "Idempotency-Key", "req-1")
	require.Equal(t, http.StatusCreated, r.status)
	var first jobReply
	r.json(t, &first)
	require.Equal(t, "interview.ogg", first.Filename)

	r = h.do(http.MethodDelete, "/v1/jobs/"+first.ID, secret, "")
	require.Equal(t, http.StatusOK, r.status)
	var del jobReply
	r.json(t, &del)
	require.Empty(t, del.Filename)
	require.NotNil(t, del.DeletedAt)

	r = h.do(http.MethodGet, "/v1/jobs/"+first.ID, secret, "")
	require.Equal(t, http.StatusOK, r.status, "the owner still sees the deleted job")
	var got jobReply
	r.json(t, &got)
	require.Empty(t, got.Filename)
	require.NotNil(t, got.DeletedAt)
	r = h.do(http.MethodGet, "/v1/jobs/"+first.ID+"/transcript", secret, "")
	require.Equal(t, http.StatusGone, r.status)
	require.Equal(t, "deleted", r.errorCode(t))
	require.Equal(t, http.StatusNotFound, h.do(http.MethodGet, "/v1/jobs/"+first.ID, other, "").status, "and nobody else does")

	r = h.do(http.MethodPost, "/v1/jobs", secret, createBody, "Idempotency-Key", "req-1")
	require.Equal(t, http.StatusCreated, r.status, "the key of a deleted job makes a new one: %s", r.body)
	var again jobReply
	r.json(t, &again)
	require.NotEqual(t, first.ID, again.ID)
	require.NotNil(t, again.Upload)
}
