package httpapi_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"transcriber/internal/httpapi"
	"transcriber/internal/job"
)

// "speakers" and "summary" are kept on the job and shown as its options; a
// retry with the same key and other options is another request.
func TestCreateTakesSpeakersAndASummary(t *testing.T) {
	h := newHarness(t, httpapi.Config{Summaries: true})
	_, secret := h.token("ci")

	var v struct {
		ID      string `json:"id"`
		Options struct {
			Speakers, Summary bool
		} `json:"options"`
	}
	r := h.do(http.MethodPost, "/v1/jobs", secret, `{"filename": "a.ogg", "size_bytes": 11, "speakers": true, "summary": true}`)
	require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
	r.json(t, &v)
	require.True(t, v.Options.Speakers && v.Options.Summary)
	stored, err := h.jobs.Get(context.Background(), v.ID)
	require.NoError(t, err)
	require.Equal(t, job.Features{Speakers: true, Summary: true}, stored.Features)

	r = h.do(http.MethodPost, "/v1/jobs", secret, createBody)
	require.NotContains(t, string(r.body), `"options"`, "no options, none shown")

	h.do(http.MethodPost, "/v1/jobs", secret, createBody, "Idempotency-Key", "k")
	r = h.do(http.MethodPost, "/v1/jobs", secret, `{"filename": "interview.ogg", "size_bytes": 11, "content_type": "audio/ogg", "speakers": true}`,
		"Idempotency-Key", "k")
	require.Equal(t, http.StatusConflict, r.status, "%s", r.body)
	require.Equal(t, "idempotency_key_reused", r.errorCode(t))
}

// Without a summary model "summary": true is refused and makes no job.
func TestASummaryNeedsAModel(t *testing.T) {
	h := newHarness(t, httpapi.Config{})
	tok, secret := h.token("ci")
	r := h.do(http.MethodPost, "/v1/jobs", secret, `{"filename": "a.ogg", "size_bytes": 11, "summary": true}`)
	require.Equal(t, http.StatusBadRequest, r.status, "%s", r.body)
	require.Equal(t, "summary_unavailable", r.errorCode(t))
	page, err := h.jobs.List(context.Background(), tok.ID, "", 10)
	require.NoError(t, err)
	require.Empty(t, page.Jobs)
}
