package spend_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/clock"
	"transcriber/internal/errs"
	"transcriber/internal/spend"
	"transcriber/internal/store/sqlite"
)

func TestHuman(t *testing.T) {
	for secs, want := range map[int64]string{
		0: "0 s", 45: "45 s", 60: "1 min", 61: "1 min 01 s", 3600: "1 h", 3900: "1 h 05 min",
		7800: "2 h 10 min", 3601: "1 h 00 min 01 s",
	} {
		require.Equal(t, want, spend.Human(secs), secs)
	}
}

func TestWindowsAreUTC(t *testing.T) {
	msk := time.FixedZone("MSK", 3*3600)
	at := time.Date(2027, 1, 1, 1, 30, 0, 0, msk) // 31 Dec 22:30 UTC
	day, dayEnd := spend.Day(at)
	require.Equal(t, time.Date(2026, 12, 31, 0, 0, 0, 0, time.UTC), day)
	require.Equal(t, time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC), dayEnd)
	month, monthEnd := spend.Month(at)
	require.Equal(t, time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), month)
	require.Equal(t, time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC), monthEnd)
}

func TestPayersAndExemption(t *testing.T) {
	require.Equal(t, "tok:01abc", spend.API("01abc"))
	require.Equal(t, "tgu:42", spend.Telegram(42))
	l := spend.Limits{Exempt: map[int64]bool{42: true}}
	require.True(t, l.IsExempt("tgu:42"))
	require.False(t, l.IsExempt("tgu:43"))
	require.False(t, l.IsExempt("tok:42"), "exemption is for Telegram users")
	require.Equal(t, int64(2), spend.Seconds(1001))
	require.Equal(t, int64(1), spend.Seconds(1000))
	require.Zero(t, spend.Seconds(0))
}

// A reservation refused by the month gives back what it took of the day.
func TestReserveRefusedByTheMonthReleasesTheDay(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "c.db"), clock.System())
	require.NoError(t, err)
	defer db.Close()
	c := sqlite.NewCounters(db)
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	l := spend.Limits{AudioPerDay: time.Hour, AudioPerMonth: 10 * time.Second}
	day, err := spend.Reserve(ctx, c, l, "tok:a", spend.Charge{Seconds: 10}, now, true)
	require.NoError(t, err)
	require.Equal(t, time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC), day)
	_, err = spend.Reserve(ctx, c, l, "tok:a", spend.Charge{Seconds: 1}, now, true)
	require.Equal(t, spend.CodeQuotaExceeded, errs.CodeOf(err))
	require.Equal(t, errs.Permanent, errs.KindOf(err))
	used, err := c.Used(ctx, spend.DayKey("tok:a"), day)
	require.NoError(t, err)
	require.Equal(t, int64(10), used, "the refused second is not left on the day")

	require.NoError(t, spend.Release(ctx, c, "tok:a", spend.Charge{Seconds: 10}, day))
	used, err = c.Used(ctx, spend.MonthKey, time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
	require.NoError(t, err)
	require.Zero(t, used)
}
