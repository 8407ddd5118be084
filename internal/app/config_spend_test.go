package app

import (
	"bytes"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/job"
	"transcriber/internal/spend"
	"transcriber/internal/translate"
)

// The spend limits: their defaults, 0 for no limit, and every consumer
// gets the same.
func TestSpendLimits(t *testing.T) {
	c, err := FromEnv(envOf())
	require.NoError(t, err)
	require.Equal(t, 6*time.Hour, c.Limits.AudioPerDay, "the longest accepted recording fits a day")
	require.Equal(t, 3, c.Limits.ActiveJobs)
	require.Zero(t, c.Limits.AudioPerMonth, "no monthly cap unless told")
	require.Empty(t, c.Limits.Exempt)
	require.Equal(t, spend.DefaultJobLife, c.Limits.JobLife, "the upload link's 24 h is the longest upload window")
	require.Equal(t, c.Limits, c.Pipeline.Limits)
	require.Equal(t, c.Limits, c.API.Limits)
	require.Equal(t, c.Limits, c.Telegram.Limits)

	c, err = FromEnv(envOf("LIMIT_AUDIO_PER_DAY", "0", "LIMIT_ACTIVE_JOBS", "0", "LIMIT_AUDIO_PER_MONTH", "100h",
		"LIMIT_EXEMPT_USERS", "42, 7"))
	require.NoError(t, err)
	require.Zero(t, c.Limits.AudioPerDay, "0 is no limit")
	require.Zero(t, c.Limits.ActiveJobs, "0 is no limit")
	require.Equal(t, 100*time.Hour, c.Limits.AudioPerMonth)
	require.Equal(t, map[int64]bool{42: true, 7: true}, c.Limits.Exempt)

	c, err = FromEnv(envOf("LIMIT_AUDIO_PER_DAY", "0s", "LIMIT_ACTIVE_JOBS", "100"))
	require.NoError(t, err)
	require.Zero(t, c.Limits.AudioPerDay, "0s is no limit too")
	require.Equal(t, spend.MaxActiveJobs, c.Limits.ActiveJobs)

	c, err = FromEnv(envOf("UPLOAD_URL_TTL", "168h"))
	require.NoError(t, err)
	require.Equal(t, 168*time.Hour+2*time.Hour+spend.AfterUpload, c.Limits.JobLife,
		"a job waits for its upload as long as its URL lives, and 2 h more")
	require.Equal(t, c.Limits, c.API.Limits)

	for _, tc := range []struct{ name, value, says string }{
		{"LIMIT_AUDIO_PER_DAY", "lots", "want a duration"},
		{"LIMIT_AUDIO_PER_DAY", "500ms", "shorter than 1s"},
		{"LIMIT_AUDIO_PER_MONTH", "-1h", "want a duration"},
		{"LIMIT_ACTIVE_JOBS", "101", "from 1 to 100"},
		{"LIMIT_ACTIVE_JOBS", "-1", "from 1 to 100"},
		{"LIMIT_EXEMPT_USERS", "42,@owner", `"@owner" is not a user id`},
	} {
		_, err := FromEnv(envOf(tc.name, tc.value))
		require.ErrorContains(t, err, tc.name+":", tc.value)
		require.ErrorContains(t, err, tc.says, tc.value)
	}
}

// A bot open to everyone with no monthly cap says so at start; with a cap,
// or an allow-list, it does not.
func TestOpenBotWithoutMonthlyCapWarns(t *testing.T) {
	for _, tc := range []struct {
		env  []string
		warn bool
	}{
		{[]string{"TELEGRAM_ALLOWED_USERS", "*"}, true},
		{[]string{"TELEGRAM_ALLOWED_USERS", "*", "LIMIT_AUDIO_PER_MONTH", "100h"}, false},
		{[]string{"TELEGRAM_ALLOWED_USERS", "*", "LIMIT_BUDGET_PER_MONTH", "500"}, false},
		{[]string{"TELEGRAM_ALLOWED_USERS", "42"}, false},
	} {
		c, err := FromEnv(envOf(tc.env...))
		require.NoError(t, err)
		var out bytes.Buffer
		warnOpenSpend(slog.New(slog.NewTextHandler(&out, nil)), c)
		if tc.warn {
			require.Contains(t, out.String(), "level=WARN")
			require.Contains(t, out.String(), "open bot without a monthly cap")
		} else {
			require.Empty(t, out.String(), "%v", tc.env)
		}
	}
}

// The budget and the prices are rubles as decimals; a value that does not
// parse stops the start with the variable named.
func TestBudgetAndPrices(t *testing.T) {
	c, err := FromEnv(envOf())
	require.NoError(t, err)
	require.Zero(t, c.Limits.BudgetPerMonth, "no budget unless set")
	require.Equal(t, spend.DefaultPrices, c.Limits.Prices)
	require.Equal(t, c.Limits, c.Pipeline.Limits)

	c, err = FromEnv(envOf("LIMIT_BUDGET_PER_MONTH", "1500.50", "PRICE_RECOGNITION_ASYNC", "0.16", "PRICE_RECOGNITION_DEFERRED", "0.04",
		"PRICE_RECOGNITION_SYNC", "0.17", "PRICE_SUMMARY_PER_1000_TOKENS", "0.2", "PRICE_TRANSLATION_PER_MILLION_CHARS", "400",
		"LIMIT_TRANSLATION_PER_DAY", "1000"))
	require.NoError(t, err)
	require.Equal(t, int64(1_500_500_000), c.Limits.BudgetPerMonth)
	require.Equal(t, spend.Prices{Async: 160_000, Deferred: 40_000, Sync: 170_000, SummaryTokens: 200_000,
		TranslationPerMillion: 400_000_000}, c.Limits.Prices)
	require.Equal(t, int64(1000), c.Limits.TranslationPerDay)

	for _, name := range []string{"LIMIT_BUDGET_PER_MONTH", "PRICE_RECOGNITION_ASYNC", "PRICE_RECOGNITION_DEFERRED",
		"PRICE_RECOGNITION_SYNC", "PRICE_SUMMARY_PER_1000_TOKENS", "PRICE_TRANSLATION_PER_MILLION_CHARS",
		"LIMIT_TRANSLATION_PER_DAY"} {
		for _, bad := range []string{"-1", "1,5", "ten"} {
			_, err := FromEnv(envOf(name, bad))
			require.ErrorContains(t, err, name+":", bad)
		}
	}
}

// REUSE_SCOPE and TRANSLATE_URL: their defaults, and a value that does not
// parse stops the start with the variable named.
func TestReuseScopeAndTranslateURL(t *testing.T) {
	c, err := FromEnv(envOf())
	require.NoError(t, err)
	require.Equal(t, job.ReusePayer, c.Pipeline.ReuseScope)
	require.Equal(t, job.ReusePayer, c.Telegram.ReuseScope)
	require.Equal(t, translate.DefaultURL, c.TranslateURL)
	c, err = FromEnv(envOf("REUSE_SCOPE", "installation"))
	require.NoError(t, err)
	require.Equal(t, job.ReuseInstallation, c.Pipeline.ReuseScope)
	_, err = FromEnv(envOf("REUSE_SCOPE", "everyone"))
	require.ErrorContains(t, err, "REUSE_SCOPE:")
	_, err = FromEnv(envOf("TRANSLATE_URL", "http://translate.example/v2"))
	require.ErrorContains(t, err, "TRANSLATE_URL:")
}
