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

// A job whose upload URL could not be signed is not left waiting for an
// upload nobody can make: the request fails and the job is gone.
func TestFailedPresignLeavesNoJobBehind(t *testing.T) {
	// Longer than a presigned URL may live: every presign fails.
	h := newHarness(t, httpapi.Config{UploadURLTTL: 200 * time.Hour})
	tok, secret := h.token("client")

	r := h.do(http.MethodPost, "/v1/jobs", secret, `{"filename":"a.ogg","size_bytes":1000}`)
	require.Equal(t, http.StatusInternalServerError, r.status, "body: %s", r.body)
	require.Equal(t, "storage_failed", r.errorCode(t))

	page, err := h.jobs.List(context.Background(), tok.ID, "", job.MaxListLimit)
	require.NoError(t, err)
	for _, j := range page.Jobs {
		require.True(t, j.Deleted(), "job %s is left %s", j.ID, j.State)
	}
	_, due, err := h.jobs.NextDue(context.Background(), []job.State{job.AwaitingUpload})
	require.NoError(t, err)
	require.False(t, due, "nothing is left for the sweep")
}
