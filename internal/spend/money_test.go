package spend_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/clock"
	"transcriber/internal/errs"
	"transcriber/internal/job"
	"transcriber/internal/spend"
	"transcriber/internal/store/sqlite"
)

func TestParseRubles(t *testing.T) {
	for in, want := range map[string]int64{
		"0": 0, "150": 150_000_000, "0.1515": 151_500, "1.2": 1_200_000, " 12.000001 ": 12_000_001, ".5": 500_000,
	} {
		got, err := spend.ParseRubles(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	for _, bad := range []string{"", "-1", "1.", "1.0000001", "1,5", "1e3", "abc", "1.2.3", "99999999999999999999"} {
		_, err := spend.ParseRubles(bad)
		require.Error(t, err, bad)
	}
	require.Equal(t, "0.16", spend.Rubles(151_500), "rounded up to the kopeck")
	require.Equal(t, "0.01", spend.Rubles(1))
	require.Equal(t, "0.00", spend.Rubles(0))
	require.Equal(t, "150.00", spend.Rubles(150_000_000))
}

// Plan reserves what SpeechKit bills, not the audio: 15 s at least a
// file, each piece a file, 15-second units synchronously, the larger of
// the two ways for a synchronous try that may fall back, and a summary's
// bound.
func TestPlanIsWhatIsBilled(t *testing.T) {
	l := spend.Limits{Prices: spend.DefaultPrices}
	note := job.Job{Priority: job.PriorityFast}
	for _, tc := range []struct {
		name   string
		j      job.Job
		pieces []int64
		sync   bool
		want   spend.Charge
	}{
		{"a 0.9 s note, asynchronously", job.Job{}, []int64{900}, false, spend.Charge{Seconds: 15, Micros: 151_500}},
		{"a 0.9 s note, synchronously", note, []int64{900}, true, spend.Charge{Seconds: 15, Micros: 162_600}},
		{"a 16 s note, synchronously: two units", note, []int64{16_000}, true, spend.Charge{Seconds: 30, Micros: 325_200}},
		{"15.5 s asynchronously: whole seconds", job.Job{}, []int64{15_500}, false, spend.Charge{Seconds: 16, Micros: 161_600}},
		{"three pieces, each a file", job.Job{}, []int64{60_000, 60_000, 3_000}, false, spend.Charge{Seconds: 135, Micros: 1_363_500}},
		{"deferred", job.Job{Priority: job.PriorityDeferred}, []int64{60_000}, false, spend.Charge{Seconds: 60, Micros: 152_400}},
		{"a summary's bound", job.Job{Features: job.Features{Summary: true}}, []int64{60_000}, false,
			spend.Charge{Seconds: 60, Micros: 606_000 + (60*spend.SummaryTokensPerSecond+spend.SummaryPromptTokens+spend.SummaryAnswerTokens)*1200}},
	} {
		require.Equal(t, tc.want, l.Plan(tc.j, tc.pieces, tc.sync), tc.name)
	}
	done := job.Job{State: job.Done, Recognition: job.RecognitionSync, BilledSeconds: 15, Segments: []job.Segment{{DurationMs: 900}}}
	require.Equal(t, spend.Charge{Seconds: 15, Micros: 162_600 + 230*1200}, l.Cost(done, 230))
}

// The budget is money, over every payer, refused with its own code and a
// sentence for people; what was taken before the refusal goes back.
func TestTheBudgetRefusesWhatWouldPassIt(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "c.db"), clock.System())
	require.NoError(t, err)
	defer db.Close()
	c := sqlite.NewCounters(db)
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	month := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	l := spend.Limits{AudioPerDay: time.Hour, BudgetPerMonth: 500_000, Prices: spend.DefaultPrices}
	ch := spend.Charge{Seconds: 15, Micros: 151_500}
	for range 3 {
		_, err := spend.Reserve(ctx, c, l, "tok:a", ch, now, true)
		require.NoError(t, err)
	}
	_, err = spend.Reserve(ctx, c, l, "tok:b", ch, now, true)
	require.Equal(t, spend.CodeBudgetExceeded, errs.CodeOf(err))
	require.Equal(t, errs.Permanent, errs.KindOf(err))
	require.Contains(t, err.Error(), "0.05 ₽ of this month's budget")
	used, err := c.Used(ctx, spend.DayKey("tok:b"), time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC))
	require.NoError(t, err)
	require.Zero(t, used, "the day's seconds taken before the refusal went back")
	used, err = c.Used(ctx, spend.BudgetKey, month)
	require.NoError(t, err)
	require.Equal(t, int64(454_500), used)

	_, err = spend.Reserve(ctx, c, l, "tok:b", ch, now, false)
	require.NoError(t, err, "what an answer billed past a reservation is counted, never refused")
	used, err = c.Used(ctx, spend.BudgetKey, month)
	require.NoError(t, err)
	require.Equal(t, int64(606_000), used)
}
