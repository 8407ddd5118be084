package job

import (
	"context"
	"fmt"
	"strings"
	"time"

	"transcriber/internal/ident"
)

// ApplyClaim is the rule of a claim: a store calls it on the job it read,
// inside the transaction that will write the result. It returns the claimed
// job or ErrNotClaimable.
func ApplyClaim(cur Job, step Step, now time.Time) (Job, error) {
	if cur.State.Terminal() || !step.takes(cur.State) {
		return Job{}, fmt.Errorf("%w: job %s is %s, step %s takes %v", ErrNotClaimable, cur.ID, cur.State, step.Name, step.From)
	}
	if !cur.claimFree(now) {
		return Job{}, fmt.Errorf("%w: job %s is held until %s", ErrNotClaimable, cur.ID, cur.ClaimUntil.Format(time.RFC3339))
	}
	j := cur
	j.ClaimID = ident.NewAt(now)
	j.ClaimUntil = now.Add(step.Lease)
	// A held job is next due when its claim expires: so the earliest
	// next_run_at of the live jobs (Store.NextDue) is always the next moment
	// there may be work, claims included, with no second column to read.
	j.NextRunAt = j.ClaimUntil
	j.Attempts++
	j.UpdatedAt = now
	return j, nil
}

// holds reports whether claimID is cur's current, unexpired claim.
func holds(cur Job, claimID string, now time.Time) error {
	if claimID == "" || cur.ClaimID != claimID || !now.Before(cur.ClaimUntil) {
		return fmt.Errorf("%w: job %s", ErrClaimLost, cur.ID)
	}
	return nil
}

// ApplySave is the rule of Store.Save: cur is the job as stored, next the
// holder's version. It returns what to write, or ErrClaimLost or
// ErrIllegalMove.
func ApplySave(cur, next Job, n Next, now time.Time) (Job, error) {
	if err := holds(cur, next.ClaimID, now); err != nil {
		return Job{}, err
	}
	if n.After < 0 {
		return Job{}, fmt.Errorf("%w: negative delay", ErrInvalid)
	}
	if err := checkMove(cur.State, next.State); err != nil {
		return Job{}, fmt.Errorf("job %s: %w", cur.ID, err)
	}
	for i, sg := range next.Segments {
		if sg.Seq != i {
			return Job{}, fmt.Errorf("%w: segment %d has seq %d", ErrInvalid, i, sg.Seq)
		}
	}
	if !next.Recognition.Valid() {
		return Job{}, fmt.Errorf("%w: unknown recognition %q", ErrInvalid, next.Recognition)
	}
	if next.BilledSeconds < 0 || next.ReservedMicros < 0 {
		return Job{}, fmt.Errorf("%w: negative billed seconds or reserved money", ErrInvalid)
	}
	j := cur
	j.State = next.State
	j.DurationMs = next.DurationMs
	j.ErrorCode = next.ErrorCode
	j.ErrorMessage = next.ErrorMessage
	j.Segments = append([]Segment(nil), next.Segments...)
	j.Features = cur.Features.saved(next.Features)
	j.Recognition = cur.Recognition.saved(next.Recognition)
	if next.BilledSeconds > 0 {
		// The recognizer's word on the bill is kept: a copy without it
		// (0, read before it was known) does not erase it.
		j.BilledSeconds = next.BilledSeconds
	}
	switch {
	case cur.ReservedSeconds == 0 && next.ReservedSeconds > 0:
		// A reservation is recorded once and then kept: a holder's copy
		// never drops it or moves it to another day.
		j.ReservedSeconds, j.ReservedMicros, j.ReservedDay = next.ReservedSeconds, next.ReservedMicros, next.ReservedDay
	case next.ReservedSeconds > 0:
		// It may be moved, within its day, to what the audio made and the
		// answers are billed (admission.Settle), the counters first.
		j.ReservedSeconds, j.ReservedMicros = next.ReservedSeconds, next.ReservedMicros
	}
	if cur.ReuseKey == "" && len(next.ReuseKey) <= MaxReuseKey {
		j.ReuseKey = next.ReuseKey // recorded once, when the recording is known
	}
	j.UpdatedAt = now
	if j.State.Terminal() {
		j.EndedAt = now
	}
	if n.Keep && !j.State.Terminal() {
		// The step goes on under the same claim: its attempt is not over,
		// so Attempts stays, and the job is due again only if the holder dies.
		j.NextRunAt = j.ClaimUntil
	} else {
		j.Attempts = 0
		j.ClaimID, j.ClaimUntil = "", time.Time{}
		j.NextRunAt = now.Add(n.After)
	}
	if j.State.Terminal() {
		// An ended job is never due again, and its next_run_at is when it
		// ended (as ApplyDelete leaves a live job it ends): so jobs_due
		// holds each final state's jobs in the order they ended, and the
		// owner's status counts a day's ended jobs on it (internal/status).
		j.NextRunAt = now
	}
	return j, nil
}

// ApplyRelease is the rule of Store.Release. A failure that is not the
// job's (Failure.Uncounted: an outage every job met) gives the attempt
// its claim counted back, so the job keeps the attempts it has for what is
// its own.
func ApplyRelease(cur Job, c Claim, pause time.Duration, f Failure, now time.Time) (Job, error) {
	if err := holds(cur, c.ID, now); err != nil {
		return Job{}, err
	}
	if pause < 0 {
		return Job{}, fmt.Errorf("%w: negative pause", ErrInvalid)
	}
	j := cur
	if f.Uncounted && j.Attempts > 0 {
		j.Attempts--
	}
	j.ClaimID, j.ClaimUntil = "", time.Time{}
	j.NextRunAt = now.Add(pause)
	j.ErrorCode, j.ErrorMessage = f.Code, f.Message
	j.UpdatedAt = now
	return j, nil
}

// ApplyRenew is the rule of Store.Renew: the holder of claim c, still at
// work, moves the claim's expiry to now + lease, and the job's next due
// time with it (a held job is due when its claim expires). Nothing else
// changes: a renewal is no step. A claim that is not the job's current,
// unexpired one is ErrClaimLost, and its holder stops.
func ApplyRenew(cur Job, c Claim, lease time.Duration, now time.Time) (Job, error) {
	if err := holds(cur, c.ID, now); err != nil {
		return Job{}, err
	}
	if lease <= 0 {
		return Job{}, fmt.Errorf("%w: lease not positive", ErrInvalid)
	}
	j := cur
	j.ClaimUntil = now.Add(lease)
	j.NextRunAt = j.ClaimUntil
	return j, nil
}

// ApplyTakeBack is the rule of Reclaimer.TakeBackClaims for one job: a
// live job's claim ends, whoever made it, and the job is due at once; its
// attempts stay (the attempt that held the claim ended without a word, as
// a crash does). It reports false for a job with nothing to take back.
func ApplyTakeBack(cur Job, now time.Time) (Job, bool) {
	if cur.State.Terminal() || cur.ClaimID == "" {
		return cur, false
	}
	j := cur
	j.ClaimID, j.ClaimUntil = "", time.Time{}
	if j.NextRunAt.After(now) {
		j.NextRunAt = now
	}
	return j, true
}

// ApplyDelete is the rule of Store.Delete: the job is marked deleted, and
// a live one ends as failed with its claim taken away, so a step still
// running loses its claim at its next save and stops. What the sender gave
// or what names them is blanked (see Forgotten). Deleting again changes
// nothing but that blanking, which a row deleted before it existed lacks.
func ApplyDelete(cur Job, now time.Time) Job {
	j := Forgotten(cur)
	if j.State.Terminal() && j.EndedAt.IsZero() {
		j.EndedAt = now // ended before jobs recorded their end: expire from now
	}
	if cur.Deleted() {
		return j
	}
	j.DeletedAt = now
	j.UpdatedAt = now
	if !j.State.Terminal() {
		j.State = Failed
		j.ErrorCode, j.ErrorMessage = ErrDeleted.Code, ErrDeleted.Message
		j.ClaimID, j.ClaimUntil = "", time.Time{}
		j.NextRunAt = now
		j.EndedAt = now
	}
	return j
}

// Forgotten is j without what its sender gave or what names them: the
// file's name and declared media type, its reuse key, the Telegram chat and message, the
// idempotency key, and a Telegram job's owner (the chat, "tg:<chat id>")
// and payer (the user, "tgu:<user id>").
// An API job keeps its owner, a token's id: it names no person, and it is
// what lets the API go on answering the owner about the deleted job (its
// view, and 410 for its transcript) while anyone else gets 404. A store
// whose key rows point at the job (the Telegram message, the idempotency
// key) removes them with the same write, so a second request with the same
// key or message makes a new job.
func Forgotten(j Job) Job {
	j.Filename, j.ContentType = "", ""
	j.ReuseKey = "" // names the recording: a deleted job lends nothing
	j.TelegramChatID, j.TelegramMessageID = 0, 0
	j.IdempotencyKey = ""
	if j.Source == SourceTelegram {
		j.OwnerID = ""
		j.ChargedTo = ""
	}
	return j
}

// ParseID reads an id from outside for a store: a malformed one names no job.
func ParseID(id string) (string, error) {
	canon, err := ident.Parse(id)
	if err != nil {
		return "", fmt.Errorf("%w: malformed id", ErrNotFound)
	}
	return canon, nil
}

// CheckUnfinished is the argument rule of Unfinished, shared by every
// store.
func CheckUnfinished(chargedTo string, limit int) error {
	if chargedTo == "" {
		return fmt.Errorf("%w: no payer", ErrInvalid)
	}
	return CheckListLimit(limit)
}

// CheckClaimLimit and CheckListLimit are the argument rules of ClaimDue and
// List, shared by every store.
func CheckClaimLimit(limit int) error {
	if limit < 1 || limit > MaxClaimLimit {
		return fmt.Errorf("%w: claim limit %d outside 1..%d", ErrInvalid, limit, MaxClaimLimit)
	}
	return nil
}

// CheckListLimit: see CheckClaimLimit.
func CheckListLimit(limit int) error {
	if limit < 1 || limit > MaxListLimit {
		return fmt.Errorf("%w: list limit %d outside 1..%d", ErrInvalid, limit, MaxListLimit)
	}
	return nil
}

// ParseCursor reads a List cursor: empty, or the id of a job.
func ParseCursor(cursor string) (string, error) {
	if cursor == "" {
		return "", nil
	}
	canon, err := ident.Parse(cursor)
	if err != nil {
		return "", fmt.Errorf("%w: malformed cursor", ErrInvalid)
	}
	return canon, nil
}

// Abandoned reports whether a job just claimed has already had its
// attempts: the attempt before this one ended without a word (a crash, a
// timeout), and it was the last allowed. Such a job goes to Dead unrun.
func (p Policy) Abandoned(j Job) bool { return j.Attempts > p.MaxAttempts }

// Settle ends a claimed job's failed attempt as the policy says: Failed for
// a permanent error, Dead when the attempts are used up, otherwise released
// with the policy's pause. It returns the job as stored.
func Settle(ctx context.Context, st Store, p Policy, j Job, err error) (Job, error) {
	f := FailureOf(err)
	switch p.Judge(j.Attempts, err) {
	case Fail:
		j.State = Failed
	case Die:
		j.State = Dead
	default:
		return st.Release(ctx, j.Claim(), p.Pause(j.Attempts), f)
	}
	j.ErrorCode, j.ErrorMessage = f.Code, f.Message
	if j.State == Dead {
		j.ErrorMessage = deadMessage(f.Message, j.Attempts)
	}
	return st.Save(ctx, j, Next{})
}

// deadMessage is the last failure's message for a job that will not be
// tried again: a transient error's message promises another try ("…; it
// will be tried again", "…; try again later"), which a dead job never
// gets; it says instead that the service gave up, and that the owner may
// send the file again later.
func deadMessage(msg string, attempts int) string {
	for _, promise := range []string{"; it will be ", "; try again later"} {
		if i := strings.LastIndex(msg, promise); i >= 0 {
			msg = msg[:i]
		}
	}
	return fmt.Sprintf("%s; the service gave up after %d attempts: send the file again later", msg, attempts)
}
