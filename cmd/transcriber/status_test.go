package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/clock"
	"transcriber/internal/errs"
	"transcriber/internal/job"
	"transcriber/internal/pipeline"
	"transcriber/internal/speechkit"
	"transcriber/internal/status"
	"transcriber/internal/store/sqlite"
)

// oneRecognizer takes every submission and never finishes one.
type oneRecognizer struct {
	pipeline.Recognizer
	mu sync.Mutex
	n  int
}

func (r *oneRecognizer) Submit(context.Context, speechkit.Request) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.n++
	return fmt.Sprintf("op-%d", r.n), nil
}

func (r *oneRecognizer) Check(context.Context, string) (bool, error) { return false, nil }

type uriObjects struct{ pipeline.Objects }

func (uriObjects) URI(key string) string { return "https://storage.example/bucket/" + key }

// queueDeadAndQuota fills the embedded store under dir as the service
// would: two jobs waiting for their upload, one dead after its attempts,
// and, with a request quota of 2 an hour (one request in each hour-long
// window), two converted jobs the pipeline takes: one is submitted, the
// other waits for the next window. It returns the dead job and the one
// waiting.
func queueDeadAndQuota(t *testing.T, dir string) (dead, waiting job.Job, window time.Time) {
	t.Helper()
	ctx := context.Background()
	stores, err := sqlite.OpenSet(ctx, filepath.Join(dir, DBFile), clock.System())
	require.NoError(t, err)
	defer func() { require.NoError(t, stores.Close()) }()
	// The counters as the service spreads them.
	st, counters := stores.Jobs, stores.Counters
	create := func() job.Job {
		j, err := st.Create(ctx, job.Draft{Source: job.SourceAPI, OwnerID: "o", UploadWindow: time.Hour})
		require.NoError(t, err)
		return j
	}
	create()
	create()

	// Transient failures until the policy gives up.
	dead = create()
	failure := errs.New(errs.Unavailable, "storage_unavailable", "storage did not answer; it will be tried again")
	for {
		c, err := st.Claim(ctx, dead.ID, job.Ingest)
		require.NoError(t, err)
		if dead, err = job.Settle(ctx, st, job.DefaultPolicy, c, failure); dead.State.Terminal() {
			require.NoError(t, err)
			break
		}
	}
	require.Equal(t, job.Dead, dead.State)

	p := pipeline.New(pipeline.Deps{Store: st, Objects: uriObjects{}, Recognizer: &oneRecognizer{}, Clock: clock.System(),
		Log: logs.Logger(nil)}, pipeline.Config{RequestsPerHour: 2, Counters: counters})
	var converted []job.Job
	for i := 0; i < 2; i++ {
		c, err := st.Claim(ctx, create().ID, job.Ingest)
		require.NoError(t, err)
		for _, s := range []job.State{job.Created, job.Converted} {
			c.State = s
			if s == job.Converted {
				c.DurationMs, c.ReservedSeconds = 600_000, 600
				c.Segments = []job.Segment{{DurationMs: 600_000, AudioKey: job.AudioKey(c.ID, 0), Container: "OGG_OPUS"}}
			}
			n := job.Next{Keep: true}
			if s == job.Converted {
				n = job.Next{} // left for the upload's event
			}
			c, err = st.Save(ctx, c, n)
			require.NoError(t, err)
		}
		converted = append(converted, c)
	}
	window = clock.System().Now().Truncate(time.Hour)
	for _, c := range converted {
		require.NoError(t, p.Uploaded(ctx, job.SourceKey(c.ID)))
	}
	waiting, err = st.Get(ctx, converted[1].ID)
	require.NoError(t, err)
	if waiting.State != job.Converted {
		// The hour turned between the two: each had a window of its own.
		t.Skip("skipped: the request window turned during the set-up")
	}
	return dead, waiting, window
}

func runStatus(t *testing.T, dir string, args ...string) string {
	t.Helper()
	var out bytes.Buffer
	err := run(context.Background(), append([]string{"status"}, args...),
		env(map[string]string{"DATA_DIR": dir, "SPEECHKIT_REQUESTS_PER_HOUR": "2"}), &out)
	require.NoError(t, err)
	return out.String()
}

func TestStatusReportsAQueueADeadJobAndAQuotaWait(t *testing.T) {
	dir := t.TempDir()
	dead, waiting, window := queueDeadAndQuota(t, dir)

	var s status.Status
	require.NoError(t, json.Unmarshal([]byte(runStatus(t, dir, "--json")), &s))
	live := map[job.State]int{}
	for _, c := range s.Live {
		live[c.State] = c.Jobs
	}
	require.Equal(t, map[job.State]int{job.AwaitingUpload: 2, job.Created: 0, job.Converted: 1, job.Transcribe: 1}, live)
	require.Equal(t, status.Count{State: job.Dead, Jobs: 1}, s.Ended[2])
	require.Equal(t, []status.Failure{{State: job.Dead, Code: "storage_unavailable", Jobs: 1}}, s.Failures)
	require.Equal(t, []status.Ended{{JobID: dead.ID, Code: "storage_unavailable", At: dead.EndedAt}}, s.Dead)
	require.Equal(t, 1, s.QuotaWait.Jobs)
	require.Equal(t, waiting.ID, s.QuotaWait.OldestID)
	require.Equal(t, waiting.CreatedAt, s.QuotaWait.Since)
	require.True(t, s.Requests.Paced)
	require.Equal(t, int64(1), s.Requests.Allowed)
	if s.Requests.Start.Equal(window) { // the same hour as the set-up
		require.Equal(t, int64(1), s.Requests.Used)
	}
	require.NotNil(t, s.Telegram)
	require.NotNil(t, s.Callbacks)

	text := runStatus(t, dir)
	for _, want := range []string{
		"jobs now:        awaiting_upload 2, created 0, converted 1, transcribe 1",
		"failures 24 h:   1 dead storage_unavailable",
		"latest dead:     " + dead.ID + " storage_unavailable",
		"quota wait:      1 job waits for the recognizer's request window",
		"(the oldest: " + waiting.ID + ")",
	} {
		require.Contains(t, text, want)
	}
}

// Without a store under DATA_DIR, status says where it looked, and makes
// none.
func TestStatusNeedsAStore(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	err := run(context.Background(), []string{"status"}, env(map[string]string{"DATA_DIR": dir}), &bytes.Buffer{})
	require.ErrorContains(t, err, "no job store in DATA_DIR")
	require.False(t, errors.Is(err, errUsage))
	require.NoDirExists(t, dir)
}

// A malformed setting of the service stops status before it reads: its
// windows and limits come from them.
func TestStatusRefusesABadSetting(t *testing.T) {
	dir := t.TempDir()
	err := run(context.Background(), []string{"status"}, env(map[string]string{"DATA_DIR": dir, "SPEECHKIT_REQUESTS_PER_HOUR": "1"}), &bytes.Buffer{})
	require.ErrorContains(t, err, "SPEECHKIT_REQUESTS_PER_HOUR")
	require.False(t, strings.Contains(err.Error(), "no job store"))
}
