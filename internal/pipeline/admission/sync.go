package admission

import (
	"context"
	"errors"
	"fmt"

	"transcriber/internal/job"
	"transcriber/internal/speechkit"
)

// SyncRequests: a place in the synchronous recognizer's quota
// (speechkit.TakeSyncPlace: at most 20 in any second), what TakeSync
// takes.
const SyncRequests Resource = "sync_requests"

// errSyncQuota is the cause of a SyncRequests refusal.
var errSyncQuota = errors.New("the synchronous recognizer's places of the second are taken")

// TakeSync takes what a synchronous recognition of j's one piece needs:
// its audio within the reservation (the one check before any audio
// leaves, as for Take) and a place in the installation's synchronous
// quota (speechkit.TakeSyncPlace: at most 20 in any second, shared by
// every instance through the counters). It takes no request of
// the asynchronous quota, which SpeechKit counts apart, and no place in
// flight: the recognition is over when its one request is, within the
// call, and nothing is left running to check. The audio reservation is
// the job's as for any recognition (Reserve), given back by Release as
// for any.
//
// A refusal is a *Refused: Audio for good (the job fails,
// CodeOverReserved), with nothing taken, or SyncRequests until the
// earliest a place may come, at most 2 s on (speechkit.TakeSyncPlace),
// when the caller may ask again (nothing taken but, rarely, a place
// taken too late to use, which stays counted). A place taken is not
// given back: its window is over before another could use it. A counter that failed is another error;
// nothing is taken then, and the caller should not send the request
// unpaced.
func (a *Admission) TakeSync(ctx context.Context, j job.Job) error {
	if err := a.covers(j, true); err != nil {
		return &Refused{Resource: Audio, cause: err}
	}
	ok, next, err := speechkit.TakeSyncPlace(ctx, a.cfg.Counters, a.cfg.Clock)
	if err != nil {
		return fmt.Errorf("count a synchronous recognition request: %w", err)
	}
	if !ok {
		return &Refused{Resource: SyncRequests, Until: next, cause: errSyncQuota}
	}
	return nil
}
