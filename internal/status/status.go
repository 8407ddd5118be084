// Package status is the owner's view of the service (`transcriber status`,
// the bot's /status, and Decide's alerts): jobs waiting and why, what ended
// in the last day, the request window, the month's audio and money,
// Telegram deliveries and callbacks. It only reads, each read a range of an
// index bounded by Config.Cap (docs/database.md).
package status

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"transcriber/internal/callback"
	"transcriber/internal/errs"
	"transcriber/internal/job"
	"transcriber/internal/outbox"
	"transcriber/internal/quota"
	"transcriber/internal/spend"
)

// Jobs reads ranges of jobs_due (state, next_run_at, id), an ended job's
// next_run_at being when it ended; limits outside 1..MaxRead are ErrInvalid.
// StateEntries returns up to limit jobs in state from since, by next_run_at
// then id, with only ID, State and NextRunAt; LatestInState, latest first,
// whole jobs without segments.
type Jobs interface {
	StateEntries(ctx context.Context, state job.State, since time.Time, limit int) ([]job.Job, error)
	LatestInState(ctx context.Context, state job.State, since time.Time, limit int) ([]job.Job, error)
	Get(ctx context.Context, id string) (job.Job, error)
}

// Outbox reads up to limit entries of kind in state with next_at at or
// after since (zero: all), by next_at then key. Errors: ErrInvalid.
type Outbox interface {
	InState(ctx context.Context, kind outbox.Kind, state outbox.State, since time.Time, limit int) ([]outbox.Entry, error)
}

const MaxRead = 10_000

var ErrInvalid = errs.New(errs.Invalid, "status_invalid", "the status read is not valid")

// CheckRead is every store's rule for a read's limit.
func CheckRead(limit int) error {
	if limit < 1 || limit > MaxRead {
		return fmt.Errorf("%w: limit %d outside 1..%d", ErrInvalid, limit, MaxRead)
	}
	return nil
}

const (
	DefaultCap = 1000           // rows a range counts, whatever the backlog; past it a count reads "more than"
	Span       = 24 * time.Hour // how far back ended jobs and failed callbacks count
	LatestDead = 5              // how many of the latest dead jobs are named
)

// Config is the installation's settings the status needs; a zero limit is none.
type Config struct {
	Windows        Windows
	QuotaCode      string // the code of a recognizer's quota refusal; "": none recognized
	AudioPerMonth  time.Duration
	BudgetPerMonth int64 // µ₽
	Cap            int   // rows counted a range; 0: DefaultCap
}

func (c Config) limit() int {
	if c.Cap <= 0 || c.Cap >= MaxRead {
		return DefaultCap
	}
	return c.Cap
}

// Reader reads the status; nil Counters read as zero, a nil Outbox leaves
// the Telegram and callback parts out.
type Reader struct {
	Jobs     Jobs
	Counters quota.Counters
	Outbox   Outbox
	Config   Config
}

// Status is the service's state at one moment; Ended, Failures and Dead
// count since EndedSince (Span before At).
type Status struct {
	At         time.Time `json:"at"`
	Live       []Count   `json:"live"` // in pipeline order
	Ended      []Count   `json:"ended"`
	EndedSince time.Time `json:"ended_since"`
	Oldest     *Waiting  `json:"oldest,omitempty"` // nil: no live job
	Failures   []Failure `json:"failures"`         // by state and code, most first
	Dead       []Ended   `json:"dead"`             // latest first, at most LatestDead
	QuotaWait  QuotaWait `json:"quota_wait"`
	Requests   Requests  `json:"requests"`
	// Audio and Spend are this UTC month's, against the monthly limits.
	Audio     spend.Window   `json:"audio_month"`
	Spend     Spend          `json:"spend_month"`
	Telegram  *TelegramState `json:"telegram,omitempty"`  // nil without an outbox
	Callbacks *CallbackState `json:"callbacks,omitempty"` // nil without an outbox
}

// Spend is the month's money counted against the budget, and what done
// jobs cost by kind. Amounts in µ₽; the JSON says rubles.
type Spend struct {
	UsedMicros   int64       `json:"-"`
	BudgetMicros int64       `json:"-"`
	UsedRub      float64     `json:"used_rub"`
	BudgetRub    float64     `json:"budget_rub"` // 0: no budget
	Kinds        []KindSpend `json:"kinds"`
	ResetsAt     time.Time   `json:"resets_at"`
}

// SpendKinds writes the money by kind: "async 12.10 ₽, deferred 0.00 ₽, …".
func SpendKinds(sp Spend) string {
	parts := make([]string, 0, len(sp.Kinds))
	for _, k := range sp.Kinds {
		parts = append(parts, fmt.Sprintf("%s %s ₽", k.Kind, spend.Rubles(k.Micros)))
	}
	return strings.Join(parts, ", ")
}

type KindSpend struct {
	Kind   spend.Mode `json:"kind"`
	Micros int64      `json:"-"`
	Rub    float64    `json:"rub"`
}

// Count is a state's jobs; More: the read stopped at the cap.
type Count struct {
	State job.State `json:"state"`
	Jobs  int       `json:"jobs"`
	More  bool      `json:"more,omitempty"`
}

// Reason is what a live job waits for, until Waiting.Until.
type Reason string

const (
	ForUpload      Reason = "upload"           // its file, until the upload window closes
	ForStep        Reason = "step"             // a step holds its claim
	ForQuota       Reason = "recognizer_quota" // the request window (ours, or the recognizer's refusal)
	ForSlot        Reason = "slot"             // a place among its job's recognitions in flight (MAX_PIECES)
	ForRetry       Reason = "retry"            // its last attempt failed (Waiting.Code)
	ForRecognition Reason = "recognition"      // the recognizer works on it
	ForTurn        Reason = "turn"             // due, waiting for the timer's sweep
)

type Waiting struct {
	JobID     string    `json:"job_id"`
	State     job.State `json:"state"`
	CreatedAt time.Time `json:"created_at"`
	For       Reason    `json:"waits_for"`
	Code      string    `json:"code,omitempty"` // its last failure
	Attempts  int       `json:"attempts,omitempty"`
	Until     time.Time `json:"until"` // its next_run_at
}

type Failure struct {
	State job.State `json:"state"`
	Code  string    `json:"code"`
	Jobs  int       `json:"jobs"`
}

type Ended struct {
	JobID string    `json:"job_id"`
	Code  string    `json:"code"`
	At    time.Time `json:"at"`
}

// QuotaWait counts the converted jobs no step holds that a quota put off
// (saved with attempts 0 by our count, or released with the recognizer's
// quota code). Jobs whose later pieces wait in transcribe are not counted.
type QuotaWait struct {
	Jobs     int    `json:"jobs"`
	More     bool   `json:"more,omitempty"`
	OldestID string `json:"oldest_job_id,omitempty"`
	// Since is the earliest the longest wait can have begun (rows keep no
	// start): its job's making or the run of full windows ending now.
	Since time.Time `json:"since"`
}

// Requests is the recognizer's request window (SPEECHKIT_REQUESTS_PER_HOUR).
type Requests struct {
	Paced    bool      `json:"paced"` // false: not counted
	Used     int64     `json:"used"`
	Allowed  int64     `json:"allowed"`
	Start    time.Time `json:"window_start"`
	ResetsAt time.Time `json:"resets_at"`
}

// TelegramState is the bot's pending deliveries. Due: due and unleased;
// Failing: tried, not sent, unleased.
type TelegramState struct {
	Pending   int       `json:"pending"`
	More      bool      `json:"more,omitempty"`
	Due       int       `json:"due"`
	Failing   int       `json:"failing"`
	OldestDue time.Time `json:"oldest_due"` // zero: none pending
}

// CallbackState is the API's callbacks: Failing are pending with failed
// POSTs, Failed gave up since Status.EndedSince.
type CallbackState struct {
	Pending    int        `json:"pending"`
	More       bool       `json:"more,omitempty"`
	Failing    int        `json:"failing"`
	Failed     int        `json:"failed"`
	FailedMore bool       `json:"failed_more,omitempty"`
	Endpoints  []Endpoint `json:"failing_endpoints"` // most failed POSTs first
}

// Endpoint is a failing callback host; only the host, since a callback
// URL's path and query may carry the client's secret.
type Endpoint struct {
	Host       string    `json:"host"`
	Failures   int       `json:"failures"` // failed POSTs of its undelivered callbacks
	Callbacks  int       `json:"callbacks"`
	LastError  string    `json:"last_error,omitempty"`
	LastStatus int       `json:"last_status,omitempty"` // 0: no answer
	LastAt     time.Time `json:"last_at"`
}

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
	if r.Outbox != nil {
		fail("telegram deliveries", r.readDeliveries(ctx, &s))
		fail("callbacks", r.readCallbacks(ctx, &s))
	}
	if err := errors.Join(errList...); err != nil {
		return Status{}, fmt.Errorf("read the status: %w", err)
	}
	return s, nil
}

// readJobs counts the live states and the last Span's final ones, with
// the failed and dead jobs' codes; the oldest live job has the lowest id.
func (r Reader) readJobs(ctx context.Context, s *Status) error {
	limit := r.Config.limit()
	byCode := map[Failure]int{}
	for _, st := range job.States { // the live states first
		var got []job.Job
		var err error
		switch {
		case !st.Terminal():
			got, err = r.Jobs.StateEntries(ctx, st, time.Time{}, limit+1)
		case st == job.Done: // only the count: the index alone answers it
			got, err = r.Jobs.StateEntries(ctx, st, s.EndedSince, limit+1)
		default:
			got, err = r.Jobs.LatestInState(ctx, st, s.EndedSince, limit+1)
		}
		if err != nil {
			return err
		}
		got, more := upTo(got, limit)
		c := Count{State: st, Jobs: len(got), More: more}
		if !st.Terminal() {
			s.Live = append(s.Live, c)
			for _, j := range got {
				if s.Oldest == nil || j.ID < s.Oldest.JobID {
					s.Oldest = &Waiting{JobID: j.ID}
				}
			}
			continue
		}
		s.Ended = append(s.Ended, c)
		if st == job.Done {
			continue
		}
		for _, j := range got {
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
	slices.SortFunc(s.Failures, func(a, b Failure) int {
		return cmp.Or(cmp.Compare(b.Jobs, a.Jobs), cmp.Compare(a.State, b.State), cmp.Compare(a.Code, b.Code))
	})
	return nil
}

// upTo cuts rows read with a limit of limit+1 to limit; more: it cut.
func upTo[T any](rows []T, limit int) (_ []T, more bool) {
	if len(rows) > limit {
		return rows[:limit], true
	}
	return rows, false
}

// used reads a counter; without Counters, 0.
func (r Reader) used(ctx context.Context, key string, window time.Time) (int64, error) {
	if r.Counters == nil {
		return 0, nil
	}
	return r.Counters.Used(ctx, key, window)
}

func (r Reader) readRequests(ctx context.Context, s *Status) error {
	w := r.Config.Windows.Request(s.At)
	s.Requests = Requests{Paced: w.Limit > 0, Allowed: w.Limit, Start: w.Start, ResetsAt: w.End}
	if w.Limit <= 0 {
		return nil
	}
	var err error
	s.Requests.Used, err = r.used(ctx, r.Config.Windows.RequestsKey, w.Start)
	return err
}

// readQuotaWait runs after readRequests.
func (r Reader) readQuotaWait(ctx context.Context, s *Status) error {
	limit := r.Config.limit()
	got, err := r.Jobs.LatestInState(ctx, job.Converted, time.Time{}, limit+1)
	if err != nil {
		return err
	}
	got, more := upTo(got, limit)
	var waiting []job.Job
	for _, j := range got {
		if r.quotaWaitOf(j, s.At) {
			waiting = append(waiting, j)
		}
	}
	s.QuotaWait = QuotaWait{Jobs: len(waiting), More: more}
	if len(waiting) == 0 {
		return nil
	}
	first := slices.MinFunc(waiting, func(a, b job.Job) int { return a.CreatedAt.Compare(b.CreatedAt) })
	s.QuotaWait.OldestID = first.ID
	run, err := r.fullSince(ctx, s.At, s.At.Sub(first.CreatedAt))
	if err != nil {
		return err
	}
	s.QuotaWait.Since = first.CreatedAt
	if run.After(first.CreatedAt) {
		s.QuotaWait.Since = run
	}
	return nil
}

// quotaWaitOf reports whether converted job j waits for the request
// window: unheld, and put off by a quota. In converted only the quota's
// wait ends a claim with attempts 0; a recognizer's refusal keeps its code.
func (r Reader) quotaWaitOf(j job.Job, now time.Time) bool {
	if held(j, now) {
		return false
	}
	return j.Attempts == 0 || (r.Config.QuotaCode != "" && j.ErrorCode == r.Config.QuotaCode)
}

func held(j job.Job, now time.Time) bool { return j.ClaimID != "" && now.Before(j.ClaimUntil) }

// fullSince is the start of the run of full request windows before the
// current one (which counts anyway: a job waits in it), looking back at
// most span and maxLookBack windows.
func (r Reader) fullSince(ctx context.Context, now time.Time, span time.Duration) (time.Time, error) {
	w := r.Config.Windows.Request(now)
	start := w.Start
	if w.Limit <= 0 {
		return start, nil
	}
	for i := 0; i < maxLookBack && now.Sub(start) < span; i++ {
		prev := start.Add(-w.End.Sub(w.Start))
		used, err := r.used(ctx, r.Config.Windows.RequestsKey, prev)
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

const maxLookBack = 6 // an hour of 10-minute windows

// readOldest runs after readJobs and readRequests.
func (r Reader) readOldest(ctx context.Context, s *Status) error {
	if s.Oldest == nil {
		return nil
	}
	j, err := r.Jobs.Get(ctx, s.Oldest.JobID)
	if err != nil && !errs.Is(err, errs.NotFound) {
		return err
	}
	if err != nil || j.State.Terminal() {
		s.Oldest = nil // gone or ended since it was counted
		return nil
	}
	s.Oldest = &Waiting{JobID: j.ID, State: j.State, CreatedAt: j.CreatedAt, For: r.reasonOf(j, s.At),
		Code: j.ErrorCode, Attempts: j.Attempts, Until: j.NextRunAt}
	return nil
}

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

// putOffByQuota reports whether j's next run is at a request window's
// start, where both our count and the recognizer's refusal put a job off
// (the error code alone would not do: a save keeps the last one). The
// store's clock lags the pipeline's by up to quotaSlack; another pause
// ends there by chance once in hundreds.
func (r Reader) putOffByQuota(j job.Job) bool {
	w := r.Config.Windows.Request(j.NextRunAt)
	return !w.End.IsZero() && j.NextRunAt.Sub(w.Start) < quotaSlack
}

const quotaSlack = time.Second

// unsubmitted: j has a piece not yet sent (the pipeline's waitingForSlot).
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
	var err error
	if s.Audio.UsedSeconds, err = r.used(ctx, spend.MonthKey, month); err != nil {
		return err
	}
	s.Audio.AudioSeconds, err = r.used(ctx, spend.AudioMonthKey, month)
	return err
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
	got, err := r.Outbox.InState(ctx, outbox.Telegram, outbox.Pending, time.Time{}, limit+1)
	if err != nil {
		return err
	}
	got, more := upTo(got, limit)
	d := &TelegramState{Pending: len(got), More: more}
	for _, x := range got {
		free := !x.LeaseUntil.After(s.At)
		if free && !x.NextAt.After(s.At) {
			d.Due++
		}
		// Tried and not sent, or taken by a sender that died (a take
		// leaves LeaseUntil past UpdatedAt; Finish makes them equal).
		if free && (x.Attempts > 0 || x.LeaseUntil.After(x.UpdatedAt)) {
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
	pending, err := r.Outbox.InState(ctx, outbox.Callback, outbox.Pending, time.Time{}, limit+1)
	if err != nil {
		return err
	}
	failed, err := r.Outbox.InState(ctx, outbox.Callback, outbox.Failed, s.EndedSince, limit+1)
	if err != nil {
		return err
	}
	pending, more := upTo(pending, limit)
	failed, failedMore := upTo(failed, limit)
	c := &CallbackState{Pending: len(pending), More: more, Failed: len(failed), FailedMore: failedMore, Endpoints: []Endpoint{}}
	hosts := map[string]*Endpoint{}
	for i, d := range slices.Concat(pending, failed) {
		if d.Attempts == 0 || d.LastError == "" {
			continue // never POSTed: failed for its job or token, not the endpoint
		}
		if i < len(pending) {
			c.Failing++
		}
		host := ""
		if u, err := url.Parse(callback.DeliveryOf(d).URL); err == nil {
			host = u.Host
		}
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
	for _, e := range hosts {
		c.Endpoints = append(c.Endpoints, *e)
	}
	slices.SortFunc(c.Endpoints, func(a, b Endpoint) int {
		return cmp.Or(cmp.Compare(b.Failures, a.Failures), cmp.Compare(a.Host, b.Host))
	})
	s.Callbacks = c
	return nil
}
