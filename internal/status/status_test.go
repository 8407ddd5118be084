package status_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/clock/clocktest"
	"transcriber/internal/job"
	"transcriber/internal/outbox"
	"transcriber/internal/pipeline/admission"
	"transcriber/internal/speechkit"
	"transcriber/internal/spend"
	"transcriber/internal/status"
	"transcriber/internal/store/sqlite"
)

// start is 10:03, in the request window 10:00-10:10 of 35 requests an
// hour (5 a window) and the in-flight window 10:00-10:30.
var (
	start       = time.Date(2026, 11, 29, 10, 3, 0, 0, time.UTC)
	windowStart = time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	windowEnd   = windowStart.Add(10 * time.Minute)
)

// windows35 are the pipeline's windows at 35 requests an hour (the app's
// status configuration, tested there): 10-minute request windows of 5.
var windows35 = status.Windows{RequestsKey: admission.RequestsKey, RequestLength: 10 * time.Minute, RequestLimit: 5}

// env is the status of one embedded database, its clock held at start.
type env struct {
	ctx      context.Context
	clk      *clocktest.Fake
	jobs     *sqlite.JobStore
	box      *sqlite.Outbox
	counters *sqlite.Counters
	cfg      status.Config
}

func newEnv(t *testing.T) *env {
	t.Helper()
	clk := clocktest.NewFake(start)
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "jobs.db"), clk)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	return &env{ctx: context.Background(), clk: clk, jobs: sqlite.NewJobStore(db), box: sqlite.NewOutbox(db),
		counters: sqlite.NewCounters(db),
		cfg:      status.Config{Windows: windows35, QuotaCode: speechkit.CodeRecognitionQuota, AudioPerMonth: 10 * time.Hour}}
}

func (e *env) read(t *testing.T) status.Status {
	t.Helper()
	r := status.Reader{Jobs: e.jobs, Counters: e.counters, Outbox: e.box, Config: e.cfg}
	s, err := r.Read(e.ctx, e.clk.Now())
	require.NoError(t, err)
	return s
}

// upload makes an API job waiting for its upload for an hour.
func (e *env) upload(t *testing.T) job.Job {
	t.Helper()
	e.clk.Advance(time.Millisecond) // ids made in different milliseconds sort by time
	j, err := e.jobs.Create(e.ctx, job.Draft{Source: job.SourceAPI, OwnerID: "o", UploadWindow: time.Hour})
	require.NoError(t, err)
	return j
}

// move claims j for ingest and saves it through states, the last with
// next; the ones before keep the claim.
func (e *env) move(t *testing.T, j job.Job, next job.Next, states ...job.State) job.Job {
	t.Helper()
	c, err := e.jobs.Claim(e.ctx, j.ID, job.Ingest)
	require.NoError(t, err)
	for i, st := range states {
		c.State = st
		n := job.Next{Keep: true}
		if i == len(states)-1 {
			n = next
		}
		c, err = e.jobs.Save(e.ctx, c, n)
		require.NoError(t, err)
	}
	return c
}

// end makes a job that ended in state with code.
func (e *env) end(t *testing.T, state job.State, code string) job.Job {
	t.Helper()
	j := e.upload(t)
	if state == job.Done {
		return e.move(t, j, job.Next{}, job.Created, job.Converted, job.Transcribe, job.Done)
	}
	c, err := e.jobs.Claim(e.ctx, j.ID, job.Ingest)
	require.NoError(t, err)
	c.State, c.ErrorCode, c.ErrorMessage = state, code, "words"
	c, err = e.jobs.Save(e.ctx, c, job.Next{})
	require.NoError(t, err)
	return c
}

func counts(cs []status.Count) map[job.State]status.Count {
	out := map[job.State]status.Count{}
	for _, c := range cs {
		out[c.State] = c
	}
	return out
}

func TestAnIdleServiceHasNothingWaiting(t *testing.T) {
	e := newEnv(t)
	s := e.read(t)
	require.Equal(t, start, s.At)
	require.Equal(t, start.Add(-status.Span), s.EndedSince)
	require.Equal(t, []status.Count{{State: job.AwaitingUpload}, {State: job.Created}, {State: job.Converted}, {State: job.Transcribe}}, s.Live)
	require.Equal(t, []status.Count{{State: job.Done}, {State: job.Failed}, {State: job.Dead}}, s.Ended)
	require.Nil(t, s.Oldest)
	require.Empty(t, s.Failures)
	require.Empty(t, s.Dead)
	require.Equal(t, status.QuotaWait{}, s.QuotaWait)
	require.Equal(t, status.Requests{Paced: true, Allowed: 5, Start: windowStart, ResetsAt: windowEnd}, s.Requests)
	require.Equal(t, spend.Window{LimitSeconds: 36000, ResetsAt: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}, s.Audio)
	require.Equal(t, &status.TelegramState{}, s.Telegram)
	require.Equal(t, &status.CallbackState{Endpoints: []status.Endpoint{}}, s.Callbacks)
}

// The live states are counted, the ended ones of the last day, and the
// failed and dead ones by code; the oldest job is named with what it
// waits for.
func TestTheQueueTheEndedAndTheFailures(t *testing.T) {
	e := newEnv(t)
	old := e.end(t, job.Dead, "recognition_failed") // ends more than a day before the read
	e.clk.Advance(status.Span)
	first := e.upload(t)
	e.upload(t)
	e.move(t, e.upload(t), job.Next{}, job.Created)
	e.end(t, job.Done, "")
	e.end(t, job.Failed, "no_audio_stream")
	e.end(t, job.Failed, "no_audio_stream")
	e.end(t, job.Failed, "too_large")
	dead1 := e.end(t, job.Dead, "storage_unavailable")
	e.clk.Advance(time.Second)
	dead2 := e.end(t, job.Dead, "attempts_exhausted")
	e.clk.Advance(time.Minute)

	s := e.read(t)
	live := counts(s.Live)
	require.Equal(t, 2, live[job.AwaitingUpload].Jobs)
	require.Equal(t, 1, live[job.Created].Jobs)
	require.Zero(t, live[job.Transcribe].Jobs)
	ended := counts(s.Ended)
	require.Equal(t, status.Count{State: job.Done, Jobs: 1}, ended[job.Done])
	require.Equal(t, 3, ended[job.Failed].Jobs)
	require.Equal(t, 2, ended[job.Dead].Jobs, "the one ended a day ago is left out")
	require.Equal(t, []status.Failure{
		{State: job.Failed, Code: "no_audio_stream", Jobs: 2},
		{State: job.Dead, Code: "attempts_exhausted", Jobs: 1},
		{State: job.Dead, Code: "storage_unavailable", Jobs: 1},
		{State: job.Failed, Code: "too_large", Jobs: 1},
	}, s.Failures)
	require.Equal(t, []status.Ended{
		{JobID: dead2.ID, Code: "attempts_exhausted", At: dead2.EndedAt},
		{JobID: dead1.ID, Code: "storage_unavailable", At: dead1.EndedAt},
	}, s.Dead, "the latest first")
	require.NotContains(t, []string{s.Dead[0].JobID, s.Dead[1].JobID}, old.ID)

	require.Equal(t, &status.Waiting{JobID: first.ID, State: job.AwaitingUpload, CreatedAt: first.CreatedAt,
		For: status.ForUpload, Until: first.NextRunAt}, s.Oldest, "the first made, waiting for its upload")
}

// A range longer than the cap reads as "more than" it.
func TestCountsStopAtTheCap(t *testing.T) {
	e := newEnv(t)
	e.cfg.Cap = 2
	first := e.upload(t)
	e.upload(t)
	e.upload(t)
	e.end(t, job.Dead, "a")
	e.end(t, job.Dead, "b")
	e.end(t, job.Dead, "c")
	s := e.read(t)
	require.Equal(t, status.Count{State: job.AwaitingUpload, Jobs: 2, More: true}, counts(s.Live)[job.AwaitingUpload])
	require.Equal(t, status.Count{State: job.Dead, Jobs: 2, More: true}, counts(s.Ended)[job.Dead])
	require.Len(t, s.Dead, 2)
	require.Equal(t, first.ID, s.Oldest.JobID, "the oldest among those counted")
}

// What the oldest job waits for, read from its row.
func TestWhatTheOldestJobWaitsFor(t *testing.T) {
	piece := func(j job.Job, submitted bool) job.Job {
		j.DurationMs = 600_000
		sg := job.Segment{Seq: 0, DurationMs: 600_000, AudioKey: job.AudioKey(j.ID, 0), Container: "OGG_OPUS"}
		if submitted {
			sg.OperationID = "op-1"
		}
		j.Segments = []job.Segment{sg}
		return j
	}
	// transcribing saves j in transcribe with one piece, due after pause.
	transcribing := func(t *testing.T, e *env, submitted bool, pause time.Duration) job.Job {
		c, err := e.jobs.Claim(e.ctx, e.upload(t).ID, job.Ingest)
		require.NoError(t, err)
		for _, st := range []job.State{job.Created, job.Converted, job.Transcribe} {
			c.State = st
			c = piece(c, submitted)
			n := job.Next{Keep: true}
			if st == job.Transcribe {
				n = job.Next{After: pause}
			}
			c, err = e.jobs.Save(e.ctx, c, n)
			require.NoError(t, err)
		}
		return c
	}
	for _, c := range []struct {
		name string
		make func(t *testing.T, e *env) job.Job
		want status.Reason
		code string
	}{
		{"a step holds it", func(t *testing.T, e *env) job.Job {
			c, err := e.jobs.Claim(e.ctx, e.upload(t).ID, job.Ingest)
			require.NoError(t, err)
			return c
		}, status.ForStep, ""},
		{"due, and not yet taken", func(t *testing.T, e *env) job.Job {
			return e.move(t, e.upload(t), job.Next{}, job.Created)
		}, status.ForTurn, ""},
		{"a failed attempt is retried", func(t *testing.T, e *env) job.Job {
			c, err := e.jobs.Claim(e.ctx, e.upload(t).ID, job.Ingest)
			require.NoError(t, err)
			c, err = e.jobs.Release(e.ctx, c.Claim(), time.Minute, job.Failure{Code: "storage_unavailable", Message: "m"})
			require.NoError(t, err)
			return c
		}, status.ForRetry, "storage_unavailable"},
		{"its recognition runs", func(t *testing.T, e *env) job.Job {
			return transcribing(t, e, true, 25*time.Second)
		}, status.ForRecognition, ""},
		{"a piece waits for a place in flight", func(t *testing.T, e *env) job.Job {
			return transcribing(t, e, false, 15*time.Second)
		}, status.ForSlot, ""},
		{"a recognition failed and its piece is tried again", func(t *testing.T, e *env) job.Job {
			j := transcribing(t, e, false, time.Minute)
			e.clk.Set(j.NextRunAt)
			c, err := e.jobs.Claim(e.ctx, j.ID, job.Poll)
			require.NoError(t, err)
			c, err = e.jobs.Release(e.ctx, c.Claim(), 2*time.Second, job.Failure{Code: "recognition_failed", Message: "m"})
			require.NoError(t, err)
			return c
		}, status.ForRetry, "recognition_failed"},
		{"a piece waits for the request window", func(t *testing.T, e *env) job.Job {
			return transcribing(t, e, false, windowEnd.Sub(e.clk.Now()))
		}, status.ForQuota, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			j := c.make(t, e)
			s := e.read(t)
			require.NotNil(t, s.Oldest)
			require.Equal(t, j.ID, s.Oldest.JobID)
			require.Equal(t, c.want, s.Oldest.For)
			require.Equal(t, c.code, s.Oldest.Code)
			require.Equal(t, j.State, s.Oldest.State)
			require.Equal(t, j.NextRunAt, s.Oldest.Until)
		})
	}
}

// The month's audio is what its counter holds.
func TestTheMonthsAudio(t *testing.T) {
	e := newEnv(t)
	month := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	_, _, err := e.counters.Reserve(e.ctx, spend.MonthKey, month, 29_000, 0)
	require.NoError(t, err)
	s := e.read(t)
	require.Equal(t, int64(29_000), s.Audio.UsedSeconds)
	require.Equal(t, int64(36_000), s.Audio.LimitSeconds)
}

// Pending deliveries are counted, and the failing ones; callbacks that
// fail are grouped by their host, and nothing else of their URL is shown.
func TestDeliveriesAndCallbacks(t *testing.T) {
	e := newEnv(t)
	now := e.clk.Now()
	msg := func(n int) outbox.Entry {
		return outbox.Entry{Kind: outbox.Telegram, Key: fmt.Sprintf("42/%d/result", n)}
	}
	_, _, err := e.box.Put(e.ctx, msg(1), now.Add(30*time.Minute), now)
	require.NoError(t, err)
	_, _, err = e.box.Begin(e.ctx, msg(2), now.Add(-time.Minute), time.Second)
	require.NoError(t, err)
	_, err = e.box.Finish(e.ctx, outbox.Telegram, msg(2).Key, outbox.Outcome{State: outbox.Pending, NextAt: now.Add(-time.Second),
		Attempt: &outbox.Attempt{At: now.Add(-time.Minute), Error: "telegram_unavailable"}}, now.Add(-time.Minute))
	require.NoError(t, err)
	_, _, err = e.box.Begin(e.ctx, msg(3), now, time.Minute) // being sent now
	require.NoError(t, err)
	_, _, err = e.box.Begin(e.ctx, msg(4), now.Add(-10*time.Minute), time.Minute) // its sender died
	require.NoError(t, err)

	const secretURL = "https://hooks.example.com:8443/in/s3cr3t-path?token=s3cr3t"
	ids := []string{"01jd0m3y8k9q2r5t7v4w6x8z0a", "01jd0m3y8k9q2r5t7v4w6x8z0b", "01jd0m3y8k9q2r5t7v4w6x8z0c", "01jd0m3y8k9q2r5t7v4w6x8z0d", "01jd0m3y8k9q2r5t7v4w6x8z0e"}
	for i, id := range ids {
		u := secretURL
		if i == 4 {
			u = "https://ok.example.net/hook"
		}
		cb := outbox.Entry{Kind: outbox.Callback, Key: id, JobID: id, Payload: `{"url":"` + u + `"}`}
		_, _, err := e.box.Put(e.ctx, cb, now, now)
		require.NoError(t, err)
	}
	post := func(id string, n int, last outbox.State, status int) {
		for i := 0; i < n; i++ {
			at := now.Add(time.Duration(i) * time.Second)
			_, taken, err := e.box.Begin(e.ctx, outbox.Entry{Kind: outbox.Callback, Key: id}, at, time.Minute)
			require.NoError(t, err)
			require.True(t, taken)
			o := outbox.Outcome{State: outbox.Pending, NextAt: at.Add(time.Minute),
				Attempt: &outbox.Attempt{At: at, Status: status, Error: "status_" + string(rune('0'+status/100))}}
			if i == n-1 {
				o.State = last
			}
			_, err = e.box.Finish(e.ctx, outbox.Callback, id, o, at)
			require.NoError(t, err)
		}
	}
	post(ids[0], 2, outbox.Pending, 503)
	post(ids[1], 3, outbox.Pending, 404)
	post(ids[2], 1, outbox.Failed, 500)
	// ids[3] is pending, never posted; ids[4] failed once to another host.
	post(ids[4], 1, outbox.Pending, 502)

	s := e.read(t)
	require.Equal(t, 4, s.Telegram.Pending)
	require.Equal(t, 2, s.Telegram.Due, "the ones due and free")
	require.Equal(t, 2, s.Telegram.Failing, "tried and not sent, or taken by a sender that never finished, and free")
	require.Equal(t, now.Add(-9*time.Minute), s.Telegram.OldestDue)

	cb := s.Callbacks
	require.Equal(t, 4, cb.Pending)
	require.Equal(t, 3, cb.Failing)
	require.Equal(t, 1, cb.Failed)
	require.Len(t, cb.Endpoints, 2)
	require.Equal(t, status.Endpoint{Host: "hooks.example.com:8443", Failures: 6, Callbacks: 3, LastError: "status_4",
		LastStatus: 404, LastAt: now.Add(2 * time.Second)}, cb.Endpoints[0], "the most failed POSTs first")
	require.Equal(t, "ok.example.net", cb.Endpoints[1].Host)

	out, err := json.Marshal(s)
	require.NoError(t, err)
	require.NotContains(t, string(out), "s3cr3t", "a callback URL's path and query stay out of the status")
}

func TestWindows(t *testing.T) {
	w := status.Windows{RequestLength: 10 * time.Minute, RequestLimit: 71}
	require.Equal(t, status.RequestWindow{Start: time.Date(2026, 1, 1, 10, 10, 0, 0, time.UTC),
		End: time.Date(2026, 1, 1, 10, 20, 0, 0, time.UTC), Limit: 71}, w.Request(time.Date(2026, 1, 1, 10, 19, 59, 0, time.UTC)))
	require.Equal(t, status.RequestWindow{}, status.Windows{}.Request(start), "no request windows")
}

// The converted jobs are read up to the cap too: past it, more may wait
// for the quota than were seen.
func TestQuotaWaitPastTheCap(t *testing.T) {
	e := newEnv(t)
	e.cfg.Cap = 2
	for i := 0; i < 2; i++ {
		// Put off, as a quota wait does, but due before the held job's
		// claim ends.
		e.move(t, e.upload(t), job.Next{After: job.Ingest.Lease / 2}, job.Created, job.Converted)
	}
	held := e.move(t, e.upload(t), job.Next{Keep: true}, job.Created, job.Converted) // due latest: read first
	s := e.read(t)
	require.Equal(t, 1, s.QuotaWait.Jobs, "of the two read, one waits")
	require.True(t, s.QuotaWait.More, "a third converted job was not read")
	require.NotEqual(t, held.ID, s.QuotaWait.OldestID)
}
