package pipeline_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/clock/clocktest"
	"transcriber/internal/errs"
	"transcriber/internal/job"
	"transcriber/internal/pipeline"
	"transcriber/internal/speechkit"
)

// fakeRecognizer answers every check with checkErr and records deletions.
type fakeRecognizer struct {
	pipeline.Recognizer
	checkErr  error
	deleteErr error
	mu        sync.Mutex
	deleted   []string
}

func (r *fakeRecognizer) Check(context.Context, string) (bool, error) { return false, r.checkErr }

func (r *fakeRecognizer) Submit(context.Context, speechkit.Request) (string, error) {
	return "", errors.New("not expected")
}

func (r *fakeRecognizer) Delete(_ context.Context, op string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.deleted = append(r.deleted, op)
	return r.deleteErr
}

// fakeObjects records deletions; a key in fail fails to delete.
type fakeObjects struct {
	pipeline.Objects
	mu      sync.Mutex
	deleted []string
	fail    map[string]bool
}

func (o *fakeObjects) Delete(_ context.Context, key string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.fail[key] {
		return errs.New(errs.Unavailable, "storage_unavailable", "the storage is unavailable")
	}
	o.deleted = append(o.deleted, key)
	return nil
}

func quiet() *slog.Logger { return logs.Logger(nil) }

// transcribing makes a job in transcribe whose two segments were
// submitted, due now.
func transcribing(t *testing.T, st job.Store) job.Job {
	t.Helper()
	ctx := context.Background()
	j, err := st.Create(ctx, job.Draft{Source: job.SourceAPI, OwnerID: "o", Filename: "a.mp3", SizeBytes: 10})
	require.NoError(t, err)
	for _, s := range []job.State{job.Created, job.Converted, job.Transcribe} {
		j, err = st.Claim(ctx, j.ID, job.Ingest)
		require.NoError(t, err)
		j.State = s
		if s == job.Transcribe {
			j.Segments = []job.Segment{
				{Seq: 0, DurationMs: 1000, AudioKey: job.AudioKey(j.ID, 0), Container: "OGG_OPUS", OperationID: "op-a"},
				{Seq: 1, StartMs: 1000, DurationMs: 1000, AudioKey: job.AudioKey(j.ID, 1), Container: "OGG_OPUS", OperationID: "op-b"},
			}
		}
		j, err = st.Save(ctx, j, job.Next{})
		require.NoError(t, err)
	}
	return j
}

// A job that ends failed or dead has its recognitions deleted at the
// recognizer; a failed deletion is logged and the job's end stands.
func TestRecognitionsOfAFailedOrDeadJobAreDeleted(t *testing.T) {
	for name, tc := range map[string]struct {
		checkErr  error
		deleteErr error
		want      job.State
	}{
		"failed": {checkErr: errs.New(errs.Permanent, "bad_audio", "the audio cannot be recognized"), want: job.Failed},
		"dead":   {checkErr: errs.New(errs.Unavailable, "speechkit_unavailable", "recognition is unavailable"), want: job.Dead},
		"failed, and the deletion fails": {
			checkErr:  errs.New(errs.Permanent, "bad_audio", "the audio cannot be recognized"),
			deleteErr: errs.New(errs.Unavailable, "speechkit_unavailable", "recognition is unavailable"),
			want:      job.Failed,
		},
	} {
		t.Run(name, func(t *testing.T) {
			clk := clocktest.NewFake(time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC))
			st := newStore(t, clk)
			j := transcribing(t, st)
			rec := &fakeRecognizer{checkErr: tc.checkErr, deleteErr: tc.deleteErr}
			p := pipeline.New(pipeline.Deps{
				Store: st, Objects: &fakeObjects{}, Recognizer: rec, Clock: clk, Log: quiet(),
				Sleep: func(_ context.Context, d time.Duration) error { clk.Advance(d); return nil },
			}, pipeline.Config{Policy: job.Policy{MaxAttempts: 1, BasePause: time.Second, MaxPause: time.Second}})

			_, err := p.Poll(context.Background())
			require.NoError(t, err)
			got, err := st.Get(context.Background(), j.ID)
			require.NoError(t, err)
			require.Equal(t, tc.want, got.State)
			require.Equal(t, []string{"op-a", "op-b"}, rec.deleted)
		})
	}
}

// A job released for another try keeps its recognitions.
func TestRecognitionsOfARetriedJobStay(t *testing.T) {
	clk := clocktest.NewFake(time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC))
	st := newStore(t, clk)
	j := transcribing(t, st)
	rec := &fakeRecognizer{checkErr: errs.New(errs.Unavailable, "speechkit_unavailable", "recognition is unavailable")}
	p := pipeline.New(pipeline.Deps{
		Store: st, Objects: &fakeObjects{}, Recognizer: rec, Clock: clk, Log: quiet(),
		Sleep: func(_ context.Context, d time.Duration) error { return nil },
		// The clock stands still: the released job is not due again within the call.
	}, pipeline.Config{PollFor: time.Second})
	_, err := p.Poll(context.Background())
	require.NoError(t, err)
	got, err := st.Get(context.Background(), j.ID)
	require.NoError(t, err)
	require.Equal(t, job.Transcribe, got.State)
	require.Empty(t, rec.deleted)
}

// The poll sweep removes the rows of jobs ended longer than the retention
// ago, after their files, in bounded batches; a live job and one ended
// recently stay, and so does one whose files could not be removed.
func TestPollExpiresOldJobs(t *testing.T) {
	ctx := context.Background()
	clk := clocktest.NewFake(time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC))
	st := newStore(t, clk)
	fail := func(j job.Job) job.Job {
		c, err := st.Claim(ctx, j.ID, job.Poll)
		require.NoError(t, err)
		c.State = job.Failed
		c, err = st.Save(ctx, c, job.Next{})
		require.NoError(t, err)
		return c
	}
	var old []job.Job
	for i := 0; i < 120; i++ { // more than one batch
		old = append(old, fail(transcribing(t, st)))
	}
	stuck := fail(transcribing(t, st))
	live, err := st.Create(ctx, job.Draft{Source: job.SourceAPI, OwnerID: "o", UploadWindow: 365 * 24 * time.Hour})
	require.NoError(t, err)
	clk.Advance(30 * 24 * time.Hour)
	recent := fail(transcribing(t, st))
	clk.Advance(31 * 24 * time.Hour) // old ones ended 61 days ago, recent 31

	objects := &fakeObjects{fail: map[string]bool{job.ResultKey(stuck.ID): true}}
	p := pipeline.New(pipeline.Deps{
		Store: st, Objects: objects, Recognizer: &fakeRecognizer{}, Clock: clk, Log: quiet(),
		Sleep: func(context.Context, time.Duration) error { return nil },
	}, pipeline.Config{JobRetention: 60 * 24 * time.Hour})

	total := 0
	for i := 0; i < 10 && total < len(old); i++ {
		stats, err := p.Poll(ctx)
		require.NoError(t, err)
		require.LessOrEqual(t, stats.Expired, 200, "one call removes a bounded number")
		total += stats.Expired
	}
	require.Equal(t, len(old), total)
	for _, j := range old {
		_, err := st.Get(ctx, j.ID)
		require.ErrorIs(t, err, job.ErrNotFound)
		for _, k := range job.FileKeys(j) {
			require.True(t, slices.Contains(objects.deleted, k), "file %s of an expired job is removed", k)
		}
	}
	for _, j := range []job.Job{stuck, live, recent} {
		_, err := st.Get(ctx, j.ID)
		require.NoError(t, err, "job %s stays", j.ID)
	}
	require.False(t, slices.Contains(objects.deleted, job.ResultKey(recent.ID)))
}

// The "attempt ended" line names the attempt that ended, also when the
// job ended failed or dead and its saved attempts went back to 0.
func TestAttemptEndedNamesTheAttempt(t *testing.T) {
	for name, tc := range map[string]struct {
		checkErr error
		want     job.State
	}{
		"failed":   {checkErr: errs.New(errs.Permanent, "bad_audio", "the audio cannot be recognized"), want: job.Failed},
		"dead":     {checkErr: errs.New(errs.Unavailable, "speechkit_unavailable", "recognition is unavailable"), want: job.Dead},
		"released": {checkErr: errs.New(errs.Unavailable, "speechkit_unavailable", "recognition is unavailable"), want: job.Transcribe},
	} {
		t.Run(name, func(t *testing.T) {
			clk := clocktest.NewFake(time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC))
			st := newStore(t, clk)
			j := transcribing(t, st)
			var buf syncBuffer
			maxAttempts := 1
			if tc.want == job.Transcribe {
				maxAttempts = 5
			}
			p := pipeline.New(pipeline.Deps{
				Store: st, Objects: &fakeObjects{}, Recognizer: &fakeRecognizer{checkErr: tc.checkErr}, Clock: clk,
				Log:   slog.New(slog.NewJSONHandler(io.MultiWriter(&buf, logs), nil)),
				Sleep: func(context.Context, time.Duration) error { return nil },
			}, pipeline.Config{PollFor: time.Second, Policy: job.Policy{MaxAttempts: maxAttempts, BasePause: time.Minute, MaxPause: time.Minute}})

			_, err := p.Poll(context.Background())
			require.NoError(t, err)
			got, err := st.Get(context.Background(), j.ID)
			require.NoError(t, err)
			require.Equal(t, tc.want, got.State)

			var ended []map[string]any
			for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
				var rec map[string]any
				require.NoError(t, json.Unmarshal([]byte(line), &rec), line)
				if rec["msg"] == "attempt ended" && rec["job_id"] == j.ID {
					ended = append(ended, rec)
				}
			}
			require.Len(t, ended, 1, buf.String())
			require.EqualValues(t, 1, ended[0]["attempt"], "the poll's claim was the job's first attempt")
			require.Equal(t, string(tc.want), ended[0]["state"])
		})
	}
}

// syncBuffer is a bytes.Buffer safe for the pipeline's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
