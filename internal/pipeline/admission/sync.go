package admission

import (
	"context"
	"errors"
	"fmt"
	"time"

	"transcriber/internal/job"
	"transcriber/internal/speechkit"
)

// SyncRequests: a place in the synchronous recognizer's quota for the
// current second (speechkit.TakeSyncPlace), what TakeSync takes.
const SyncRequests Resource = "sync_requests"

// errSyncQuota is the cause of a SyncRequests refusal.
var errSyncQuota = errors.New("the synchronous recognizer's requests of this second are taken")

// TakeSync takes what a synchronous recognition of j's one piece needs:
// its audio within the reservation (the one check before any audio
// leaves, as for Take) and a place in the installation's synchronous
// quota for the current second (speechkit.TakeSyncPlace: 20 a second,
// shared by every instance through the counters). It takes no request of
// the asynchronous quota, which SpeechKit counts apart, and no place in
// flight: the recognition is over when its one request is, within the
// call, and nothing is left running to check. The audio reservation is
// the job's as for any recognition (Reserve), given back by Release as
// for any.
//
// A refusal is a *Refused, with nothing taken: Audio for good (the job
// fails, CodeOverReserved), or SyncRequests until the next second, when
// the caller recognizes the job asynchronously rather than wait. A place
// taken is not given back: the second is over before another could use
// it. A counter that failed is another error; nothing is taken then, and
// the caller should not send the request unpaced.
func (a *Admission) TakeSync(ctx context.Context, j job.Job) error {
	if err := a.covers(j, true); err != nil {
		return &Refused{Resource: Audio, cause: err}
	}
	now := a.cfg.Clock.Now()
	ok, err := speechkit.TakeSyncPlace(ctx, a.cfg.Counters, now)
	if err != nil {
		return fmt.Errorf("count a synchronous recognition request: %w", err)
	}
	if !ok {
		return &Refused{Resource: SyncRequests, Until: now.UTC().Truncate(time.Second).Add(time.Second), cause: errSyncQuota}
	}
	return nil
}
