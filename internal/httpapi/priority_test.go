package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"transcriber/internal/httpapi"
	"transcriber/internal/job"
)

// costReply is what a job view says of its priority and cost.
type costReply struct {
	ID            string `json:"id"`
	State         string `json:"state"`
	Priority      string `json:"priority"`
	BilledSeconds *int64 `json:"billed_seconds"`
}

// "priority": "deferred" makes a deferred job, none a normal one, and the
// view says which; any other priority is refused 400 job_invalid, making
// no job.
func TestCreateTakesAPriority(t *testing.T) {
	h := newHarness(t, httpapi.Config{})
	tok, secret := h.token("ci")

	var d costReply
	r := h.do(http.MethodPost, "/v1/jobs", secret, `{"filename": "a.ogg", "size_bytes": 11, "priority": "deferred"}`)
	require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
	r.json(t, &d)
	require.Equal(t, "deferred", d.Priority)
	stored, err := h.jobs.Get(context.Background(), d.ID)
	require.NoError(t, err)
	require.Equal(t, job.PriorityDeferred, stored.Priority)

	var n costReply
	h.do(http.MethodPost, "/v1/jobs", secret, createBody).json(t, &n)
	require.Equal(t, "normal", n.Priority)
	h.do(http.MethodPost, "/v1/jobs", secret, `{"filename": "a.ogg", "size_bytes": 11, "priority": "normal"}`).json(t, &n)
	require.Equal(t, "normal", n.Priority)

	for _, body := range []string{
		`{"filename": "a.ogg", "size_bytes": 11, "priority": "urgent"}`,
		`{"filename": "a.ogg", "size_bytes": 11, "priority": "Deferred"}`,
	} {
		r := h.do(http.MethodPost, "/v1/jobs", secret, body)
		require.Equal(t, http.StatusBadRequest, r.status, body)
		require.Equal(t, "job_invalid", r.errorCode(t), body)
	}
	page, err := h.jobs.List(context.Background(), tok.ID, "", 10)
	require.NoError(t, err)
	require.Len(t, page.Jobs, 3, "a refused priority made no job")

	// A retry with the same key and another priority is another request.
	h.do(http.MethodPost, "/v1/jobs", secret, createBody, "Idempotency-Key", "k")
	r = h.do(http.MethodPost, "/v1/jobs", secret, `{"filename": "interview.ogg", "size_bytes": 11, "content_type": "audio/ogg", "priority": "deferred"}`,
		"Idempotency-Key", "k")
	require.Equal(t, http.StatusConflict, r.status)
}

// A done job's view says what SpeechKit billed for it, each segment
// rounded on its own; a job not done says nothing of it.
func TestADoneJobShowsItsBilledSeconds(t *testing.T) {
	h := newHarness(t, httpapi.Config{})
	_, secret := h.token("ci")
	var j costReply
	h.do(http.MethodPost, "/v1/jobs", secret, createBody).json(t, &j)
	ctx := context.Background()
	for _, s := range []job.State{job.Created, job.Converted, job.Transcribe, job.Done} {
		step := job.Ingest
		if s == job.Done {
			step = job.Poll
		}
		c, err := h.jobs.Claim(ctx, j.ID, step)
		require.NoError(t, err)
		c.State = s
		if s == job.Converted {
			c.DurationMs = 61_000
			c.Segments = []job.Segment{
				{Seq: 0, DurationMs: 60_000, AudioKey: job.AudioKey(j.ID, 0), Container: "OGG_OPUS"},
				{Seq: 1, StartMs: 60_000, DurationMs: 1_000, AudioKey: job.AudioKey(j.ID, 1), Container: "OGG_OPUS"},
			}
		}
		_, err = h.jobs.Save(ctx, c, job.Next{})
		require.NoError(t, err)
		var v costReply
		r := h.do(http.MethodGet, "/v1/jobs/"+j.ID, secret, "")
		require.Equal(t, http.StatusOK, r.status)
		r.json(t, &v)
		if s != job.Done {
			require.Nil(t, v.BilledSeconds, "a %s job shows no cost", s)
			continue
		}
		require.NotNil(t, v.BilledSeconds)
		require.Equal(t, int64(60+15), *v.BilledSeconds)
	}
	var raw map[string]json.RawMessage
	h.do(http.MethodGet, "/v1/jobs/"+j.ID, secret, "").json(t, &raw)
	require.JSONEq(t, "75", string(raw["billed_seconds"]))
}
