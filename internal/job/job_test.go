package job_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/errs"
	"transcriber/internal/job"
)

func TestCanMove(t *testing.T) {
	allowed := map[job.State][]job.State{
		job.AwaitingUpload: {job.AwaitingUpload, job.Created, job.Done, job.Failed, job.Dead}, // done: a reused transcript
		job.Created:        {job.Created, job.Converted, job.Done, job.Failed, job.Dead},
		job.Converted:      {job.Converted, job.Transcribe, job.Failed, job.Dead},
		job.Transcribe:     {job.Transcribe, job.Done, job.Failed, job.Dead},
		job.Done:           nil,
		job.Failed:         nil,
		job.Dead:           nil,
	}
	for _, from := range job.States {
		for _, to := range job.States {
			want := false
			for _, a := range allowed[from] {
				want = want || a == to
			}
			require.Equal(t, want, job.CanMove(from, to), "%s to %s", from, to)
		}
		require.False(t, job.CanMove(from, "paused"), "unknown target")
		require.False(t, job.CanMove("paused", from), "unknown source")
	}
}

func TestTerminal(t *testing.T) {
	for _, s := range job.States {
		want := s == job.Done || s == job.Failed || s == job.Dead
		require.Equal(t, want, s.Terminal(), string(s))
		require.True(t, s.Valid())
	}
	require.False(t, job.State("").Valid())
}

func TestPolicyPause(t *testing.T) {
	p := job.DefaultPolicy
	want := []time.Duration{time.Second, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second}
	for attempt, w := range want {
		require.Equal(t, w, p.Pause(attempt), "attempt %d", attempt)
	}
	require.Equal(t, 256*time.Second, p.Pause(9))
	require.Equal(t, 5*time.Minute, p.Pause(10), "capped at 5 min")
	require.Equal(t, 5*time.Minute, p.Pause(1000), "no overflow for large attempts")

	odd := job.Policy{MaxAttempts: 3, BasePause: 7 * time.Second, MaxPause: 20 * time.Second}
	require.Equal(t, 14*time.Second, odd.Pause(2))
	require.Equal(t, 20*time.Second, odd.Pause(3), "a cap that is not a power of two")
}

func TestPolicyJudge(t *testing.T) {
	p := job.DefaultPolicy
	transient := errs.New(errs.Unavailable, "", "")
	require.Equal(t, job.Retry, p.Judge(1, transient))
	require.Equal(t, job.Retry, p.Judge(4, transient))
	require.Equal(t, job.Die, p.Judge(5, transient), "the fifth failure is the last")
	require.Equal(t, job.Retry, p.Judge(1, errors.New("unknown")), "an unknown error may pass")
	require.Equal(t, job.Die, p.Judge(5, errors.New("unknown")))
	for _, k := range []errs.Kind{errs.Permanent, errs.Invalid, errs.NotFound} {
		require.Equal(t, job.Fail, p.Judge(1, errs.New(k, "", "")), k.String())
		require.Equal(t, job.Fail, p.Judge(5, errs.New(k, "", "")), "%s even at the limit", k)
	}
}

func TestAbandoned(t *testing.T) {
	p := job.DefaultPolicy
	require.False(t, p.Abandoned(job.Job{Attempts: 5}), "the fifth attempt runs")
	require.True(t, p.Abandoned(job.Job{Attempts: 6}))
}

func TestFailureOfShowsNoCause(t *testing.T) {
	err := errs.Wrap(errors.New("PUT https://storage.yandexcloud.net/b/sources/x?X-Amz-Signature=abc: 503"),
		errs.Unavailable, "storage_unavailable", "storage did not answer")
	f := job.FailureOf(err)
	require.Equal(t, job.Failure{Code: "storage_unavailable", Message: "storage did not answer"}, f)
	require.Equal(t, "internal", job.FailureOf(errors.New("x")).Code)
}

func TestDue(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	j := job.Job{State: job.Created, NextRunAt: now}
	require.True(t, j.Due(now), "due at next_run_at")
	require.False(t, j.Due(now.Add(-time.Millisecond)))
	j.ClaimID, j.ClaimUntil = "c", now.Add(time.Second)
	require.False(t, j.Due(now), "held")
	require.True(t, j.Due(now.Add(time.Second)), "the claim expired")
	j.State = job.Done
	require.False(t, j.Due(now.Add(time.Hour)), "finished jobs are never due")
}

func TestApplyClaimRejectsTerminalStatesWhateverTheStep(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	all := job.Step{Name: "all", From: job.States, Lease: time.Minute}
	for _, s := range []job.State{job.Done, job.Failed, job.Dead} {
		_, err := job.ApplyClaim(job.Job{ID: "x", State: s}, all, now)
		require.ErrorIs(t, err, job.ErrNotClaimable, string(s))
	}
}

func TestDraftValidate(t *testing.T) {
	ok := job.Draft{Source: job.SourceAPI}
	require.NoError(t, ok.Validate())
	tg := job.Draft{Source: job.SourceTelegram, TelegramChatID: -5, TelegramMessageID: 9}
	require.NoError(t, tg.Validate(), "group chat ids are negative")
	bad := job.Draft{Source: job.SourceTelegram}
	require.ErrorIs(t, bad.Validate(), job.ErrInvalid)
	_, err := job.NewJob(tg, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	require.ErrorIs(t, err, job.ErrInvalid, "a Telegram draft is created for its message")
	_, err = job.NewMessageJob(ok, time.Time{})
	require.ErrorIs(t, err, job.ErrInvalid)
}

// The characters kept out of a file name are exactly the controls (C0,
// DEL, C1) and the bidirectional overrides and isolates: the runes beside
// each range stay.
func TestUnsafeFilenameRunes(t *testing.T) {
	for _, r := range []rune{0, '\t', '\n', 0x1b, 0x1f, 0x7f, 0x80, 0x85, 0x9b, 0x9f,
		0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069} {
		require.True(t, job.UnsafeFilenameRune(r), "%U", r)
	}
	for _, r := range []rune{' ', '!', '~', 0xa0, 0xa9, 0x2060, 0x202f, 0x206a, 'я', '🎙'} {
		require.False(t, job.UnsafeFilenameRune(r), "%U", r)
	}
}

// A name taken as it comes keeps what it shows and loses what hides it.
func TestCleanFilename(t *testing.T) {
	for in, want := range map[string]string{
		"a\u202egpm.exe\u001b[31m":            "agpm.exe[31m",
		"\u2066Запись\u2069 интервью.m4a\r\n": "Запись интервью.m4a",
		"\u202e \u0085":                       "",
		"voice.ogg":                           "voice.ogg",
		"bad\xffbyte.ogg":                     "bad\ufffdbyte.ogg",
	} {
		require.Equal(t, want, job.CleanFilename(in), "%q", in)
	}
}

// An ended job's next run is its end, whatever pause the save names: the
// status counts a final state's jobs of the last day on jobs_due by it.
func TestAnEndedJobIsDueAtItsEnd(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	held, err := job.ApplyClaim(job.Job{ID: "x", State: job.Transcribe, NextRunAt: now}, job.Poll, now)
	require.NoError(t, err)
	for _, s := range []job.State{job.Done, job.Failed, job.Dead} {
		next := held
		next.State = s
		for _, n := range []job.Next{{}, {After: time.Hour}, {Keep: true, After: time.Minute}} {
			got, err := job.ApplySave(held, next, n, now.Add(time.Second))
			require.NoError(t, err)
			require.Equal(t, now.Add(time.Second), got.NextRunAt, "%s saved with %+v", s, n)
			require.Equal(t, got.EndedAt, got.NextRunAt)
		}
	}
	live := held
	got, err := job.ApplySave(held, live, job.Next{After: time.Hour}, now)
	require.NoError(t, err)
	require.Equal(t, now.Add(time.Hour), got.NextRunAt, "a live job keeps its pause")
}
