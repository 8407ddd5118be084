package pipeline_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/errs"
	"transcriber/internal/job"
	"transcriber/internal/pipeline"
	"transcriber/internal/pipeline/admission"
	"transcriber/internal/storage/s3"
)

// flakyObjects is an object store that answers as the S3 adapter does in
// an outage (storage_unavailable) while down is set.
type flakyObjects struct {
	resultObjects
	down  *atomic.Bool
	heads *atomic.Int32
}

var errStorageDown = errs.New(errs.Unavailable, "storage_unavailable", "file storage is unavailable; try again later")

func (o flakyObjects) Head(context.Context, string) (s3.ObjectInfo, error) {
	o.heads.Add(1)
	if o.down.Load() {
		return s3.ObjectInfo{}, errStorageDown
	}
	return s3.ObjectInfo{Size: 10, ETag: `"e"`}, nil
}

func (o flakyObjects) Copy(context.Context, string, string, string) error {
	if o.down.Load() {
		return errStorageDown
	}
	return nil
}

// An outage of the object store costs no job: uploads that meet it are
// held, their attempts not counted, while a probe goes at a growing
// interval; once it answers they are all accepted and finished.
func TestAnOutageOfStorageCostsNoJob(t *testing.T) {
	e := newQuotaEnv(t)
	var down atomic.Bool
	var heads atomic.Int32
	down.Store(true)
	p := pipeline.New(pipeline.Deps{
		Store: e.st, Objects: flakyObjects{down: &down, heads: &heads}, Media: passMedia{durationMs: 10_000},
		Recognizer: &doneRecognizer{}, Clock: e.clk, Log: quiet(),
		Sleep: func(_ context.Context, d time.Duration) error { e.clk.Advance(d); return nil },
	}, pipeline.Config{Counters: e.counters})
	var ids []string
	for range 4 {
		j, err := e.st.Create(e.ctx, job.Draft{Source: job.SourceAPI, OwnerID: "o", Filename: "a.ogg", SizeBytes: 10, UploadWindow: time.Hour})
		require.NoError(t, err)
		require.NoError(t, p.Uploaded(e.ctx, job.SourceKey(j.ID)))
		ids = append(ids, j.ID)
	}
	end := e.clk.Now().Add(10 * time.Minute)
	for e.clk.Now().Before(end) {
		_, err := p.Poll(e.ctx)
		require.NoError(t, err)
		e.clk.Advance(time.Minute) // the timer
	}
	for _, id := range ids {
		got := e.get(t, id)
		require.Equal(t, job.AwaitingUpload, got.State, "held, not failed: %s", got.ErrorCode)
		require.Less(t, got.Attempts, admission.DefaultOutageAfter)
	}
	// 3 to open it; then a probe 10, 30, 70, 150, 310 s after, and every
	// 5 minutes: 8 in 10 minutes.
	require.LessOrEqual(t, int(heads.Load()), admission.DefaultOutageAfter+8, "calls to the store during its outage")

	down.Store(false)
	for i := 0; i < 10 && e.get(t, ids[len(ids)-1]).State != job.Done; i++ {
		_, err := p.Poll(e.ctx)
		require.NoError(t, err)
		e.clk.Advance(time.Minute)
	}
	for _, id := range ids {
		got := e.get(t, id)
		require.Equal(t, job.Done, got.State, "%s: %s", got.ErrorCode, got.ErrorMessage)
	}
}
