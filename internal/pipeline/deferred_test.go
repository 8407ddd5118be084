package pipeline_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/job"
	"transcriber/internal/pipeline"
	"transcriber/internal/speechkit"
	"transcriber/internal/spend"
	"transcriber/internal/transcript"
)

// modelRecognizer records the requests submitted; its recognitions finish
// when done is set, with an empty result.
type modelRecognizer struct {
	pipeline.Recognizer
	mu       sync.Mutex
	requests []speechkit.Request
	done     bool
}

func (r *modelRecognizer) Submit(_ context.Context, req speechkit.Request) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests = append(r.requests, req)
	return fmt.Sprintf("op-%d", len(r.requests)), nil
}

func (r *modelRecognizer) Check(context.Context, string) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.done, nil
}

func (r *modelRecognizer) Result(context.Context, string) (transcript.Transcript, error) {
	return transcript.Transcript{}, nil
}

func (r *modelRecognizer) Delete(context.Context, string) error { return nil }

func (r *modelRecognizer) models() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, q := range r.requests {
		out = append(out, q.Model)
	}
	return out
}

// putObjects keeps what is put, and names objects by URI.
type putObjects struct {
	uriObjects
	mu  sync.Mutex
	put map[string][]byte
}

// Upload stores what it reads, as Put does.
func (o *putObjects) Upload(ctx context.Context, key string, r io.Reader, contentType string) (int64, error) {
	body, err := io.ReadAll(r)
	if err != nil {
		return 0, err
	}
	return int64(len(body)), o.Put(ctx, key, body, contentType)
}

func (o *putObjects) Put(_ context.Context, key string, body []byte, _ string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.put == nil {
		o.put = map[string][]byte{}
	}
	o.put[key] = body
	return nil
}

// convertedWith makes a job of the given priority whose audio is ready in
// segments of the given lengths, none submitted.
func (e *quotaEnv) convertedWith(t *testing.T, pr job.Priority, lengths ...int64) job.Job {
	t.Helper()
	j, err := e.st.Create(e.ctx, job.Draft{Source: job.SourceAPI, OwnerID: "o", Filename: "a.mp3", SizeBytes: 10, Priority: pr})
	require.NoError(t, err)
	for _, s := range []job.State{job.Created, job.Converted} {
		j, err = e.st.Claim(e.ctx, j.ID, job.Ingest)
		require.NoError(t, err)
		j.State = s
		if s == job.Converted {
			var start int64
			for i, ms := range lengths {
				j.Segments = append(j.Segments, job.Segment{Seq: i, StartMs: start, DurationMs: ms,
					AudioKey: job.AudioKey(j.ID, i), Container: "OGG_OPUS"})
				start += ms
			}
			j.DurationMs = start
			j.ReservedSeconds = spend.Seconds(start) // what prepare reserves
		}
		j, err = e.st.Save(e.ctx, j, job.Next{})
		require.NoError(t, err)
	}
	return j
}

func (e *quotaEnv) recognizing(rec pipeline.Recognizer, objects pipeline.Objects) *pipeline.Pipeline {
	return pipeline.New(pipeline.Deps{
		Store: e.st, Objects: objects, Recognizer: rec, Clock: e.clk, Log: quiet(),
		Sleep: func(_ context.Context, d time.Duration) error { e.clk.Advance(d); return nil },
	}, pipeline.Config{})
}

// A deferred job's segments are submitted with SpeechKit's deferred
// model; a normal job's name none, so the client's configured model is
// sent.
func TestADeferredJobIsSubmittedToTheDeferredModel(t *testing.T) {
	e := newQuotaEnv(t)
	rec := &modelRecognizer{}
	p := e.recognizing(rec, &putObjects{})
	deferred := e.convertedWith(t, job.PriorityDeferred, 600_000, 600_000)
	normal := e.convertedWith(t, job.PriorityNormal, 600_000)

	require.NoError(t, p.Uploaded(e.ctx, job.SourceKey(deferred.ID)))
	require.NoError(t, p.Uploaded(e.ctx, job.SourceKey(normal.ID)))

	require.Equal(t, []string{speechkit.DeferredModel, speechkit.DeferredModel, ""}, rec.models())
	require.Equal(t, job.Transcribe, e.get(t, deferred.ID).State)
}

// A deferred job is checked as any other for its first hour, then every
// 15 minutes; a normal job of the same audio is checked every minute
// however long it takes. A short deferred recording is not checked inline
// after submission.
func TestADeferredJobIsCheckedRarelyAfterItsFirstHour(t *testing.T) {
	e := newQuotaEnv(t)
	rec := &modelRecognizer{}
	p := e.recognizing(rec, &putObjects{})
	deferred := e.convertedWith(t, job.PriorityDeferred, 600_000)
	normal := e.convertedWith(t, job.PriorityNormal, 600_000)

	require.NoError(t, p.Uploaded(e.ctx, job.SourceKey(deferred.ID)))
	require.NoError(t, p.Uploaded(e.ctx, job.SourceKey(normal.ID)))
	start := e.clk.Now()
	require.Equal(t, start.Add(50*time.Second), e.get(t, deferred.ID).NextRunAt, "10 min of audio: checked after a twelfth of it")

	// Polls through the first hour keep the normal pause; after it the
	// deferred job waits 15 minutes between checks.
	var pauses []time.Duration
	for e.clk.Now().Before(start.Add(90 * time.Minute)) {
		e.clk.Advance(time.Minute)
		_, err := p.Poll(e.ctx)
		require.NoError(t, err)
		d := e.get(t, deferred.ID)
		pauses = append(pauses, d.NextRunAt.Sub(d.UpdatedAt))
		n := e.get(t, normal.ID)
		require.LessOrEqual(t, n.NextRunAt.Sub(n.UpdatedAt), time.Minute, "a normal job is checked every minute at most")
	}
	require.Equal(t, 50*time.Second, pauses[0], "in the first hour, the normal pause")
	require.Equal(t, 15*time.Minute, pauses[len(pauses)-1], "after it, 15 minutes")

	checks := 0
	last := e.get(t, deferred.ID).NextRunAt
	for e.clk.Now().Before(start.Add(25 * time.Hour)) {
		e.clk.Advance(time.Minute)
		_, err := p.Poll(e.ctx)
		require.NoError(t, err)
		if d := e.get(t, deferred.ID).NextRunAt; !d.Equal(last) {
			checks++
			last = d
		}
	}
	require.LessOrEqual(t, checks, 24*4, "at most four checks an hour after the first")
	require.Greater(t, checks, 24*3)
}

func TestAShortDeferredJobIsNotCheckedInline(t *testing.T) {
	e := newQuotaEnv(t)
	rec := &modelRecognizer{done: true}
	objects := &putObjects{}
	p := e.recognizing(rec, objects)
	short := e.convertedWith(t, job.PriorityDeferred, 5_000)

	require.NoError(t, p.Uploaded(e.ctx, job.SourceKey(short.ID)))
	got := e.get(t, short.ID)
	require.Equal(t, job.Transcribe, got.State, "handed to the poll function, not checked inline")
	require.Empty(t, objects.put)

	normal := e.convertedWith(t, job.PriorityNormal, 5_000)
	require.NoError(t, p.Uploaded(e.ctx, job.SourceKey(normal.ID)))
	require.Equal(t, job.Done, e.get(t, normal.ID).State, "a normal voice note is")
}

// The transcript of a finished job says what SpeechKit billed for it:
// each segment rounded up to whole seconds, at least 15 seconds.
func TestTheTranscriptSaysTheBilledSeconds(t *testing.T) {
	e := newQuotaEnv(t)
	rec := &modelRecognizer{done: true}
	objects := &putObjects{}
	p := e.recognizing(rec, objects)
	j := e.convertedWith(t, job.PriorityNormal, 3_600_000, 1_000, 15_001)

	require.NoError(t, p.Uploaded(e.ctx, job.SourceKey(j.ID)))
	e.clk.Advance(time.Hour)
	_, err := p.Poll(e.ctx)
	require.NoError(t, err)
	require.Equal(t, job.Done, e.get(t, j.ID).State)
	var tr transcript.Transcript
	require.NoError(t, json.Unmarshal(objects.put[job.ResultKey(j.ID)], &tr))
	require.Equal(t, int64(3600+15+16), tr.BilledSeconds)
}
