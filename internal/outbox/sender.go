package outbox

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"transcriber/internal/job"
)

// RecordTimeout bounds recording an outcome after the caller's context
// ended: unrecorded, a sent message is sent again after its lease.
const RecordTimeout = 5 * time.Second

// Stop, returned by a sweep's send, ends the sweep without an error.
var Stop = errors.New("stop the sweep")

// Sender is the lease dance of one kind's senders: sweep, record, retry.
type Sender struct {
	Store Store
	Kind  Kind
	Now   func() time.Time
	Lease time.Duration
	Log   *slog.Logger
}

// Record finishes key with o, even after ctx ended (RecordTimeout).
func (s Sender) Record(ctx context.Context, key string, o Outcome) (Entry, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), RecordTimeout)
	defer cancel()
	return s.Store.Finish(ctx, s.Kind, key, o, s.Now())
}

// Finish is Record that logs a failure.
func (s Sender) Finish(ctx context.Context, key string, o Outcome) {
	if _, err := s.Record(ctx, key, o); err != nil {
		s.Log.WarnContext(ctx, "outcome not recorded", "kind", string(s.Kind), "key", key, "error", err.Error())
	}
}

// Retry leaves key pending, due after wait.
func (s Sender) Retry(ctx context.Context, key string, wait time.Duration) {
	s.Finish(ctx, key, Outcome{State: Pending, NextAt: s.Now().Add(wait)})
}

// Sweep claims due entries one at a time, so a lease covers only the send
// in hand, and hands each to send, which records its outcome and reports
// whether it delivered. It ends when none is due, when ctx has less than
// the lease and budget left, or when send fails (Stop: without error).
func (s Sender) Sweep(ctx context.Context, budget time.Duration, send func(context.Context, Entry) (bool, error)) (int, error) {
	n := 0
	for ctx.Err() == nil {
		if dl, ok := ctx.Deadline(); ok && dl.Sub(s.Now()) < s.Lease+budget {
			break
		}
		due, err := s.Store.ClaimDue(ctx, s.Kind, s.Now(), s.Lease, 1)
		if err != nil || len(due) == 0 {
			return n, err
		}
		ok, err := send(ctx, due[0])
		if ok {
			n++
		}
		if errors.Is(err, Stop) {
			break
		}
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// Job reads e's job for a sweep; ok is false when it recorded e instead:
// failed for a job gone or deleted, due in a minute (and err) for a read
// that failed.
func (s Sender) Job(ctx context.Context, jobs interface {
	Get(context.Context, string) (job.Job, error)
}, e Entry) (j job.Job, ok bool, err error) {
	j, err = jobs.Get(ctx, e.JobID)
	switch {
	case errors.Is(err, job.ErrNotFound) || (err == nil && j.Deleted()):
		s.Finish(ctx, e.Key, Outcome{State: Failed})
		return j, false, nil
	case err != nil:
		s.Retry(ctx, e.Key, time.Minute)
		return j, false, err
	}
	return j, true, nil
}
