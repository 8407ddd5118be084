// Package loadsim runs the service's ingest and poll use cases under a
// load, on a simulated clock, to find which limit of the platform a load
// meets first and what it does to the time a transcript takes.
//
// What is real: the pipeline (pipeline.New, Uploaded for each upload's
// event, Poll for each tick of the timer), the embedded job store and
// usage counters (SQLite, in a directory the caller gives), the retry
// policy, the request quota's pacing and the check limiter, all with
// their defaults. What is simulated, at the platform's documented
// defaults (docs/platform.md): SpeechKit (Recognizer: 10 s per minute of
// audio, 5 status checks a second; its synchronous door at 20 requests a
// second, with a service time the model states), Object Storage
// (Objects, in memory),
// ffmpeg (Media: a probe's time, and conversion at a speed proportional
// to the audio), and Cloud Functions: at most CallSlots calls at once for
// all functions, each living at most CallTimeout, the poll function
// called by its timer every PollEvery.
//
// Time is the Sched's: it passes only while every call waits on it, so a
// day of service time runs in seconds and the same load gives the same
// figures every run. Store calls take no service time; their request
// units in YDB are estimated from docs/database.md.
package loadsim

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"transcriber/internal/job"
	"transcriber/internal/media/ffmpeg"
	"transcriber/internal/pipeline"
	"transcriber/internal/speechkit"
	"transcriber/internal/spend"
	"transcriber/internal/store/sqlite"
)

// Recording is one job of the load: uploaded At after the start, Duration
// long, a voice note (OGG/Opus, one channel) or a recording in M4A. Each
// is made a fast job, as the bot makes a chat's recordings: one of at most
// SyncMaxDuration is recognized synchronously, a voice note sent as it is
// (checked, not probed or converted), an M4A converted; a longer one is
// converted, as every recording.
type Recording struct {
	Class    string
	At       time.Duration
	Duration time.Duration
	Voice    bool
}

// Config is an installation and its load. Zero fields take the
// platform's defaults (see Defaults).
type Config struct {
	Mode       Mode
	Recordings []Recording
	// Dir is where the embedded store's file goes.
	Dir string
	// Start is when the run starts; default 2026-12-07 09:00 UTC, a
	// Monday, at the start of a window of the request quota.
	Start time.Time
	// CallSlots is how many function calls run at once: Cloud Functions'
	// quota of concurrent calls "for all functions in each availability
	// zone" is 10, and calls may all land in one zone
	// (https://yandex.cloud/en/docs/functions/concepts/limits). A call
	// past it waits for one to end (the platform queues calls, and a
	// queued one counts against the quota: the same page, older edition).
	CallSlots int
	// CallTimeout is the most a call lives: the ingest and poll functions'
	// timeout, 600 s (docs/deploy.md, "Function sizes").
	CallTimeout time.Duration
	// PollEvery is the poll function's timer: every minute.
	PollEvery time.Duration
	// RequestsPerHour is SpeechKit's quota of recognition requests, kept
	// by the pipeline (pipeline.Config.RequestsPerHour): 500.
	RequestsPerHour int
	// ChecksPerSecond is how many status checks SpeechKit answers in a
	// second: 5.
	ChecksPerSecond int
	// PerMinute and Fixed are how long a recognition takes: PerMinute per
	// minute of audio, plus Fixed. 10 s and 3 s.
	PerMinute, Fixed time.Duration
	// NoSync turns synchronous recognition off (SPEECHKIT_SYNC_MAX_DURATION
	// 0): every job goes the asynchronous way, as before the synchronous
	// door. Otherwise a fast job of at most SyncMaxDuration (30 s) is
	// recognized synchronously.
	NoSync          bool
	SyncMaxDuration time.Duration
	// SyncPerMinute and SyncFixed are how long a synchronous request
	// takes to answer: SyncPerMinute per minute of audio, plus SyncFixed.
	// SpeechKit documents no response time for it [U]: the model takes
	// asynchronous recognition's 10 s a minute ([C] for that API) and
	// 300 ms for the request's round trip, so 30 s of audio answers in
	// 5.3 s, 6 s in 1.3 s.
	SyncPerMinute, SyncFixed time.Duration
	// SyncPerSecond is how many synchronous requests SpeechKit answers in
	// a second: 20 ([C], speechkit/concepts/limits); one past it is
	// answered 429. The pipeline keeps to it itself (TakeSyncPlace).
	SyncPerSecond int
	// ConvertSpeed is how many times faster than real time ffmpeg
	// converts: 95, half the 190 measured on the two-core development
	// machine (docs/settings.md, "Measured: media"), since a function of
	// 1 GB has about half a CPU (docs/deploy.md, "Function sizes").
	ConvertSpeed float64
	// ProbeTime is how long a probe takes: 150 ms, as measured for a
	// voice note (docs/settings.md, "Measured: media").
	ProbeTime time.Duration
	// StoreLatency is each store call's round trip: 10 ms, a guess for
	// serverless YDB from a function in the same region (its latency is
	// not documented); what each call costs there is estimated apart
	// (Report.RUPerJob).
	StoreLatency time.Duration
	// UploadWindow is an API job's upload window: the URL's 15 min and 2 h
	// (docs/settings.md).
	UploadWindow time.Duration
	// Horizon ends a run that has not finished by then; default 48 h.
	Horizon time.Duration
}

// Defaults returns c with its zero fields set to the platform's defaults.
func (c Config) Defaults() Config {
	if c.Start.IsZero() {
		c.Start = time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)
	}
	set := func(v *time.Duration, d time.Duration) {
		if *v == 0 {
			*v = d
		}
	}
	if c.CallSlots == 0 {
		c.CallSlots = 10
	}
	set(&c.CallTimeout, 10*time.Minute)
	set(&c.PollEvery, time.Minute)
	if c.RequestsPerHour == 0 {
		c.RequestsPerHour = pipeline.DefaultRequestsPerHour
	}
	if c.ChecksPerSecond == 0 {
		c.ChecksPerSecond = 5
	}
	set(&c.PerMinute, 10*time.Second)
	set(&c.Fixed, 3*time.Second)
	set(&c.SyncMaxDuration, speechkit.MaxSyncDuration)
	set(&c.SyncPerMinute, speechkit.DefaultSyncPerMinute)
	set(&c.SyncFixed, speechkit.DefaultSyncFixed)
	if c.SyncPerSecond == 0 {
		c.SyncPerSecond = speechkit.SyncRequestsPerSecond
	}
	if c.ConvertSpeed == 0 {
		c.ConvertSpeed = 95
	}
	set(&c.ProbeTime, 150*time.Millisecond)
	set(&c.StoreLatency, 10*time.Millisecond)
	set(&c.UploadWindow, 2*time.Hour+15*time.Minute)
	set(&c.Horizon, 48*time.Hour)
	return c
}

// requestsKey is the pipeline's counter of recognition requests
// (submissionsKey in internal/pipeline): a reservation of it that fails is
// a submission the quota held back.
const requestsKey = "speechkit_requests"

// sim is one run.
type sim struct {
	cfg      Config
	sched    *Sched
	slots    *Slots
	store    *countingStore
	counters *countingCounters
	objects  *Objects
	media    *Media
	rec      *Recognizer
	log      *slog.Logger
	close    func() error

	mu    sync.Mutex
	jobs  map[string]*tracked
	order []*tracked // the jobs in the order they were made
	ended int
	err   error
	calls map[string]*callStats
}

// tracked is what the run knows of one job.
type tracked struct {
	rec       Recording
	submitted time.Time
	ended     time.Time
	state     job.State
	code      string // the error code of a job that failed
	sync      bool   // recognized synchronously
	// cost is what SpeechKit bills for the job done, at the default
	// prices (spend.Limits.Cost).
	cost spend.Charge
}

// callStats adds up one function's calls.
type callStats struct {
	n       int
	busy    time.Duration
	longest time.Duration
	failed  int // calls that returned an error: the platform would retry their event
}

// Run runs the load and reports what happened.
func Run(cfg Config) (Report, error) {
	s, err := start(cfg)
	if err != nil {
		return Report{}, err
	}
	r, err := s.wait()
	if cerr := s.close(); err == nil && cerr != nil {
		err = fmt.Errorf("loadsim: close the store: %w", cerr)
	}
	return r, err
}

// start opens the run's store and starts its load.
func start(cfg Config) (*sim, error) {
	cfg = cfg.Defaults()
	if cfg.Dir == "" {
		return nil, fmt.Errorf("loadsim: no directory for the store")
	}
	sched := NewSched(cfg.Start)
	db, err := sqlite.Open(context.Background(), filepath.Join(cfg.Dir, "loadsim.db"), sched)
	if err != nil {
		return nil, err
	}
	s := &sim{
		cfg: cfg, sched: sched, slots: NewSlots(sched, cfg.CallSlots), close: db.Close,
		store:    newCountingStore(sqlite.NewJobStore(db), sched, cfg.StoreLatency),
		counters: &countingCounters{Counters: sqlite.NewCounters(db), clock: sched, latency: cfg.StoreLatency, requestKey: requestsKey},
		log:      slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelError + 1})),
		jobs:     map[string]*tracked{}, calls: map[string]*callStats{},
	}
	s.media = &Media{sched: sched, plan: planner(cfg.Mode), ProbeTime: cfg.ProbeTime, Speed: cfg.ConvertSpeed}
	s.objects = NewObjects(sched, s.media)
	s.media.objects = s.objects
	s.rec = &Recognizer{sched: sched, objects: s.objects, PerMinute: cfg.PerMinute, Fixed: cfg.Fixed, ChecksPerSecond: cfg.ChecksPerSecond,
		SyncPerMinute: cfg.SyncPerMinute, SyncFixed: cfg.SyncFixed, SyncPerSecond: cfg.SyncPerSecond}
	sched.Go(func() {
		sched.Go(s.submitAll)
		sched.Go(s.timer)
	})
	return s, nil
}

// wait waits for the run to end and reports it.
func (s *sim) wait() (Report, error) {
	select {
	case <-s.sched.Idle():
	case <-time.After(10 * time.Minute):
		return Report{}, fmt.Errorf("loadsim: the run did not end in 10 minutes of real time (at %s of service time)",
			s.sched.Now().Sub(s.cfg.Start))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return Report{}, s.err
	}
	return s.report(), nil
}

// pipeline is one function instance's pipeline: each has its own check
// limiter, as each instance of a function does.
func (s *sim) pipeline() *pipeline.Pipeline {
	syncMax := s.cfg.SyncMaxDuration
	if s.cfg.NoSync {
		syncMax = 0
	}
	return pipeline.New(pipeline.Deps{
		Store: s.store, Objects: s.objects, Media: s.media, Recognizer: s.rec, SyncRecognizer: s.rec, Notifier: s,
		Clock: s.sched, Log: s.log, Sleep: s.sched.Sleep,
	}, pipeline.Config{RequestsPerHour: s.cfg.RequestsPerHour, ChecksPerSecond: s.cfg.ChecksPerSecond, Counters: s.counters,
		JobInFlight: ffmpeg.DefaultMaxPieces, SyncMaxDuration: syncMax})
}

// call runs one call of function fn: it waits for a slot, then runs
// with a context that ends after the call's timeout. A call that fails is
// counted; nothing delivers its event again, since the poll function's
// sweep takes up what such a call left (docs/architecture.md).
func (s *sim) call(fn string, run func(ctx context.Context) error) {
	s.slots.Acquire()
	defer s.slots.Release()
	start := s.sched.Now()
	ctx, end := s.sched.call(s.cfg.CallTimeout)
	err := run(ctx)
	end()
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.calls[fn]
	if st == nil {
		st = &callStats{}
		s.calls[fn] = st
	}
	took := s.sched.Now().Sub(start)
	st.n++
	st.busy += took
	st.longest = max(st.longest, took)
	if err != nil {
		st.failed++
	}
}

func (s *sim) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		s.err = err
	}
}

// submitAll makes each recording's job at its time, as the API does,
// stores its upload, and delivers the upload's event to the ingest
// function.
func (s *sim) submitAll() {
	recs := append([]Recording(nil), s.cfg.Recordings...)
	sort.SliceStable(recs, func(i, k int) bool { return recs[i].At < recs[k].At })
	ctx := context.Background()
	for i, r := range recs {
		if err := s.sched.Until(ctx, s.cfg.Start.Add(r.At)); err != nil {
			s.fail(err)
			return
		}
		ms := r.Duration.Milliseconds()
		container, codec, size := "mov,mp4,m4a,3gp,3g2,mj2", "aac", ms*4 // AAC at 32 kbit/s
		if r.Voice {
			container, codec, size = "ogg", "opus", ms*2 // Opus at 16 kbit/s
		}
		owner := fmt.Sprintf("sim-%d", i%200)
		j, err := s.store.Create(ctx, job.Draft{Source: job.SourceAPI, OwnerID: owner, ChargedTo: "tok:" + owner,
			Filename: fmt.Sprintf("r%d", i), SizeBytes: max(size, 1), UploadWindow: s.cfg.UploadWindow, Priority: job.PriorityFast})
		if err != nil {
			s.fail(fmt.Errorf("loadsim: create job %d: %w", i, err))
			return
		}
		s.objects.PutRecording(job.SourceKey(j.ID), max(size, 1), ms, container, codec)
		s.mu.Lock()
		t := &tracked{rec: r, submitted: s.sched.Now()}
		s.jobs[j.ID] = t
		s.order = append(s.order, t)
		s.mu.Unlock()
		key := job.SourceKey(j.ID)
		s.sched.Go(func() {
			s.call("ingest", func(ctx context.Context) error { return s.pipeline().Uploaded(ctx, key) })
		})
	}
}

// timer calls the poll function every PollEvery, on the minute, until
// every job has ended or the horizon is reached.
func (s *sim) timer() {
	ctx := context.Background()
	next := s.cfg.Start.Truncate(s.cfg.PollEvery).Add(s.cfg.PollEvery)
	for {
		if err := s.sched.Until(ctx, next); err != nil {
			s.fail(err)
			return
		}
		if s.finished() || next.Sub(s.cfg.Start) > s.cfg.Horizon {
			return
		}
		s.sched.Go(func() {
			s.call("poll", func(ctx context.Context) error {
				_, err := s.pipeline().Poll(ctx)
				return err
			})
		})
		next = next.Add(s.cfg.PollEvery)
	}
}

// finished reports whether every recording's job has ended.
func (s *sim) finished() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ended == len(s.cfg.Recordings)
}

// Moved is the pipeline's progress report; the run needs none.
func (s *sim) Moved(context.Context, job.Job) error { return nil }

// Finished records when a job ended, and how.
func (s *sim) Finished(_ context.Context, j job.Job) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.jobs[j.ID]
	if t == nil || !t.ended.IsZero() {
		return nil
	}
	t.ended, t.state, t.code, t.sync = s.sched.Now(), j.State, j.ErrorCode, j.Recognition == job.RecognitionSync
	if j.State == job.Done {
		t.cost = spend.Limits{Prices: spend.DefaultPrices}.Cost(j, 0)
	}
	s.ended++
	return nil
}
