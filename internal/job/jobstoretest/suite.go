// Package jobstoretest is the contract every job.Store must keep.
//
// Run it from an implementation's tests:
//
//	func TestContract(t *testing.T) {
//		jobstoretest.Run(t, func(t *testing.T, clk clock.Clock) (job.Store, func()) { … })
//	}
//
// The suite holds the store's clock and moves it by hand, so leases and
// pauses are tested without sleeping. It includes the races: many goroutines
// claiming one job, draining a queue, and creating the job of one Telegram
// message; exactly one must win each. Run it with -race.
package jobstoretest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/clock"
	"transcriber/internal/clock/clocktest"
	"transcriber/internal/job"
)

// Opener opens a fresh, empty store that reads the time from clk. The
// returned function breaks the backend (closes its connection, stops its
// server): every later call that reaches the backend must fail. The suite
// uses it to show that a malformed id never reaches the backend.
type Opener func(t *testing.T, clk clock.Clock) (st job.Store, breakBackend func())

// Start is the suite's clock reading when a store opens. It has a
// sub-millisecond part, so a store that keeps time at a coarser precision
// must truncate consistently (the job it returns equals the job it stores).
var Start = time.Date(2026, 3, 1, 10, 0, 0, 123_456_789, time.UTC)

// Racers is how many goroutines the race tests run at once, and Rounds how
// many times each race is repeated.
const (
	Racers = 16
	Rounds = 20
)

// Run runs the whole contract against stores made by open.
func Run(t *testing.T, open Opener) {
	t.Run("Create", func(t *testing.T) { testCreate(t, open) })
	t.Run("CreateForMessage", func(t *testing.T) { testCreateForMessage(t, open) })
	t.Run("CreateOnce", func(t *testing.T) { testCreateOnce(t, open) })
	t.Run("Delete", func(t *testing.T) { testDelete(t, open) })
	t.Run("Forget", func(t *testing.T) { testForget(t, open) })
	t.Run("Ended", func(t *testing.T) { testEnded(t, open) })
	t.Run("Get", func(t *testing.T) { testGet(t, open) })
	t.Run("Claim", func(t *testing.T) { testClaim(t, open) })
	t.Run("ClaimDue", func(t *testing.T) { testClaimDue(t, open) })
	t.Run("Save", func(t *testing.T) { testSave(t, open) })
	t.Run("Release", func(t *testing.T) { testRelease(t, open) })
	t.Run("Renew", func(t *testing.T) { testRenew(t, open) })
	t.Run("TakeBack", func(t *testing.T) { testTakeBack(t, open) })
	t.Run("Settle", func(t *testing.T) { testSettle(t, open) })
	t.Run("Segments", func(t *testing.T) { testSegments(t, open) })
	t.Run("NextDue", func(t *testing.T) { testNextDue(t, open) })
	t.Run("List", func(t *testing.T) { testList(t, open) })
	t.Run("Charged", func(t *testing.T) { testCharged(t, open) })
	t.Run("Priority", func(t *testing.T) { testPriority(t, open) })
	t.Run("Features", func(t *testing.T) { testFeatures(t, open) })
	t.Run("Recognition", func(t *testing.T) { testRecognition(t, open) })
	t.Run("Reuse", func(t *testing.T) { testReuse(t, open) })
	t.Run("Races", func(t *testing.T) { testRaces(t, open) })
}

// env is one fresh store and its clock.
type env struct {
	st    job.Store
	clk   *clocktest.Fake
	brk   func()
	ctx   context.Context
	start time.Time
}

func newEnv(t *testing.T, open Opener) *env {
	t.Helper()
	clk := clocktest.NewFake(Start)
	st, brk := open(t, clk)
	return &env{st: st, clk: clk, brk: brk, ctx: context.Background(), start: Start}
}

// now is the clock at the precision the store keeps: whatever the store
// returns for "now" must equal it up to a millisecond.
func (e *env) now() time.Time { return e.clk.Now() }

func (e *env) advance(d time.Duration) { e.clk.Advance(d) }

func apiDraft(owner string) job.Draft {
	return job.Draft{
		Source:       job.SourceAPI,
		OwnerID:      owner,
		Language:     "ru-RU",
		Filename:     "interview.m4a",
		SizeBytes:    12_345_678,
		ContentType:  "audio/mp4",
		UploadWindow: time.Hour,
	}
}

func messageDraft(chat, msg int64) job.Draft {
	return job.Draft{
		Source:            job.SourceTelegram,
		Filename:          "voice.ogg",
		SizeBytes:         40_000,
		ContentType:       "audio/ogg",
		TelegramChatID:    chat,
		TelegramMessageID: msg,
	}
}

func (e *env) mustCreate(t *testing.T, d job.Draft) job.Job {
	t.Helper()
	j, err := e.st.Create(e.ctx, d)
	require.NoError(t, err)
	return j
}

func (e *env) mustGet(t *testing.T, id string) job.Job {
	t.Helper()
	j, err := e.st.Get(e.ctx, id)
	require.NoError(t, err)
	return j
}

func (e *env) mustClaim(t *testing.T, id string, step job.Step) job.Job {
	t.Helper()
	j, err := e.st.Claim(e.ctx, id, step)
	require.NoError(t, err)
	return j
}

func (e *env) mustSave(t *testing.T, j job.Job, n job.Next) job.Job {
	t.Helper()
	saved, err := e.st.Save(e.ctx, j, n)
	require.NoError(t, err)
	return saved
}

// mustJobIn makes a job and walks it to state (a live state), leaving it
// unclaimed and due after the given delay.
func (e *env) mustJobIn(t *testing.T, owner string, state job.State, after time.Duration) job.Job {
	t.Helper()
	j := e.mustCreate(t, apiDraft(owner))
	path := []job.State{job.Created, job.Converted, job.Transcribe}
	if state == job.AwaitingUpload {
		j = e.mustClaim(t, j.ID, job.Ingest)
		return e.mustSave(t, j, job.Next{After: after})
	}
	for _, s := range path {
		step := job.Ingest
		if j.State == job.Transcribe {
			step = job.Poll
		}
		j = e.mustClaim(t, j.ID, step)
		j.State = s
		delay := time.Duration(0)
		if s == state {
			delay = after
		}
		j = e.mustSave(t, j, job.Next{After: delay})
		if s == state {
			return j
		}
	}
	t.Fatalf("mustJobIn: %s is not a live state past awaiting_upload", state)
	return job.Job{}
}

// requireSameTime compares moments at millisecond precision, the coarsest a
// store may keep.
func requireSameTime(t *testing.T, want, got time.Time, what string) {
	t.Helper()
	require.WithinDuration(t, want, got, time.Millisecond, what)
	require.Equal(t, time.UTC, got.Location(), "%s is UTC", what)
}
