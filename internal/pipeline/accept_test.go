package pipeline_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/clock/clocktest"
	"transcriber/internal/job"
	"transcriber/internal/pipeline"
	"transcriber/internal/storage/s3"
)

// swappingObjects is a store that ignores the copy's precondition: what it
// copies is what is under the upload's key by then, another file of
// another size.
type swappingObjects struct {
	pipeline.Objects
	sizes map[string]int64
}

func (o *swappingObjects) Head(_ context.Context, key string) (s3.ObjectInfo, error) {
	return s3.ObjectInfo{Size: o.sizes[key], ETag: `"e"`}, nil
}

func (o *swappingObjects) Copy(_ context.Context, src, dst, _ string) error {
	o.sizes[dst] = o.sizes[src] + 1 // swapped between the HEAD and the copy
	return nil
}

func TestAcceptedCopyOfAnotherSizeIsNotAccepted(t *testing.T) {
	ctx := context.Background()
	clk := clocktest.NewFake(time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC))
	st := newStore(t, clk)
	j, err := st.Create(ctx, job.Draft{Source: job.SourceAPI, OwnerID: "o", Filename: "a.ogg", SizeBytes: 10, UploadWindow: time.Hour})
	require.NoError(t, err)
	objects := &swappingObjects{sizes: map[string]int64{job.SourceKey(j.ID): 10}}
	p := pipeline.New(pipeline.Deps{Store: st, Objects: objects, Clock: clk, Log: quiet()}, pipeline.Config{})

	require.NoError(t, p.Uploaded(ctx, job.SourceKey(j.ID)))
	got, err := st.Get(ctx, j.ID)
	require.NoError(t, err)
	require.Equal(t, job.AwaitingUpload, got.State, "not accepted")
	require.Equal(t, "storage_object_changed", got.ErrorCode, "looked at again on the next attempt")
}

// Accept takes an upload no further than accepting it: the job is created,
// its claim ended, nothing converted; Uploaded then takes it on from
// there (or the sweep, were its event lost). A job past its upload is
// Uploaded's, untouched.
func TestAcceptOnlyAcceptsAndLetsGo(t *testing.T) {
	e := newQuotaEnv(t)
	var down atomic.Bool
	var heads atomic.Int32
	rec := &doneRecognizer{}
	p := pipeline.New(pipeline.Deps{
		Store: e.st, Objects: flakyObjects{down: &down, heads: &heads}, Media: passMedia{durationMs: 10_000},
		Recognizer: rec, Clock: e.clk, Log: quiet(),
		Sleep: func(_ context.Context, d time.Duration) error { e.clk.Advance(d); return nil },
	}, pipeline.Config{Counters: e.counters})
	j, err := e.st.Create(e.ctx, job.Draft{Source: job.SourceAPI, OwnerID: "o", Filename: "a.ogg", SizeBytes: 10, UploadWindow: time.Hour})
	require.NoError(t, err)

	require.NoError(t, p.Accept(e.ctx, job.SourceKey(j.ID)))
	got := e.get(t, j.ID)
	require.Equal(t, job.Created, got.State)
	require.Empty(t, got.ClaimID, "let go")
	require.Zero(t, got.Attempts)
	require.Equal(t, e.clk.Now(), got.NextRunAt, "due at once")
	require.Zero(t, rec.count(), "nothing recognized yet")

	require.NoError(t, p.Accept(e.ctx, job.SourceKey(j.ID)))
	require.Equal(t, got, e.get(t, j.ID), "accepted already: left alone")

	require.NoError(t, p.Uploaded(e.ctx, job.SourceKey(j.ID)))
	require.Equal(t, job.Done, e.get(t, j.ID).State, "the rest of ingest")
	require.Equal(t, 1, rec.count())
}
