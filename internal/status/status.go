// Package status is the owner's view of the service: how many jobs wait
// and for what, what ended in the last day and of what, how much of the
// recognizer's request window and of the month's audio is used, and
// whether Telegram deliveries and
// callbacks go out. `transcriber status` prints it, the bot's /status
// answers the owner with it, and Decide (alert.go) turns it into the
// owner's alerts.
//
// It only reads, over ports it defines (Jobs, Deliveries, Callbacks, and
// the usage counters of package quota), and every read is a range of an
// index the tables already have, bounded by Config.Cap: the jobs through
// jobs_due (state, next_run_at, id), the deliveries and callbacks through
// their due indexes, the counters by their key. docs/database.md gives
// the request units one read costs in YDB.
package status

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"

	"transcriber/internal/botstate"
	"transcriber/internal/callback"
	"transcriber/internal/errs"
	"transcriber/internal/job"
	"transcriber/internal/quota"
	"transcriber/internal/spend"
)

// Jobs is what the status reads of the jobs table; both stores'
// JobStore implement it. Each method reads one state's range of jobs_due,
// (state, next_run_at, id). An ended job's next_run_at is when it ended
// (job.ApplySave), so a final state's range is in the order its jobs
// ended.
type Jobs interface {
	// StateEntries returns up to limit jobs in state whose next_run_at is
	// at or after since (the zero time: all of them), by next_run_at,
	// then id, with only ID, State and NextRunAt set: read from the index
	// alone. Errors: ErrInvalid (limit out of 1..MaxRead).
	StateEntries(ctx context.Context, state job.State, since time.Time, limit int) ([]job.Job, error)
	// LatestInState returns up to limit jobs in state whose next_run_at is
	// at or after since (the zero time: all), the latest next_run_at
	// first, without their segments. Errors: ErrInvalid (as StateEntries).
	LatestInState(ctx context.Context, state job.State, since time.Time, limit int) ([]job.Job, error)
	// Get returns a job with its segments (job.Store's).
	Get(ctx context.Context, id string) (job.Job, error)
}

// Deliveries is what the status reads of the bot's deliveries; both
// stores' BotState implement it.
type Deliveries interface {
	// PendingDeliveries returns up to limit pending deliveries, by
	// next_at (the pending range of telegram_deliveries_due).
	// Errors: ErrInvalid (limit out of 1..MaxRead).
	PendingDeliveries(ctx context.Context, limit int) ([]botstate.Delivery, error)
}

// Callbacks is what the status reads of the API's callbacks; both stores'
// Callbacks implement it.
type Callbacks interface {
	// CallbacksInState returns up to limit callbacks in state whose next_at
	// is at or after since (the zero time: all), by next_at, then job id
	// (a range of callbacks_due). Errors: ErrInvalid (limit out of
	// 1..MaxRead).
	CallbacksInState(ctx context.Context, state callback.State, since time.Time, limit int) ([]callback.Delivery, error)
}

// MaxRead is the most rows one read of a port may return.
const MaxRead = 10_000

// ErrInvalid: a read's arguments break the ports' rules.
var ErrInvalid = errs.New(errs.Invalid, "status_invalid", "the status read is not valid")

// CheckRead is the argument rule of every read of the ports, shared by
// every store.
func CheckRead(limit int) error {
	if limit < 1 || limit > MaxRead {
		return fmt.Errorf("%w: limit %d outside 1..%d", ErrInvalid, limit, MaxRead)
	}
	return nil
}

// DefaultCap is how many rows of one range a status read counts at most:
// a queue or a day longer than that reads as "more than" it. It bounds
// what one status costs in YDB whatever the backlog (docs/database.md).
const DefaultCap = 1000

// Span is how far back the status counts ended jobs and failed
// callbacks: the last day.
const Span = 24 * time.Hour

// LatestDead is how many of the latest dead jobs the status names.
const LatestDead = 5

// Config is what the status needs to know of the installation's settings.
type Config struct {
	// Windows are the pipeline's request windows.
	Windows Windows
	// QuotaCode is the code of a job the recognizer refused for its
	// request quota (speechkit.CodeRecognitionQuota); empty: no job is
	// taken for one by its code.
	QuotaCode string
	// AudioPerMonth is LIMIT_AUDIO_PER_MONTH; 0 is no limit.
	AudioPerMonth time.Duration
	// BudgetPerMonth is LIMIT_BUDGET_PER_MONTH in µ₽; 0 is no budget.
	BudgetPerMonth int64
	// Cap is how many rows of one range are counted; 0 is DefaultCap.
	Cap int
}

func (c Config) limit() int {
	if c.Cap <= 0 || c.Cap >= MaxRead {
		return DefaultCap
	}
	return c.Cap
}

// Reader reads the status. Counters, Deliveries and Callbacks may be nil:
// their parts then read as zero (no counters) or are left out (no bot, no
// callbacks).
type Reader struct {
	Jobs       Jobs
	Counters   quota.Counters
	Deliveries Deliveries
	Callbacks  Callbacks
	Config     Config
}

// Status is the service's state at one moment.
type Status struct {
	At time.Time `json:"at"`
	// Live counts the jobs of each live state, in pipeline order.
	Live []Count `json:"live"`
	// Ended counts the jobs that reached each final state since EndedSince
	// (Span before At).
	Ended      []Count   `json:"ended"`
	EndedSince time.Time `json:"ended_since"`
	// Oldest is the oldest live job and what it waits for; nil when no job
	// is live.
	Oldest *Waiting `json:"oldest,omitempty"`
	// Failures counts the jobs failed and dead since EndedSince by state
	// and error code, most first.
	Failures []Failure `json:"failures"`
	// Dead are the latest jobs that ended dead since EndedSince, the
	// latest first, at most LatestDead.
	Dead []Ended `json:"dead"`
	// QuotaWait is the jobs that wait for the recognizer's request window.
	QuotaWait QuotaWait `json:"quota_wait"`
	// Requests is the recognizer's request window now.
	Requests Requests `json:"requests"`
	// Audio is the installation's billed seconds and audio this UTC month
	// against LIMIT_AUDIO_PER_MONTH.
	Audio spend.Window `json:"audio_month"`
	// Spend is the installation's money this UTC month against
	// LIMIT_BUDGET_PER_MONTH.
	Spend Spend `json:"spend_month"`
	// Telegram is the bot's deliveries; nil without a bot.
	Telegram *TelegramState `json:"telegram,omitempty"`
	// Callbacks is the API's callbacks; nil without a callback store.
	Callbacks *CallbackState `json:"callbacks,omitempty"`
}

// Spend is the month's money: what is reserved or billed (what counts
// against the budget), the budget, and what the jobs done cost by kind
// (spend.Kinds). Amounts in µ₽; the JSON says rubles.
type Spend struct {
	UsedMicros   int64       `json:"-"`
	BudgetMicros int64       `json:"-"`
	UsedRub      float64     `json:"used_rub"`
	BudgetRub    float64     `json:"budget_rub"` // 0: no budget
	Kinds        []KindSpend `json:"kinds"`
	ResetsAt     time.Time   `json:"resets_at"`
}

// SpendKinds writes the month's money of the jobs done by kind: "async
// 12.10 ₽, deferred 0.00 ₽, sync 0.33 ₽, summary 1.20 ₽".
func SpendKinds(sp Spend) string {
	parts := make([]string, 0, len(sp.Kinds))
	for _, k := range sp.Kinds {
		parts = append(parts, fmt.Sprintf("%s %s ₽", k.Kind, spend.Rubles(k.Micros)))
	}
	return strings.Join(parts, ", ")
}

// KindSpend is the money of one kind of spend this month.
type KindSpend struct {
	Kind   spend.Mode `json:"kind"`
	Micros int64      `json:"-"`
	Rub    float64    `json:"rub"`
}

// Count is how many jobs one state has; More says there are more than
// Jobs (the read stopped at the cap).
type Count struct {
	State job.State `json:"state"`
	Jobs  int       `json:"jobs"`
	More  bool      `json:"more,omitempty"`
}

// Reason is what a job waits for.
type Reason string

// The reasons.
const (
	// ForUpload: the job waits for its file (awaiting_upload), until
	// Waiting.Until, when its upload window closes.
	ForUpload Reason = "upload"
	// ForStep: a step holds the job now (an unexpired claim), until
	// Waiting.Until at the latest.
	ForStep Reason = "step"
	// ForQuota: its audio waits for the recognizer's request window
	// (the service's count of SPEECHKIT_REQUESTS_PER_HOUR, or the
	// recognizer's own answer, code recognition_quota).
	ForQuota Reason = "recognizer_quota"
	// ForSlot: a piece of its audio waits for a place among its job's
	// recognitions in flight (MAX_PIECES).
	ForSlot Reason = "slot"
	// ForRetry: its last attempt failed (Waiting.Code) and it is tried
	// again at Waiting.Until.
	ForRetry Reason = "retry"
	// ForRecognition: the recognizer is working on it; it is checked again
	// at Waiting.Until.
	ForRecognition Reason = "recognition"
	// ForTurn: it is due at Waiting.Until and waits for the timer's sweep
	// to take it.
	ForTurn Reason = "turn"
)

// Waiting is a live job and what it waits for.
type Waiting struct {
	JobID     string    `json:"job_id"`
	State     job.State `json:"state"`
	CreatedAt time.Time `json:"created_at"`
	For       Reason    `json:"waits_for"`
	// Code is the job's last failure, when it has one.
	Code     string    `json:"code,omitempty"`
	Attempts int       `json:"attempts,omitempty"`
	Until    time.Time `json:"until"` // the job's next_run_at
}

// Failure is how many jobs ended in State with Code.
type Failure struct {
	State job.State `json:"state"`
	Code  string    `json:"code"`
	Jobs  int       `json:"jobs"`
}

// Ended is a job that ended, with its code and when.
type Ended struct {
	JobID string    `json:"job_id"`
	Code  string    `json:"code"`
	At    time.Time `json:"at"`
}

// QuotaWait is the jobs waiting for the recognizer's request window.
//
// Counted are the jobs in converted that no step holds and that a quota
// put off: saved to wait for the next window (attempts back to 0: the
// service's own count) or released with code recognition_quota (the
// recognizer's answer). A job whose later pieces wait in transcribe
// (after waiting for a place in flight) is not counted; Oldest names it
// when it is the oldest job.
type QuotaWait struct {
	Jobs     int    `json:"jobs"`
	More     bool   `json:"more,omitempty"`
	OldestID string `json:"oldest_job_id,omitempty"`
	// Since is the earliest the longest wait can have begun: not before
	// its job was made, nor before the run of full request windows that
	// ends now (a job waits only in a full window, or on the recognizer's
	// own refusal). The rows keep no start of a wait; zero when no job
	// waits.
	Since time.Time `json:"since"`
}

// Requests is the recognizer's request window (SPEECHKIT_REQUESTS_PER_HOUR,
// counted in fixed windows: Windows).
type Requests struct {
	// Paced is false when the requests are not counted (0 an hour).
	Paced    bool      `json:"paced"`
	Used     int64     `json:"used"`
	Allowed  int64     `json:"allowed"`
	Start    time.Time `json:"window_start"`
	ResetsAt time.Time `json:"resets_at"`
}

// TelegramState is the bot's pending deliveries.
type TelegramState struct {
	Pending int  `json:"pending"`
	More    bool `json:"more,omitempty"`
	// Due are pending, due and held by no sender: waiting for the
	// timer's sweep.
	Due int `json:"due"`
	// Failing were taken and not sent (a send that failed for now, a
	// 429 longer than a call waits, a sender that crashed), and are held
	// by no sender now.
	Failing int `json:"failing"`
	// OldestDue is the earliest next_at of the pending ones; zero when
	// none is pending.
	OldestDue time.Time `json:"oldest_due"`
}

// CallbackState is the API's callbacks.
type CallbackState struct {
	Pending int  `json:"pending"`
	More    bool `json:"more,omitempty"`
	// Failing are pending with failed POSTs (every POST of a pending
	// callback failed: a 2xx ends it delivered).
	Failing int `json:"failing"`
	// Failed gave up since Status.EndedSince (by their next_at, about
	// when their last POST was due).
	Failed     int  `json:"failed"`
	FailedMore bool `json:"failed_more,omitempty"`
	// Endpoints are the hosts whose callbacks fail, the most failed POSTs
	// first.
	Endpoints []Endpoint `json:"failing_endpoints"`
}

// Endpoint is a callback host whose callbacks fail. Only the host is
// shown: a callback URL's path and query may carry the client's secret.
type Endpoint struct {
	Host string `json:"host"`
	// Failures are the failed POSTs of its callbacks not delivered
	// (pending, and failed since Status.EndedSince): none of them had a
	// 2xx.
	Failures  int    `json:"failures"`
	Callbacks int    `json:"callbacks"`
	LastError string `json:"last_error,omitempty"`
	// LastStatus is the HTTP status of the last failed POST; 0 when none
	// came.
	LastStatus int       `json:"last_status,omitempty"`
	LastAt     time.Time `json:"last_at"`
}

// Read reads the status at now.
func (r Reader) Read(ctx context.Context, now time.Time) (Status, error) {
	now = now.UTC().Truncate(time.Millisecond) // the stores' precision
	s := Status{At: now, EndedSince: now.Add(-Span), Failures: []Failure{}, Dead: []Ended{}}
	var errList []error
	fail := func(what string, err error) {
		if err != nil {
			errList = append(errList, fmt.Errorf("%s: %w", what, err))
		}
	}
	fail("jobs", r.readJobs(ctx, &s))
	fail("requests", r.readRequests(ctx, &s))
	fail("quota wait", r.readQuotaWait(ctx, &s))
	fail("oldest job", r.readOldest(ctx, &s))
	fail("audio", r.readAudio(ctx, &s))
	fail("spend", r.readSpend(ctx, &s))
	if r.Deliveries != nil {
		fail("telegram deliveries", r.readDeliveries(ctx, &s))
	}
	if r.Callbacks != nil {
		fail("callbacks", r.readCallbacks(ctx, &s))
	}
	if err := errors.Join(errList...); err != nil {
		return Status{}, fmt.Errorf("read the status: %w", err)
	}
	return s, nil
}

// liveStates are the live states in pipeline order.
func liveStates() []job.State {
	var out []job.State
	for _, st := range job.States {
		if !st.Terminal() {
			out = append(out, st)
		}
	}
	return out
}

// oldestLive is the lowest id read of the live states: ids are made in
// creation order.
type oldestLive struct{ id string }

func (o *oldestLive) see(id string) {
	if o.id == "" || id < o.id {
		o.id = id
	}
}

// readJobs counts the live states and the final ones of the last Span,
// and reads the failed and dead jobs' codes.
func (r Reader) readJobs(ctx context.Context, s *Status) error {
	limit := r.Config.limit()
	var oldest oldestLive
	for _, st := range liveStates() {
		got, err := r.Jobs.StateEntries(ctx, st, time.Time{}, limit+1)
		if err != nil {
			return err
		}
		c := count(st, len(got), limit)
		for _, j := range got[:c.Jobs] {
			oldest.see(j.ID)
		}
		s.Live = append(s.Live, c)
	}
	if oldest.id != "" {
		s.Oldest = &Waiting{JobID: oldest.id}
	}
	byCode := map[Failure]int{}
	for _, st := range job.States {
		if !st.Terminal() {
			continue
		}
		if st == job.Done {
			// Only the count: the index alone answers it.
			got, err := r.Jobs.StateEntries(ctx, st, s.EndedSince, limit+1)
			if err != nil {
				return err
			}
			s.Ended = append(s.Ended, count(st, len(got), limit))
			continue
		}
		got, err := r.Jobs.LatestInState(ctx, st, s.EndedSince, limit+1)
		if err != nil {
			return err
		}
		c := count(st, len(got), limit)
		s.Ended = append(s.Ended, c)
		for _, j := range got[:c.Jobs] {
			byCode[Failure{State: st, Code: j.ErrorCode}]++
			if st == job.Dead && len(s.Dead) < LatestDead {
				s.Dead = append(s.Dead, Ended{JobID: j.ID, Code: j.ErrorCode, At: j.NextRunAt})
			}
		}
	}
	for f, n := range byCode {
		f.Jobs = n
		s.Failures = append(s.Failures, f)
	}
	sort.Slice(s.Failures, func(i, k int) bool {
		a, b := s.Failures[i], s.Failures[k]
		if a.Jobs != b.Jobs {
			return a.Jobs > b.Jobs
		}
		if a.State != b.State {
			return a.State < b.State
		}
		return a.Code < b.Code
	})
	return nil
}

// count is a Count of n rows read with a limit of limit+1.
func count(st job.State, n, limit int) Count {
	if n > limit {
		return Count{State: st, Jobs: limit, More: true}
	}
	return Count{State: st, Jobs: n}
}

func (r Reader) readRequests(ctx context.Context, s *Status) error {
	w := r.Config.Windows.Request(s.At)
	s.Requests = Requests{Paced: w.Limit > 0, Allowed: w.Limit, Start: w.Start, ResetsAt: w.End}
	if r.Counters == nil || w.Limit <= 0 {
		return nil
	}
	used, err := r.Counters.Used(ctx, r.Config.Windows.RequestsKey, w.Start)
	s.Requests.Used = used
	return err
}

// readQuotaWait reads the converted jobs a quota put off, and how long
// the request windows have been full. It runs after readRequests.
func (r Reader) readQuotaWait(ctx context.Context, s *Status) error {
	limit := r.Config.limit()
	got, err := r.Jobs.LatestInState(ctx, job.Converted, time.Time{}, limit+1)
	if err != nil {
		return err
	}
	var waiting []job.Job
	for _, j := range got[:min(len(got), limit)] {
		if r.quotaWaitOf(j, s.At) {
			waiting = append(waiting, j)
		}
	}
	// Past the cap of converted jobs read, more may wait.
	s.QuotaWait = QuotaWait{Jobs: len(waiting), More: len(got) > limit}
	if len(waiting) == 0 {
		return nil
	}
	first := slices.MinFunc(waiting, func(a, b job.Job) int { return a.CreatedAt.Compare(b.CreatedAt) })
	s.QuotaWait.OldestID = first.ID
	run, err := r.fullSince(ctx, s.At, s.At.Sub(first.CreatedAt))
	if err != nil {
		return err
	}
	s.QuotaWait.Since = latest(first.CreatedAt, run)
	return nil
}

// quotaWaitOf reports whether j, a converted job, waits for the request
// window at now: no step holds it, and a quota put it off. In converted,
// no save but the quota's wait ends a claim with the attempts back to 0
// (the other saves keep the claim); a recognizer's refusal is released
// with its code.
func (r Reader) quotaWaitOf(j job.Job, now time.Time) bool {
	if held(j, now) {
		return false
	}
	return j.Attempts == 0 || (r.Config.QuotaCode != "" && j.ErrorCode == r.Config.QuotaCode)
}

func held(j job.Job, now time.Time) bool { return j.ClaimID != "" && now.Before(j.ClaimUntil) }

// fullSince returns the start of the run of request windows, ending with
// the current one, in which every window before the current one was full,
// looking back at most over span (and at most maxLookBack windows). The
// current window counts whatever its count: a job waits in it now.
func (r Reader) fullSince(ctx context.Context, now time.Time, span time.Duration) (time.Time, error) {
	w := r.Config.Windows.Request(now)
	start := w.Start
	if r.Counters == nil || w.Limit <= 0 {
		return start, nil
	}
	length := w.End.Sub(w.Start)
	for i := 0; i < maxLookBack && now.Sub(start) < span; i++ {
		prev := start.Add(-length)
		used, err := r.Counters.Used(ctx, r.Config.Windows.RequestsKey, prev)
		if err != nil {
			return time.Time{}, err
		}
		if used < w.Limit {
			break
		}
		start = prev
	}
	return start, nil
}

// maxLookBack bounds the windows fullSince reads: an hour of 10-minute
// windows.
const maxLookBack = 6

func latest(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// readOldest says what the oldest live job waits for. It runs after
// readJobs and readRequests.
func (r Reader) readOldest(ctx context.Context, s *Status) error {
	if s.Oldest == nil {
		return nil
	}
	j, err := r.Jobs.Get(ctx, s.Oldest.JobID)
	if errs.Is(err, errs.NotFound) {
		s.Oldest = nil // gone since it was counted
		return nil
	}
	if err != nil {
		return err
	}
	if j.State.Terminal() {
		s.Oldest = nil // ended since it was counted
		return nil
	}
	s.Oldest = &Waiting{JobID: j.ID, State: j.State, CreatedAt: j.CreatedAt, For: r.reasonOf(j, s.At),
		Code: j.ErrorCode, Attempts: j.Attempts, Until: j.NextRunAt}
	return nil
}

// reasonOf says what live job j waits for at now, from its row: see the
// reasons.
func (r Reader) reasonOf(j job.Job, now time.Time) Reason {
	switch {
	case held(j, now):
		return ForStep
	case j.State == job.Converted && r.quotaWaitOf(j, now):
		return ForQuota
	case j.State == job.Transcribe && unsubmitted(j) && r.putOffByQuota(j):
		return ForQuota
	case j.Attempts > 0 && j.ErrorCode != "":
		return ForRetry
	case j.State == job.Transcribe && unsubmitted(j):
		return ForSlot
	case j.State == job.AwaitingUpload:
		return ForUpload
	case j.State == job.Transcribe:
		return ForRecognition
	}
	return ForTurn
}

// putOffByQuota reports whether j's next run is at the end of a request
// window, where both the service's count and the recognizer's refusal put
// a job off (the error code alone would not do: a save keeps the last
// one). The store adds to the pause the little time between the
// pipeline's reading of the clock and its own (quotaSlack); a pause of
// another kind ends there by chance once in hundreds.
func (r Reader) putOffByQuota(j job.Job) bool {
	w := r.Config.Windows.Request(j.NextRunAt)
	if w.End.IsZero() {
		return false
	}
	return j.NextRunAt.Sub(w.Start) < quotaSlack
}

// quotaSlack: see putOffByQuota.
const quotaSlack = time.Second

// unsubmitted reports whether j has a piece not yet sent to the
// recognizer (the pipeline's waitingForSlot).
func unsubmitted(j job.Job) bool {
	for _, sg := range j.Segments {
		if sg.OperationID == "" && !sg.Done {
			return true
		}
	}
	return false
}

func (r Reader) readAudio(ctx context.Context, s *Status) error {
	month, end := spend.Month(s.At)
	s.Audio = spend.Window{LimitSeconds: int64(r.Config.AudioPerMonth / time.Second), ResetsAt: end}
	if r.Counters == nil {
		return nil
	}
	var err error
	if s.Audio.UsedSeconds, err = r.Counters.Used(ctx, spend.MonthKey, month); err != nil {
		return err
	}
	if s.Audio.AudioSeconds, err = r.Counters.Used(ctx, spend.AudioMonthKey, month); err != nil {
		return err
	}
	return nil
}

func (r Reader) readSpend(ctx context.Context, s *Status) error {
	month, end := spend.Month(s.At)
	s.Spend = Spend{BudgetMicros: r.Config.BudgetPerMonth, BudgetRub: spend.RublesFloat(r.Config.BudgetPerMonth),
		ResetsAt: end, Kinds: make([]KindSpend, 0, len(spend.Kinds))}
	if r.Counters == nil {
		return nil
	}
	var err error
	if s.Spend.UsedMicros, err = r.Counters.Used(ctx, spend.BudgetKey, month); err != nil {
		return err
	}
	s.Spend.UsedRub = spend.RublesFloat(s.Spend.UsedMicros)
	for _, k := range spend.Kinds {
		n, err := r.Counters.Used(ctx, spend.CostKey(k), month)
		if err != nil {
			return err
		}
		s.Spend.Kinds = append(s.Spend.Kinds, KindSpend{Kind: k, Micros: n, Rub: spend.RublesFloat(n)})
	}
	return nil
}

func (r Reader) readDeliveries(ctx context.Context, s *Status) error {
	limit := r.Config.limit()
	got, err := r.Deliveries.PendingDeliveries(ctx, limit+1)
	if err != nil {
		return err
	}
	d := &TelegramState{Pending: min(len(got), limit), More: len(got) > limit}
	for _, x := range got[:d.Pending] {
		free := !x.LeaseUntil.After(s.At)
		if free && !x.NextAt.After(s.At) {
			d.Due++
		}
		if free && x.Attempts > 0 {
			d.Failing++
		}
	}
	if d.Pending > 0 {
		d.OldestDue = got[0].NextAt // the range is read by next_at
	}
	s.Telegram = d
	return nil
}

func (r Reader) readCallbacks(ctx context.Context, s *Status) error {
	limit := r.Config.limit()
	pending, err := r.Callbacks.CallbacksInState(ctx, callback.Pending, time.Time{}, limit+1)
	if err != nil {
		return err
	}
	failed, err := r.Callbacks.CallbacksInState(ctx, callback.Failed, s.EndedSince, limit+1)
	if err != nil {
		return err
	}
	c := &CallbackState{Pending: min(len(pending), limit), More: len(pending) > limit,
		Failed: min(len(failed), limit), FailedMore: len(failed) > limit, Endpoints: []Endpoint{}}
	hosts := map[string]*Endpoint{}
	see := func(d callback.Delivery) {
		if d.Attempts == 0 || d.LastError == "" {
			return // never POSTed: failed for its job or token, not the endpoint
		}
		host := hostOf(d.URL)
		e := hosts[host]
		if e == nil {
			e = &Endpoint{Host: host}
			hosts[host] = e
		}
		e.Failures += d.Attempts
		e.Callbacks++
		if !d.LastAt.Before(e.LastAt) {
			e.LastAt, e.LastError, e.LastStatus = d.LastAt, d.LastError, d.LastStatus
		}
	}
	for _, d := range pending[:c.Pending] {
		if d.Attempts > 0 && d.LastError != "" {
			c.Failing++
		}
		see(d)
	}
	for _, d := range failed[:c.Failed] {
		see(d)
	}
	for _, e := range hosts {
		c.Endpoints = append(c.Endpoints, *e)
	}
	sort.Slice(c.Endpoints, func(i, k int) bool {
		a, b := c.Endpoints[i], c.Endpoints[k]
		if a.Failures != b.Failures {
			return a.Failures > b.Failures
		}
		return a.Host < b.Host
	})
	s.Callbacks = c
	return nil
}

// hostOf is the host (and port) of a callback URL; "" when it has none.
func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Host
}
