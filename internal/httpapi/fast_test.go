package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/httpapi"
	"transcriber/internal/job"
)

// recognitionReply is what a job view says of how it was recognized.
type recognitionReply struct {
	ID            string  `json:"id"`
	Priority      string  `json:"priority"`
	Recognition   *string `json:"recognition"`
	BilledSeconds *int64  `json:"billed_seconds"`
}

// "priority": "fast" makes a fast job, and the view says so; a retry with
// the same key and another priority is another request.
func TestCreateTakesTheFastPriority(t *testing.T) {
	h := newHarness(t, httpapi.Config{})
	_, secret := h.token("ci")

	var v recognitionReply
	r := h.do(http.MethodPost, "/v1/jobs", secret, `{"filename": "voice.ogg", "size_bytes": 11, "priority": "fast"}`)
	require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
	r.json(t, &v)
	require.Equal(t, "fast", v.Priority)
	require.Nil(t, v.Recognition, "not recognized yet")
	stored, err := h.jobs.Get(context.Background(), v.ID)
	require.NoError(t, err)
	require.True(t, stored.Fast())

	r = h.do(http.MethodPost, "/v1/jobs", secret, `{"filename": "a.ogg", "size_bytes": 11, "priority": "Fast"}`)
	require.Equal(t, http.StatusBadRequest, r.status)
	require.Equal(t, "job_invalid", r.errorCode(t))
	require.Contains(t, string(r.body), `\"fast\"`, "the refusal names every priority")

	h.do(http.MethodPost, "/v1/jobs", secret, `{"filename": "a.ogg", "size_bytes": 11, "priority": "fast"}`, "Idempotency-Key", "k")
	r = h.do(http.MethodPost, "/v1/jobs", secret, `{"filename": "a.ogg", "size_bytes": 11}`, "Idempotency-Key", "k")
	require.Equal(t, http.StatusConflict, r.status)
}

// walk takes a job to done as the pipeline would, recording how it was
// recognized and, for a synchronous answer, the bill it stated.
func (h *harness) walk(id string, rec job.Recognition, billed int64, segs []job.Segment) {
	h.t.Helper()
	ctx := context.Background()
	for _, s := range []job.State{job.Created, job.Converted, job.Transcribe, job.Done} {
		c, err := h.jobs.Claim(ctx, id, job.Step{Name: "test", From: job.States, Lease: time.Minute})
		require.NoError(h.t, err)
		c.State = s
		if s == job.Converted {
			c.Recognition, c.Segments = rec, segs
		}
		if s == job.Done {
			c.BilledSeconds = billed
		}
		_, err = h.jobs.Save(ctx, c, job.Next{})
		require.NoError(h.t, err)
	}
}

// A done job says how it was recognized; a synchronous one bills what its
// answer stated, an asynchronous one its segments by the asynchronous
// rule. A listing says how, but leaves the bill to the job's own view.
func TestTheViewSaysHowTheJobWasRecognized(t *testing.T) {
	h := newHarness(t, httpapi.Config{})
	_, secret := h.token("ci")
	var fast, normal recognitionReply
	h.do(http.MethodPost, "/v1/jobs", secret, `{"filename": "voice.ogg", "size_bytes": 11, "priority": "fast"}`).json(t, &fast)
	h.do(http.MethodPost, "/v1/jobs", secret, createBody).json(t, &normal)

	// The synchronous answer stated 30 s for 6 s of audio; the
	// asynchronous rule would say 15.
	h.walk(fast.ID, job.RecognitionSync, 30, []job.Segment{{Seq: 0, DurationMs: 6_000, AudioKey: job.AcceptedKey(fast.ID), Container: "OGG_OPUS"}})
	h.walk(normal.ID, job.RecognitionAsync, 0, []job.Segment{{Seq: 0, DurationMs: 16_000, AudioKey: job.AudioKey(normal.ID, 0), Container: "OGG_OPUS"}})

	var v recognitionReply
	h.do(http.MethodGet, "/v1/jobs/"+fast.ID, secret, "").json(t, &v)
	require.Equal(t, "sync", *v.Recognition)
	require.Equal(t, int64(30), *v.BilledSeconds)
	require.Equal(t, "fast", v.Priority)
	h.do(http.MethodGet, "/v1/jobs/"+normal.ID, secret, "").json(t, &v)
	require.Equal(t, "async", *v.Recognition)
	require.Equal(t, int64(16), *v.BilledSeconds)

	var list struct {
		Jobs []recognitionReply `json:"jobs"`
	}
	h.do(http.MethodGet, "/v1/jobs", secret, "").json(t, &list)
	require.Len(t, list.Jobs, 2)
	for _, j := range list.Jobs {
		require.NotNil(t, j.Recognition)
		require.Nil(t, j.BilledSeconds, "listings leave the bill out")
	}

	var raw map[string]json.RawMessage
	h.do(http.MethodGet, "/v1/jobs/"+fast.ID, secret, "").json(t, &raw)
	require.JSONEq(t, `"sync"`, string(raw["recognition"]))
}
