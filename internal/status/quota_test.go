package status_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/errs"
	"transcriber/internal/job"
	"transcriber/internal/pipeline"
	"transcriber/internal/pipeline/admission"
	"transcriber/internal/speechkit"
	"transcriber/internal/status"
)

// The quota waits the status reads are the ones the pipeline makes: it
// runs here on the same database, with a recognizer that takes (or
// refuses) every submission and never finishes one.

type recognizer struct {
	pipeline.Recognizer
	mu     sync.Mutex
	n      int
	refuse error
}

func (r *recognizer) Submit(context.Context, speechkit.Request) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.refuse != nil {
		return "", r.refuse
	}
	r.n++
	return fmt.Sprintf("op-%d", r.n), nil
}

func (r *recognizer) Check(context.Context, string) (bool, error) { return false, nil }

type uriObjects struct{ pipeline.Objects }

func (uriObjects) URI(key string) string { return "https://storage.example/bucket/" + key }

// pipeline runs with 35 requests an hour: 5 in each 10-minute window.
func (e *env) pipeline(rec pipeline.Recognizer) *pipeline.Pipeline {
	return pipeline.New(pipeline.Deps{
		Store: e.jobs, Objects: uriObjects{}, Recognizer: rec, Clock: e.clk, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Sleep: func(_ context.Context, d time.Duration) error { e.clk.Advance(d); return nil },
	}, pipeline.Config{RequestsPerHour: 35, Counters: e.counters})
}

// converted makes a job whose ten minutes of audio are ready in one piece,
// not submitted: ingest submits it when its upload's event comes.
func (e *env) converted(t *testing.T) job.Job {
	t.Helper()
	j := e.upload(t)
	c, err := e.jobs.Claim(e.ctx, j.ID, job.Ingest)
	require.NoError(t, err)
	c.State = job.Created
	c, err = e.jobs.Save(e.ctx, c, job.Next{Keep: true})
	require.NoError(t, err)
	c.State, c.DurationMs, c.ReservedSeconds = job.Converted, 600_000, 600
	c.Segments = []job.Segment{{DurationMs: 600_000, AudioKey: job.AudioKey(j.ID, 0), Container: "OGG_OPUS"}}
	// The claim ends, leaving the job to the upload's event.
	c, err = e.jobs.Save(e.ctx, c, job.Next{})
	require.NoError(t, err)
	return c
}

// With 5 requests a window, 8 jobs submit 5; the status says the other 3
// wait for the window, since their job was made, and what the window has
// used.
func TestJobsPutOffByTheRequestQuota(t *testing.T) {
	e := newEnv(t)
	rec := &recognizer{}
	p := e.pipeline(rec)
	var jobs []job.Job
	for i := 0; i < 8; i++ {
		jobs = append(jobs, e.converted(t))
	}
	for _, j := range jobs {
		require.NoError(t, p.Uploaded(e.ctx, job.SourceKey(j.ID)))
	}
	require.Equal(t, 5, rec.n)
	e.clk.Advance(time.Minute)

	s := e.read(t)
	require.Equal(t, status.Requests{Paced: true, Used: 5, Allowed: 5, Start: windowStart, ResetsAt: windowEnd}, s.Requests)
	require.Equal(t, status.QuotaWait{Jobs: 3, OldestID: jobs[5].ID, Since: jobs[5].CreatedAt}, s.QuotaWait)
	require.Equal(t, 3, counts(s.Live)[job.Converted].Jobs)
	require.Equal(t, 5, counts(s.Live)[job.Transcribe].Jobs)
	require.Equal(t, jobs[0].ID, s.Oldest.JobID)
	require.Equal(t, status.ForRecognition, s.Oldest.For, "the first made was submitted")

	// At 10:25, with nothing taken since: the window of 10:10 had room, so
	// no wait for the quota began before 10:20.
	e.clk.Set(windowEnd.Add(15 * time.Minute))
	s = e.read(t)
	require.Equal(t, 3, s.QuotaWait.Jobs)
	require.Equal(t, windowEnd.Add(10*time.Minute), s.QuotaWait.Since)
	// Full since 10:00, it began when its job was made.
	_, _, err := e.counters.Reserve(e.ctx, admission.RequestsKey, windowEnd, 5, 5)
	require.NoError(t, err)
	s = e.read(t)
	require.Equal(t, jobs[5].CreatedAt, s.QuotaWait.Since)
}

// A job the recognizer refused for its quota waits for the window too, and
// counts an attempt; the status names it with the code.
func TestAJobTheRecognizerRefusedWaitsForTheQuota(t *testing.T) {
	e := newEnv(t)
	refusal := errs.Wrap(errors.New("rpc error: code = ResourceExhausted"), errs.Unavailable,
		speechkit.CodeRecognitionQuota, "the speech recognizer's request quota is used up for now")
	j := e.converted(t)
	require.NoError(t, e.pipeline(&recognizer{refuse: refusal}).Uploaded(e.ctx, job.SourceKey(j.ID)))

	s := e.read(t)
	require.Equal(t, status.QuotaWait{Jobs: 1, OldestID: j.ID, Since: j.CreatedAt}, s.QuotaWait)
	require.Equal(t, status.ForQuota, s.Oldest.For)
	require.Equal(t, speechkit.CodeRecognitionQuota, s.Oldest.Code)
	require.Equal(t, 1, s.Oldest.Attempts)
	require.Equal(t, windowEnd, s.Oldest.Until)
}
