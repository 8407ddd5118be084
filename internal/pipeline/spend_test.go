package pipeline_test

import (
	"context"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/errs"
	"transcriber/internal/job"
	"transcriber/internal/media/ffmpeg"
	"transcriber/internal/media/oggopus/oggtest"
	"transcriber/internal/pipeline"
	"transcriber/internal/racetest"
	"transcriber/internal/spend"
)

// passMedia probes every source as durationMs of audio, converted as one
// segment that holds what the probe said.
type passMedia struct {
	pipeline.Media
	durationMs int64
}

func (m passMedia) Probe(context.Context, string) (ffmpeg.Probe, error) {
	return ffmpeg.Probe{Container: "ogg", DurationMs: m.durationMs}, nil
}

func (m passMedia) PlanFor(pr ffmpeg.Probe, _ bool) (ffmpeg.Plan, error) {
	return ffmpeg.Plan{Container: "OGG_OPUS", Segments: []ffmpeg.Segment{{DurationMs: pr.DurationMs}}}, nil
}

func (m passMedia) ConvertMono(ctx context.Context, input string, seg ffmpeg.Segment, w io.Writer) error {
	return m.Convert(ctx, input, seg, w)
}

func (m passMedia) Convert(_ context.Context, _ string, seg ffmpeg.Segment, w io.Writer) error {
	_, err := w.Write(oggtest.Synth(seg.DurationMs, 0))
	return err
}

// presignObjects signs reads, takes uploads (reading them to the end) and
// names objects by URI: all that prepare and submission ask of storage.
type presignObjects struct{ uriObjects }

func (presignObjects) Upload(_ context.Context, _ string, r io.Reader, _ string) (int64, error) {
	return io.Copy(io.Discard, r)
}

func (presignObjects) PresignGet(_ context.Context, key string, _ time.Duration) (string, error) {
	return "https://storage.example/bucket/" + key + "?signed", nil
}

// spendPipeline is a pipeline on e's store and counters with limits, whose
// media says every recording is durationMs long.
func (e *quotaEnv) spendPipeline(rec pipeline.Recognizer, durationMs int64, l spend.Limits) *pipeline.Pipeline {
	return pipeline.New(pipeline.Deps{
		Store: e.st, Objects: presignObjects{}, Media: passMedia{durationMs: durationMs}, Recognizer: rec, Clock: e.clk, Log: quiet(),
		Sleep: func(_ context.Context, d time.Duration) error { e.clk.Advance(d); return nil },
	}, pipeline.Config{Counters: e.counters, Limits: l, InlineCheckMax: time.Nanosecond})
}

// accepted makes a job charged to payer whose source is accepted (state
// created): ingest takes it at the probe.
func (e *quotaEnv) accepted(t *testing.T, payer string) job.Job {
	t.Helper()
	j, err := e.st.Create(e.ctx, job.Draft{Source: job.SourceAPI, OwnerID: "o", ChargedTo: payer, Filename: "a.ogg", SizeBytes: 10})
	require.NoError(t, err)
	j, err = e.st.Claim(e.ctx, j.ID, job.Ingest)
	require.NoError(t, err)
	j.State = job.Created
	j, err = e.st.Save(e.ctx, j, job.Next{})
	require.NoError(t, err)
	return j
}

var today = time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)

func (e *quotaEnv) used(t *testing.T, key string, window time.Time) int64 {
	t.Helper()
	n, err := e.counters.Used(e.ctx, key, window)
	require.NoError(t, err)
	return n
}

func (e *quotaEnv) dayUsed(t *testing.T, payer string) int64 {
	return e.used(t, spend.DayKey(payer), today)
}

func (e *quotaEnv) monthUsed(t *testing.T) int64 {
	return e.used(t, spend.MonthKey, time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
}

// ingest runs ingest on a job charged to payer, durationMs long, and
// returns it as stored.
func (e *quotaEnv) ingest(t *testing.T, p *pipeline.Pipeline, payer string) job.Job {
	t.Helper()
	j := e.accepted(t, payer)
	require.NoError(t, p.Uploaded(e.ctx, job.SourceKey(j.ID)))
	return e.get(t, j.ID)
}

func requireRefused(t *testing.T, j job.Job, says ...string) {
	t.Helper()
	require.Equal(t, job.Failed, j.State)
	require.Equal(t, spend.CodeQuotaExceeded, j.ErrorCode)
	for _, s := range says {
		require.Contains(t, j.ErrorMessage, s)
	}
	require.Zero(t, j.ReservedSeconds, "nothing is recorded as reserved")
	for _, sg := range j.Segments {
		require.Empty(t, sg.OperationID)
	}
}

// A day limit of 60 s takes a 60 s recording and refuses one of 61 s,
// which never reaches the recognizer and is not counted; its message says
// what is left and when the limit resets.
func TestTheDayLimitRefusesAtItsEdge(t *testing.T) {
	e := newQuotaEnv(t)
	l := spend.Limits{AudioPerDay: time.Minute}

	rec := &submitRecognizer{}
	j := e.ingest(t, e.spendPipeline(rec, 60_000, l), "tok:a")
	require.Equal(t, job.Transcribe, j.State, "60 s fits a 60 s day")
	require.Equal(t, int64(60), j.ReservedSeconds)
	require.Equal(t, today, j.ReservedDay)
	require.Equal(t, 1, rec.count())
	require.Equal(t, int64(60), e.dayUsed(t, "tok:a"))

	rec = &submitRecognizer{}
	j = e.ingest(t, e.spendPipeline(rec, 61_000, l), "tok:b")
	requireRefused(t, j, "this recording is billed as 1 min 01 s", "; 1 min of today's 1 min billed is left", "resets at 00:00 UTC")
	require.Zero(t, rec.count(), "a refused job never reaches the recognizer")
	require.Zero(t, e.dayUsed(t, "tok:b"), "what it would have used is not counted")
	require.Equal(t, int64(60), e.monthUsed(t), "nor on the month")

	j = e.ingest(t, e.spendPipeline(rec, 1_000, l), "tok:a")
	requireRefused(t, j, "billed as 15 s; 0 s of today's 1 min billed is left")
	require.Zero(t, rec.count())

	e.clk.Set(today.Add(24 * time.Hour))
	j = e.ingest(t, e.spendPipeline(rec, 60_000, l), "tok:a")
	require.Equal(t, job.Transcribe, j.State, "a new UTC day has its own limit")
}

// The month limit is the installation's: two payers share it, and an
// exempt user is bound by it too.
func TestTheMonthLimitIsShared(t *testing.T) {
	e := newQuotaEnv(t)
	l := spend.Limits{AudioPerDay: time.Hour, AudioPerMonth: 100 * time.Second, Exempt: map[int64]bool{42: true}}
	rec := &submitRecognizer{}
	require.Equal(t, job.Transcribe, e.ingest(t, e.spendPipeline(rec, 50_000, l), "tok:a").State)
	require.Equal(t, job.Transcribe, e.ingest(t, e.spendPipeline(rec, 50_000, l), "tgu:42").State, "100 s of 100 s")
	j := e.ingest(t, e.spendPipeline(rec, 1_000, l), "tgu:42")
	requireRefused(t, j, "of this month's 1 min 40 s billed for the whole service is left", "resets at 1 December 2026, 00:00 UTC")
	require.Equal(t, 2, rec.count())
	require.Equal(t, int64(100), e.monthUsed(t))
	require.Equal(t, int64(50), e.dayUsed(t, "tgu:42"), "the refused job's day reservation was given back")
}

// An exempt Telegram user is not bound by the day limit, but is counted.
func TestAnExemptUserSkipsTheDayLimit(t *testing.T) {
	e := newQuotaEnv(t)
	l := spend.Limits{AudioPerDay: time.Minute, Exempt: map[int64]bool{42: true}}
	rec := &submitRecognizer{}
	require.Equal(t, job.Transcribe, e.ingest(t, e.spendPipeline(rec, 90_000, l), "tgu:42").State)
	require.Equal(t, job.Transcribe, e.ingest(t, e.spendPipeline(rec, 90_000, l), "tgu:42").State)
	require.Equal(t, int64(180), e.dayUsed(t, "tgu:42"), "counted, with no limit")
	requireRefused(t, e.ingest(t, e.spendPipeline(rec, 90_000, l), "tgu:43"))
	require.Equal(t, 2, rec.count())
}

// A job that fails before anything was submitted gives its reservation
// back; a job whose audio was submitted keeps it.
func TestAFailureBeforeSubmissionReleases(t *testing.T) {
	e := newQuotaEnv(t)
	l := spend.Limits{AudioPerDay: time.Minute}
	rec := &submitRecognizer{submitErr: errs.New(errs.Permanent, "bad_audio", "the recognizer refused the audio")}
	j := e.ingest(t, e.spendPipeline(rec, 60_000, l), "tok:a")
	require.Equal(t, job.Failed, j.State)
	require.Equal(t, "bad_audio", j.ErrorCode)
	require.Equal(t, int64(60), j.ReservedSeconds, "the job records what it had reserved")
	require.Zero(t, e.dayUsed(t, "tok:a"), "and it is released")
	require.Zero(t, e.monthUsed(t))

	rec = &submitRecognizer{}
	p := e.spendPipeline(rec, 60_000, l)
	j = e.ingest(t, p, "tok:a")
	require.Equal(t, job.Transcribe, j.State, "the day is free again")

	// Its recognition then fails for good: what was submitted is kept.
	c, err := e.st.Claim(e.ctx, j.ID, job.Poll)
	require.NoError(t, err)
	_, err = job.Settle(e.ctx, e.st, job.DefaultPolicy, c, errs.New(errs.Permanent, "x", "x"))
	require.NoError(t, err)
	require.Equal(t, int64(60), e.dayUsed(t, "tok:a"))
}

// convertMedia converts every source into one piece; its first failures
// conversions fail as may pass.
type convertMedia struct {
	passMedia
	mu       sync.Mutex
	failures int
}

func (m *convertMedia) PlanFor(pr ffmpeg.Probe, _ bool) (ffmpeg.Plan, error) {
	return ffmpeg.Plan{Container: "OGG_OPUS", Segments: []ffmpeg.Segment{{DurationMs: pr.DurationMs}}}, nil
}

func (m *convertMedia) Convert(ctx context.Context, input string, seg ffmpeg.Segment, w io.Writer) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.failures > 0 {
		m.failures--
		return errs.New(errs.Unavailable, "convert_failed", "the conversion failed")
	}
	return m.passMedia.Convert(ctx, input, seg, w)
}

// A retried ingest does not reserve again: the reservation is recorded
// with the save after the probe, before the conversion that fails here.
func TestARetriedIngestReservesOnce(t *testing.T) {
	e := newQuotaEnv(t)
	rec := &submitRecognizer{}
	media := &convertMedia{passMedia: passMedia{durationMs: 40_000}, failures: 1}
	p := pipeline.New(pipeline.Deps{
		Store: e.st, Objects: presignObjects{}, Media: media, Recognizer: rec, Clock: e.clk, Log: quiet(),
		Sleep: func(_ context.Context, d time.Duration) error { e.clk.Advance(d); return nil },
	}, pipeline.Config{Counters: e.counters, Limits: spend.Limits{AudioPerDay: time.Minute}, InlineCheckMax: time.Nanosecond})
	j := e.ingest(t, p, "tok:a")
	require.Equal(t, job.Created, j.State, "released for another attempt")
	require.Equal(t, "convert_failed", j.ErrorCode)
	require.Equal(t, int64(40), j.ReservedSeconds)
	require.Equal(t, int64(40), e.dayUsed(t, "tok:a"))

	e.clk.Advance(time.Minute)
	require.NoError(t, p.Uploaded(e.ctx, job.SourceKey(j.ID)))
	require.Equal(t, job.Transcribe, e.get(t, j.ID).State)
	require.Equal(t, 1, rec.count())
	require.Equal(t, int64(40), e.dayUsed(t, "tok:a"), "reserved once")
}

// 16 ingests of 20 s jobs at once against a 200 s day: exactly 10 are
// submitted, the others refused, and the counter holds 200.
func TestConcurrentIngestsKeepTheDayLimit(t *testing.T) {
	e := newQuotaEnv(t)
	l := spend.Limits{AudioPerDay: 200 * time.Second}
	rec := &submitRecognizer{}
	p := e.spendPipeline(rec, 20_000, l)
	var jobs []job.Job
	for i := 0; i < 16; i++ {
		jobs = append(jobs, e.accepted(t, "tok:a"))
	}
	failures := make([]error, len(jobs))
	racetest.Run(len(jobs), func(i int) { failures[i] = p.Uploaded(e.ctx, job.SourceKey(jobs[i].ID)) })
	for _, err := range failures {
		require.NoError(t, err)
	}
	require.Equal(t, 10, rec.count(), "exactly 10 of 16 are submitted")
	require.Equal(t, int64(200), e.dayUsed(t, "tok:a"))
	states := map[job.State]int{}
	for _, j := range jobs {
		got := e.get(t, j.ID)
		states[got.State]++
		if got.State == job.Failed {
			require.Equal(t, spend.CodeQuotaExceeded, got.ErrorCode)
		}
	}
	require.Equal(t, map[job.State]int{job.Transcribe: 10, job.Failed: 6}, states)
}

// Without counters nothing is counted or refused.
func TestNoLimitsWithoutCounters(t *testing.T) {
	e := newQuotaEnv(t)
	rec := &submitRecognizer{}
	p := pipeline.New(pipeline.Deps{
		Store: e.st, Objects: presignObjects{}, Media: passMedia{durationMs: 120_000}, Recognizer: rec, Clock: e.clk, Log: quiet(),
		Sleep: func(_ context.Context, d time.Duration) error { e.clk.Advance(d); return nil },
	}, pipeline.Config{Limits: spend.Limits{AudioPerDay: time.Minute}, InlineCheckMax: time.Nanosecond})
	j := e.ingest(t, p, "tok:a")
	require.Equal(t, job.Transcribe, j.State)
	require.Zero(t, j.ReservedSeconds)
}

// 50 ingests of 10 s jobs at once against a budget of 3 ₽ at the default
// prices (0.1515 ₽ a job, billed 15 s): exactly 19 are submitted, the
// others refused budget_exceeded, and the money counted never passes the
// budget.
func TestConcurrentIngestsKeepTheBudget(t *testing.T) {
	e := newQuotaEnv(t)
	l := spend.Limits{BudgetPerMonth: 3_000_000, Prices: spend.DefaultPrices}
	rec := &submitRecognizer{}
	p := e.spendPipeline(rec, 10_000, l)
	var jobs []job.Job
	for i := range 50 {
		jobs = append(jobs, e.accepted(t, spend.API(fmt.Sprint("t", i%7))))
	}
	failures := make([]error, len(jobs))
	racetest.Run(len(jobs), func(i int) { failures[i] = p.Uploaded(e.ctx, job.SourceKey(jobs[i].ID)) })
	for _, err := range failures {
		require.NoError(t, err)
	}
	require.Equal(t, 19, rec.count(), "19 × 0.1515 ₽ fit 3 ₽; a 20th would not")
	month := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	require.Equal(t, int64(19*151_500), e.used(t, spend.BudgetKey, month))
	refused := 0
	for _, j := range jobs {
		if got := e.get(t, j.ID); got.State == job.Failed {
			require.Equal(t, spend.CodeBudgetExceeded, got.ErrorCode)
			refused++
		}
	}
	require.Equal(t, 31, refused)
}
