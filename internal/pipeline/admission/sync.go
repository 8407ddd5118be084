package admission

import (
	"context"
	"errors"
	"fmt"

	"transcriber/internal/job"
	"transcriber/internal/speechkit"
)

var errSyncQuota = errors.New("the synchronous recognizer's places of the second are taken")

// TakeSync takes what a synchronous recognition of j's one piece needs:
// its audio within the reservation, as for Take, and a place in the
// synchronous quota (speechkit.TakeSyncPlace: 20 in any second, shared by
// every instance). No asynchronous request, which SpeechKit counts apart.
// A refusal is Audio for good, or SyncRequests until the earliest a place
// may come (at most 2 s on). A place is never given back: its window is
// over before another could use it. A counter that failed is another
// error: the caller should not send the request unpaced.
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
