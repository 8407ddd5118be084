package status_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/clock/clocktest"
	"transcriber/internal/job"
	"transcriber/internal/spend"
	"transcriber/internal/status"
	"transcriber/internal/store/sqlite"
)

var noon = time.Date(2026, 11, 29, 12, 30, 0, 0, time.UTC)

func kinds(as []status.Alert) []status.Kind {
	out := []status.Kind{}
	for _, a := range as {
		out = append(out, a.Kind)
	}
	return out
}

func TestDecideADeadJob(t *testing.T) {
	dead := []status.Ended{
		{JobID: "01jb", Code: "attempts_exhausted", At: noon.Add(-5 * time.Minute)},
		{JobID: "01ja", Code: "storage_unavailable", At: noon.Add(-20 * time.Minute)},
	}
	s := status.Status{At: noon, Dead: dead}
	for _, c := range []struct {
		name string
		sent status.Sent
		want []status.Alert
	}{
		{"none sent: the latest, and how many more", nil,
			[]status.Alert{{Kind: status.AlertDead, JobID: "01jb", Code: "attempts_exhausted", At: dead[0].At, More: 1}}},
		{"one sent within the hour: none", status.Sent{status.AlertDead: noon.Add(-59 * time.Minute)}, nil},
		{"one sent an hour ago: those since", status.Sent{status.AlertDead: noon.Add(-10 * time.Minute).Add(-time.Hour)},
			[]status.Alert{{Kind: status.AlertDead, JobID: "01jb", Code: "attempts_exhausted", At: dead[0].At, More: 1}}},
		{"one sent 16 minutes ago: none", status.Sent{status.AlertDead: noon.Add(-16 * time.Minute)}, nil},
		{"the others' alerts do not count", status.Sent{status.AlertQuotaWait: noon.Add(-time.Minute)},
			[]status.Alert{{Kind: status.AlertDead, JobID: "01jb", Code: "attempts_exhausted", At: dead[0].At, More: 1}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.want, status.Decide(s, c.sent, noon))
		})
	}
	t.Run("sent over an hour ago, after the first: only the second", func(t *testing.T) {
		sent := status.Sent{status.AlertDead: noon.Add(-90 * time.Minute)}
		late := status.Status{At: noon.Add(time.Hour), Dead: []status.Ended{
			{JobID: "01jb", Code: "c", At: noon.Add(-5 * time.Minute)},
			{JobID: "01ja", Code: "c", At: noon.Add(-100 * time.Minute)},
		}}
		got := status.Decide(late, sent, noon.Add(time.Hour))
		require.Equal(t, []status.Alert{{Kind: status.AlertDead, JobID: "01jb", Code: "c", At: noon.Add(-5 * time.Minute)}}, got)
	})
	t.Run("none on record: only those of the last hour are new", func(t *testing.T) {
		old := status.Status{At: noon, Dead: []status.Ended{{JobID: "01ja", Code: "c", At: noon.Add(-61 * time.Minute)}}}
		require.Empty(t, status.Decide(old, nil, noon))
	})
}

func TestDecideAQuotaWait(t *testing.T) {
	wait := func(d time.Duration) status.Status {
		return status.Status{At: noon, QuotaWait: status.QuotaWait{Jobs: 3, OldestID: "01ja", Since: noon.Add(-d)}}
	}
	require.Empty(t, status.Decide(wait(14*time.Minute), nil, noon), "under 15 minutes")
	require.Equal(t, []status.Alert{{Kind: status.AlertQuotaWait, Jobs: 3, Waited: 15 * time.Minute, At: noon}},
		status.Decide(wait(15*time.Minute), nil, noon))
	require.Empty(t, status.Decide(wait(time.Hour), status.Sent{status.AlertQuotaWait: noon.Add(-30 * time.Minute)}, noon))
	require.Len(t, status.Decide(wait(time.Hour), status.Sent{status.AlertQuotaWait: noon.Add(-time.Hour)}, noon), 1)
	require.Empty(t, status.Decide(status.Status{At: noon}, nil, noon), "no job waits")
}

func TestDecideTheMonthsAudio(t *testing.T) {
	month := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	audio := func(used int64) status.Status {
		return status.Status{At: noon, Audio: spend.Window{UsedSeconds: used, LimitSeconds: 1000, ResetsAt: month.AddDate(0, 1, 0)}}
	}
	thisMonth, lastMonth := month.Add(time.Hour), month.Add(-time.Hour)
	for _, c := range []struct {
		name string
		used int64
		sent status.Sent
		want []status.Kind
	}{
		{"under 80 %", 799, nil, []status.Kind{}},
		{"80 %", 800, nil, []status.Kind{status.AlertAudio80}},
		{"80 % again this month", 900, status.Sent{status.AlertAudio80: thisMonth}, []status.Kind{}},
		{"80 % again, told last month", 900, status.Sent{status.AlertAudio80: lastMonth}, []status.Kind{status.AlertAudio80}},
		{"100 %: that one only", 1000, nil, []status.Kind{status.AlertAudio100}},
		{"100 % after 80 %", 1200, status.Sent{status.AlertAudio80: thisMonth}, []status.Kind{status.AlertAudio100}},
		{"100 % again this month", 1200, status.Sent{status.AlertAudio100: thisMonth}, []status.Kind{}},
		{"80 % after 100 % this month (the limit was raised)", 850, status.Sent{status.AlertAudio100: thisMonth}, []status.Kind{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.want, kinds(status.Decide(audio(c.used), c.sent, noon)))
		})
	}
	got := status.Decide(audio(800), nil, noon)
	require.Equal(t, int64(800), got[0].UsedSeconds)
	require.Equal(t, int64(1000), got[0].LimitSeconds)
	require.Empty(t, status.Decide(status.Status{At: noon, Audio: spend.Window{UsedSeconds: 1 << 40}}, nil, noon), "no limit, no alert")
}

func TestDecideFailingCallbacks(t *testing.T) {
	cb := func(failures ...int) status.Status {
		c := &status.CallbackState{}
		for i, f := range failures {
			c.Endpoints = append(c.Endpoints, status.Endpoint{Host: string(rune('a'+i)) + ".example", Failures: f, LastStatus: 503, LastAt: noon})
		}
		return status.Status{At: noon, Callbacks: c}
	}
	require.Empty(t, status.Decide(cb(4, 1), nil, noon), "4 failed POSTs are not yet 5")
	got := status.Decide(cb(7, 5, 4), nil, noon)
	require.Equal(t, []status.Kind{status.AlertCallbacks}, kinds(got))
	require.Equal(t, "a.example", got[0].Endpoint.Host)
	require.Equal(t, 2, got[0].Endpoints)
	require.Empty(t, status.Decide(cb(7), status.Sent{status.AlertCallbacks: noon.Add(-time.Minute)}, noon))
}

func openCounters(t *testing.T) *sqlite.Counters {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "counters.db"), clocktest.NewFake(noon))
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	return sqlite.NewCounters(db)
}

// The record keeps the moment of each alert, one per kind and window.
func TestTheGateRecordsEachAlertOnce(t *testing.T) {
	ctx := context.Background()
	g := status.Gate{Counters: openCounters(t)}
	at := noon.Add(1234 * time.Millisecond)
	ok, err := g.Take(ctx, status.AlertDead, at)
	require.NoError(t, err)
	require.True(t, ok)
	ok, err = g.Take(ctx, status.AlertDead, at.Add(10*time.Minute))
	require.NoError(t, err)
	require.False(t, ok, "a second in the same hour")

	sent, err := g.Sent(ctx, at.Add(time.Minute))
	require.NoError(t, err)
	require.Equal(t, status.Sent{status.AlertDead: at}, sent, "to the millisecond")
	sent, err = g.Sent(ctx, at.Add(time.Hour))
	require.NoError(t, err)
	require.Equal(t, status.Sent{status.AlertDead: at}, sent, "found in the previous hour")
	sent, err = g.Sent(ctx, at.Add(2*time.Hour))
	require.NoError(t, err)
	require.Empty(t, sent, "two hours on it no longer matters")

	ok, err = g.Take(ctx, status.AlertDead, at.Add(time.Hour))
	require.NoError(t, err)
	require.True(t, ok, "the next hour's")
	sent, err = g.Sent(ctx, at.Add(time.Hour+time.Minute))
	require.NoError(t, err)
	require.Equal(t, at.Add(time.Hour), sent[status.AlertDead], "the latest")

	// The month's thresholds are kept for the month.
	ok, err = g.Take(ctx, status.AlertAudio80, time.Date(2026, 11, 3, 8, 0, 0, 0, time.UTC))
	require.NoError(t, err)
	require.True(t, ok)
	ok, err = g.Take(ctx, status.AlertAudio80, time.Date(2026, 11, 28, 8, 0, 0, 0, time.UTC))
	require.NoError(t, err)
	require.False(t, ok)
	sent, err = g.Sent(ctx, time.Date(2026, 11, 30, 23, 0, 0, 0, time.UTC))
	require.NoError(t, err)
	require.Equal(t, time.Date(2026, 11, 3, 8, 0, 0, 0, time.UTC), sent[status.AlertAudio80])
	sent, err = g.Sent(ctx, time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	require.NoError(t, err)
	require.NotContains(t, sent, status.AlertAudio80)
}

// Senders deciding at once send one alert: the record is one conditional
// update.
func TestOneOfManyTakesTheAlert(t *testing.T) {
	ctx := context.Background()
	g := status.Gate{Counters: openCounters(t)}
	for round := 0; round < 5; round++ {
		at := noon.Add(time.Duration(round) * time.Hour)
		var (
			wg  sync.WaitGroup
			mu  sync.Mutex
			got int
		)
		for i := 0; i < 16; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				ok, err := g.Take(ctx, status.AlertQuotaWait, at.Add(time.Duration(i)*time.Millisecond))
				require.NoError(t, err)
				if ok {
					mu.Lock()
					got++
					mu.Unlock()
				}
			}(i)
		}
		wg.Wait()
		require.Equal(t, 1, got, "round %d", round)
	}
}

func TestOneCallerAQuarterHourDecides(t *testing.T) {
	ctx := context.Background()
	g := status.Gate{Counters: openCounters(t)}
	for _, c := range []struct {
		at   time.Time
		want bool
	}{{noon, true}, {noon.Add(14 * time.Minute), false}, {noon.Add(15 * time.Minute), true}, {noon.Add(16 * time.Minute), false}} {
		ok, err := g.Check(ctx, c.at)
		require.NoError(t, err)
		require.Equal(t, c.want, ok, "at %s", c.at.Format("15:04"))
	}
	_, err := status.Gate{}.Check(ctx, noon)
	require.Error(t, err, "no counters: nothing can be recorded")
}

// The owner receives one alert for a dead job, and none for a second one
// within the hour; the second is told when the hour has passed.
func TestOneAlertForADeadJobAnHour(t *testing.T) {
	e := newEnv(t)
	g := status.Gate{Counters: e.counters}
	var told []status.Alert
	decide := func() {
		s := e.read(t)
		sent, err := g.Sent(e.ctx, s.At)
		require.NoError(t, err)
		for _, a := range status.Decide(s, sent, s.At) {
			ok, err := g.Take(e.ctx, a.Kind, s.At)
			require.NoError(t, err)
			if ok {
				told = append(told, a)
			}
		}
	}
	first := e.end(t, job.Dead, "storage_unavailable")
	decide()
	require.Equal(t, []status.Kind{status.AlertDead}, kinds(told))
	require.Equal(t, first.ID, told[0].JobID)

	e.clk.Advance(20 * time.Minute)
	second := e.end(t, job.Dead, "attempts_exhausted")
	decide()
	e.clk.Advance(20 * time.Minute)
	decide()
	require.Len(t, told, 1, "none for the second within the hour")

	e.clk.Advance(21 * time.Minute)
	decide()
	require.Len(t, told, 2)
	require.Equal(t, second.ID, told[1].JobID, "the second, once the hour passed")
	require.Equal(t, "attempts_exhausted", told[1].Code)
	require.Zero(t, told[1].More, "the first was told already")
	decide()
	require.Len(t, told, 2)
}

// The month's money against the budget has the same two thresholds as
// the month's billed seconds, once a month each.
func TestDecideTheMonthsBudget(t *testing.T) {
	month := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	money := func(used int64) status.Status {
		return status.Status{At: noon, Spend: status.Spend{UsedMicros: used, BudgetMicros: 1_000_000, ResetsAt: month.AddDate(0, 1, 0)}}
	}
	thisMonth := month.Add(time.Hour)
	for _, c := range []struct {
		name string
		used int64
		sent status.Sent
		want []status.Kind
	}{
		{"under 80 %", 799_999, nil, []status.Kind{}},
		{"80 %", 800_000, nil, []status.Kind{status.AlertBudget80}},
		{"80 % again this month", 900_000, status.Sent{status.AlertBudget80: thisMonth}, []status.Kind{}},
		{"100 %", 1_000_000, status.Sent{status.AlertBudget80: thisMonth}, []status.Kind{status.AlertBudget100}},
		{"100 % again this month", 1_200_000, status.Sent{status.AlertBudget100: thisMonth}, []status.Kind{}},
		{"the audio's alert is another", 900_000, status.Sent{status.AlertAudio80: thisMonth}, []status.Kind{status.AlertBudget80}},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.want, kinds(status.Decide(money(c.used), c.sent, noon)))
		})
	}
	got := status.Decide(money(800_000), nil, noon)
	require.Equal(t, int64(800_000), got[0].UsedMicros)
	require.Equal(t, int64(1_000_000), got[0].BudgetMicros)
	require.Empty(t, status.Decide(status.Status{At: noon, Spend: status.Spend{UsedMicros: 1 << 40}}, nil, noon), "no budget, no alert")
}
