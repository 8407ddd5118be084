package job

import (
	"context"
	"fmt"
	"strings"
	"time"

	"transcriber/internal/ident"
)

// ApplyClaim is the rule of a claim; it returns the claimed job or ErrNotClaimable.
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
	// Due when the claim expires, so NextDue covers claims with one column.
	j.NextRunAt = j.ClaimUntil
	j.Attempts++
	j.UpdatedAt = now
	return j, nil
}

func holds(cur Job, claimID string, now time.Time) error {
	if claimID == "" || cur.ClaimID != claimID || !now.Before(cur.ClaimUntil) {
		return fmt.Errorf("%w: job %s", ErrClaimLost, cur.ID)
	}
	return nil
}

// ApplySave is the rule of Store.Save: cur as stored, next the holder's copy.
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
	switch {
	case !next.Recognition.Valid():
		return Job{}, fmt.Errorf("%w: unknown recognition %q", ErrInvalid, next.Recognition)
	case next.BilledSeconds < 0 || next.ReservedMicros < 0:
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
		// A copy read before the bill was known does not erase it.
		j.BilledSeconds = next.BilledSeconds
	}
	switch {
	case cur.ReservedSeconds == 0 && next.ReservedSeconds > 0:
		// Recorded once; never dropped or moved to another day.
		j.ReservedSeconds, j.ReservedMicros, j.ReservedDay = next.ReservedSeconds, next.ReservedMicros, next.ReservedDay
	case next.ReservedSeconds > 0:
		// Moved within its day to what is billed (admission.Settle).
		j.ReservedSeconds, j.ReservedMicros = next.ReservedSeconds, next.ReservedMicros
	}
	if cur.ReuseKey == "" && len(next.ReuseKey) <= MaxReuseKey {
		j.ReuseKey = next.ReuseKey // recorded once
	}
	j.UpdatedAt = now
	if j.State.Terminal() {
		j.EndedAt = now
	}
	if n.Keep && !j.State.Terminal() {
		// The step goes on: same attempt, due only if the holder dies.
		j.NextRunAt = j.ClaimUntil
	} else {
		j.Attempts = 0
		j.ClaimID, j.ClaimUntil = "", time.Time{}
		j.NextRunAt = now.Add(n.After)
	}
	if j.State.Terminal() {
		// The end, by which jobs_due orders ended jobs (internal/status counts a day's).
		j.NextRunAt = now
	}
	return j, nil
}

// ApplyRelease is the rule of Store.Release; an Uncounted failure gives
// the attempt back.
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

// ApplyRenew is the rule of Store.Renew: expiry and due time move to
// now + lease; nothing else changes.
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

// ApplyTakeBack is Reclaimer.TakeBackClaims's rule: a live job's claim
// ends, due at once, attempts kept (as after a crash); false if unclaimed.
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

// ApplyDelete is the rule of Store.Delete: marked deleted and Forgotten; a
// live job fails and loses its claim, so a running step stops at its next
// save. Deleting again only blanks again (older rows lacked it).
func ApplyDelete(cur Job, now time.Time) Job {
	j := Forgotten(cur)
	if j.State.Terminal() && j.EndedAt.IsZero() {
		j.EndedAt = now // ended before EndedAt was kept
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

// Forgotten is j without what the sender gave or what names a person. An
// API job keeps its owner, a token id, so the owner still gets 410 where
// others get 404. Stores remove the job's key rows in the same write.
func Forgotten(j Job) Job {
	j.Filename, j.ContentType, j.ReuseKey, j.IdempotencyKey = "", "", "", ""
	j.TelegramChatID, j.TelegramMessageID = 0, 0
	if j.Source == SourceTelegram {
		j.OwnerID, j.ChargedTo = "", ""
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

// CheckUnfinished, CheckClaimLimit and CheckListLimit are the argument
// rules of Unfinished, ClaimDue and List.
func CheckUnfinished(chargedTo string, limit int) error {
	if chargedTo == "" {
		return fmt.Errorf("%w: no payer", ErrInvalid)
	}
	return CheckListLimit(limit)
}

func CheckClaimLimit(limit int) error { return checkLimit("claim", limit, MaxClaimLimit) }

func CheckListLimit(limit int) error { return checkLimit("list", limit, MaxListLimit) }

func checkLimit(what string, limit, most int) error {
	if limit < 1 || limit > most {
		return fmt.Errorf("%w: %s limit %d outside 1..%d", ErrInvalid, what, limit, most)
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

// Abandoned reports whether a job just claimed is past its last attempt
// (the one before ended silently); it goes to Dead unrun.
func (p Policy) Abandoned(j Job) bool { return j.Attempts > p.MaxAttempts }

// Settle ends a failed attempt as the policy judges: Failed, Dead, or
// released with its pause.
func Settle(ctx context.Context, st Store, p Policy, j Job, err error) (Job, error) {
	f := FailureOf(err)
	switch p.Judge(j.Attempts, err) {
	case Fail:
		j.State = Failed
	case Die:
		j.State, f.Message = Dead, deadMessage(f.Message, j.Attempts)
	default:
		return st.Release(ctx, j.Claim(), p.Pause(j.Attempts), f)
	}
	j.ErrorCode, j.ErrorMessage = f.Code, f.Message
	return st.Save(ctx, j, Next{})
}

// deadMessage replaces a transient message's promise of another try with
// the service giving up.
func deadMessage(msg string, attempts int) string {
	for _, promise := range []string{"; it will be ", "; try again later"} {
		if i := strings.LastIndex(msg, promise); i >= 0 {
			msg = msg[:i]
		}
	}
	return fmt.Sprintf("%s; the service gave up after %d attempts: send the file again later", msg, attempts)
}
