package loadsim

import (
	"context"
	"fmt"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"transcriber/internal/errs"
	"transcriber/internal/speechkit"
	"transcriber/internal/spend"
	"transcriber/internal/transcript"
)

// Recognizer is a pipeline.Recognizer that answers as SpeechKit's
// asynchronous recognition is documented to: a recognition is done
// PerMinute for each minute of its audio after it was submitted, plus
// Fixed ("It takes about 10 seconds to recognize one minute of
// single-channel audio", https://yandex.cloud/en/docs/speechkit/stt/transcribation;
// the fixed part is a guess for queueing), every recognition side by side,
// and at most ChecksPerSecond status checks are answered in any second
// ("5 operation-status checks per second", API v3,
// https://yandex.cloud/en/docs/speechkit/concepts/limits), a closed one:
// six checks 1 s apart count as six in a second, the stricter reading of
// a count SpeechKit does not document. A check past
// that is refused with RESOURCE_EXHAUSTED, as the client reports it
// (errCheckRate); a refused check does not count against the rate. How
// SpeechKit refuses is not documented: this is the gRPC code for a quota. The request quota of 500 an hour is not enforced here:
// the pipeline keeps it with its own counters, and the simulation counts
// what was submitted when (Submissions) to show it did.
type Recognizer struct {
	sched   *Sched
	objects *Objects
	// PerMinute is the time a minute of audio takes; Fixed is added to
	// every recognition.
	PerMinute, Fixed time.Duration
	// ChecksPerSecond bounds the status checks answered in any second; 0
	// answers every one.
	ChecksPerSecond int
	// SyncPerMinute and SyncFixed are how long a synchronous request
	// takes to answer (Config.SyncPerMinute); SyncPerSecond bounds the
	// synchronous requests answered in any closed second, 0 none.
	SyncPerMinute, SyncFixed time.Duration
	SyncPerSecond            int

	mu       sync.Mutex
	ops      map[string]recognition
	made     int
	running  []time.Time // when the recognitions not done yet are done
	answered []time.Time // the checks answered in the last second, its start included
	offered  []time.Time // the checks made in the last second, refused ones too

	submitted    []time.Time
	checks       int
	refused      int
	firstRefused time.Time
	peakChecks   int // most checks made in any second, refused ones included
	peakRunning  int // most recognitions running at once

	syncs       []time.Time // when each synchronous request was sent
	syncOffered []time.Time // the synchronous requests of the last second
	syncRefused int
	peakSyncs   int // most synchronous requests in any second
}

type recognition struct {
	doneAt     time.Time
	durationMs int64
}

// errCheckRate is the error speechkit.Client.Check returns for a
// RESOURCE_EXHAUSTED answer: transient, with its code and message
// (TestCheckRateErrorIsTheClients compares them).
func errCheckRate() error {
	return errs.Wrap(status.Error(codes.ResourceExhausted, "too many operation checks in a second"),
		errs.Unavailable, speechkit.CodeCheckQuota, "the speech recognizer is asked too often for now; the recognition is checked again later")
}

// Submit starts a recognition of the audio at the request's URI.
func (r *Recognizer) Submit(_ context.Context, req speechkit.Request) (string, error) {
	ob, ok := r.objects.get(keyOf(req.URI))
	if !ok || ob.durationMs <= 0 {
		return "", errs.New(errs.Permanent, speechkit.CodeRejected, "the recognizer could not process this audio")
	}
	now := r.sched.Now()
	took := time.Duration(float64(r.PerMinute) * float64(ob.durationMs) / float64(time.Minute.Milliseconds()))
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ops == nil {
		r.ops = map[string]recognition{}
	}
	r.made++
	id := fmt.Sprintf("sim-op-%d", r.made)
	rec := recognition{doneAt: now.Add(took + r.Fixed), durationMs: ob.durationMs}
	r.ops[id] = rec
	r.submitted = append(r.submitted, now)
	r.running = append(dropUntil(r.running, now), rec.doneAt)
	r.peakRunning = max(r.peakRunning, len(r.running))
	return id, nil
}

// RecognizeSync answers a synchronous request as the model takes
// SpeechKit's synchronous recognition to: after SyncFixed and SyncPerMinute
// a minute of its audio (Config.SyncPerMinute says why), the text of a
// recording of the request's length; past SyncPerSecond requests in a
// second, at once with 429 as the client reports it (speechkit's
// CodeSyncQuota). Its requests do not count against the asynchronous
// quota, nor run among the recognitions in flight.
func (r *Recognizer) RecognizeSync(ctx context.Context, req speechkit.SyncRequest) (speechkit.SyncResult, error) {
	now := r.sched.Now()
	r.mu.Lock()
	r.syncs = append(r.syncs, now)
	r.syncOffered = append(keepSince(r.syncOffered, now.Add(-time.Second)), now)
	r.peakSyncs = max(r.peakSyncs, len(r.syncOffered))
	over := r.SyncPerSecond > 0 && len(r.syncOffered) > r.SyncPerSecond
	if over {
		r.syncRefused++
	}
	r.mu.Unlock()
	if over {
		return speechkit.SyncResult{}, errs.New(errs.Unavailable, speechkit.CodeSyncQuota, "the synchronous quota of the second is used up")
	}
	took := r.SyncFixed + time.Duration(float64(r.SyncPerMinute)*float64(req.DurationMs)/float64(time.Minute.Milliseconds()))
	if err := r.sched.Sleep(ctx, took); err != nil {
		return speechkit.SyncResult{}, errs.Wrap(err, errs.Unavailable, speechkit.CodeUnavailable, "the speech recognizer did not answer")
	}
	return speechkit.SyncResult{DurationMs: req.DurationMs, BilledSeconds: spend.SyncBilledSeconds(req.DurationMs, 1)}, nil
}

// SyncRequests returns when each synchronous request was sent, in order.
func (r *Recognizer) SyncRequests() []time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]time.Time(nil), r.syncs...)
}

// dropUntil keeps the times in ts after now.
func dropUntil(ts []time.Time, now time.Time) []time.Time {
	kept := ts[:0]
	for _, t := range ts {
		if t.After(now) {
			kept = append(kept, t)
		}
	}
	return kept
}

// keepSince keeps the times in ts from since on, since included.
func keepSince(ts []time.Time, since time.Time) []time.Time {
	kept := ts[:0]
	for _, t := range ts {
		if !t.Before(since) {
			kept = append(kept, t)
		}
	}
	return kept
}

// Check reports whether the recognition is done, or refuses a check past
// the rate.
func (r *Recognizer) Check(_ context.Context, id string) (bool, error) {
	now := r.sched.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.checks++
	r.offered = append(keepSince(r.offered, now.Add(-time.Second)), now)
	r.peakChecks = max(r.peakChecks, len(r.offered))
	r.answered = keepSince(r.answered, now.Add(-time.Second))
	if r.ChecksPerSecond > 0 && len(r.answered) >= r.ChecksPerSecond {
		if r.refused == 0 {
			r.firstRefused = now
		}
		r.refused++
		return false, errCheckRate()
	}
	r.answered = append(r.answered, now)
	rec, ok := r.ops[id]
	if !ok {
		return false, errs.New(errs.Permanent, speechkit.CodeExpired, "the recognition result is no longer available")
	}
	return !now.Before(rec.doneAt), nil
}

// Result returns an empty transcript of the recognition's length.
func (r *Recognizer) Result(_ context.Context, id string) (transcript.Transcript, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rec, ok := r.ops[id]
	if !ok {
		return transcript.Transcript{}, errs.New(errs.Permanent, speechkit.CodeExpired, "the recognition result is no longer available")
	}
	return transcript.Transcript{DurationMs: rec.durationMs}, nil
}

// Delete forgets the recognition.
func (r *Recognizer) Delete(_ context.Context, id string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.ops, id)
	return nil
}

// Submissions returns when each recognition was submitted, in order.
func (r *Recognizer) Submissions() []time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]time.Time(nil), r.submitted...)
}
