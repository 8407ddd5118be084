package telegram_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/job"
	"transcriber/internal/spend"
	"transcriber/internal/status"
	"transcriber/internal/telegram"
)

// Each alert says its facts in both languages.
func TestAlertTexts(t *testing.T) {
	for _, c := range []struct {
		alert  status.Alert
		en, ru []string
	}{
		{status.Alert{Kind: status.AlertDead, JobID: "01jabc", Code: "storage_unavailable", More: 2},
			[]string{"Job 01jabc ended dead: storage_unavailable.", "2 more since the last alert."},
			[]string{"Задание 01jabc", "storage_unavailable", "И ещё 2"}},
		{status.Alert{Kind: status.AlertDead, JobID: "01jabc", Code: "c"},
			[]string{"Job 01jabc ended dead: c."}, []string{"Задание 01jabc"}},
		{status.Alert{Kind: status.AlertQuotaWait, Jobs: 3, Waited: 25 * time.Minute},
			[]string{"3 jobs have waited for the recognizer's request quota for 25 min."},
			[]string{"3 задания ждут квоты запросов распознавания уже 25 мин."}},
		{status.Alert{Kind: status.AlertQuotaWait, Jobs: 1, Waited: time.Hour + 5*time.Minute},
			[]string{"1 job has waited", "1 h 05 min"}, []string{"1 задание ждёт", "1 ч 05 мин"}},
		{status.Alert{Kind: status.AlertAudio80, UsedSeconds: 8 * 3600, LimitSeconds: 10 * 3600},
			[]string{"passed 80 % of its limit: 8 h of 10 h."}, []string{"превысило 80 % лимита: 8 ч из 10 ч."}},
		{status.Alert{Kind: status.AlertAudio100, UsedSeconds: 36001, LimitSeconds: 36000, At: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)},
			[]string{"reached its limit: 10 h 00 min 01 s of 10 h", "refused until 2026-12-01 UTC"},
			[]string{"достигло лимита", "до 2026-12-01 UTC"}},
		{status.Alert{Kind: status.AlertBudget80, UsedMicros: 80_000_000, BudgetMicros: 100_000_000},
			[]string{"passed 80 % of its budget: 80.00 ₽ of 100.00 ₽."}, []string{"превысили 80 % бюджета: 80.00 ₽ из 100.00 ₽."}},
		{status.Alert{Kind: status.AlertBudget100, UsedMicros: 100_000_000, BudgetMicros: 100_000_000, At: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)},
			[]string{"reached its budget: 100.00 ₽ of 100.00 ₽", "until 2026-12-01 UTC", "LIMIT_BUDGET_PER_MONTH"},
			[]string{"достигли бюджета", "до 2026-12-01 UTC"}},
		{status.Alert{Kind: status.AlertCallbacks, Endpoint: status.Endpoint{Host: "hooks.example.com", Failures: 6, LastStatus: 503}, Endpoints: 3},
			[]string{"Callbacks to hooks.example.com are failing: 6 POSTs failed in a row, the last with HTTP 503.", "2 more endpoints fail."},
			[]string{"Колбэки на hooks.example.com", "6 неудачных", "HTTP 503", "Других адресов с ошибками: 2."}},
		{status.Alert{Kind: status.AlertCallbacks, Endpoint: status.Endpoint{Host: "h.example", Failures: 5, LastError: "connect_refused"}, Endpoints: 1},
			[]string{"the last with connect_refused."}, []string{"последний — connect_refused."}},
	} {
		en, ru := telegram.AlertText(c.alert, "en"), telegram.AlertText(c.alert, "ru")
		for _, w := range c.en {
			require.Contains(t, en, w)
		}
		for _, w := range c.ru {
			require.Contains(t, ru, w)
		}
		require.Equal(t, en, telegram.AlertText(c.alert, ""), "English unless Russian")
	}
}

func TestRussianPlurals(t *testing.T) {
	for n, want := range map[int]string{1: "1 задание ждёт", 3: "3 задания ждут", 5: "5 заданий ждут", 11: "11 заданий ждут",
		21: "21 задание ждёт", 22: "22 задания ждут", 112: "112 заданий ждут"} {
		got := telegram.AlertText(status.Alert{Kind: status.AlertQuotaWait, Jobs: n, Waited: time.Hour}, "ru")
		require.True(t, strings.HasPrefix(got, want), "%d: %s", n, got)
	}
	got := telegram.AlertText(status.Alert{Kind: status.AlertQuotaWait, Jobs: 1000, JobsMore: true, Waited: time.Hour}, "ru")
	require.True(t, strings.HasPrefix(got, "Больше 1000 заданий ждут"), got)
}

// The short status says every part in a few lines, in either language.
func TestStatusBrief(t *testing.T) {
	at := time.Date(2026, 11, 29, 10, 4, 0, 0, time.UTC)
	s := status.Status{
		At:        at,
		Live:      []status.Count{{State: job.AwaitingUpload, Jobs: 2}, {State: job.Created}, {State: job.Converted, Jobs: 3}, {State: job.Transcribe, Jobs: 1000, More: true}},
		Ended:     []status.Count{{State: job.Done, Jobs: 120}, {State: job.Failed, Jobs: 2}, {State: job.Dead, Jobs: 1}},
		Oldest:    &status.Waiting{JobID: "01jold", State: job.Converted, CreatedAt: at.Add(-12 * time.Minute), For: status.ForQuota},
		Failures:  []status.Failure{{State: job.Failed, Code: "no_audio_stream", Jobs: 2}, {State: job.Dead, Code: "storage_unavailable", Jobs: 1}},
		QuotaWait: status.QuotaWait{Jobs: 3, Since: at.Add(-12 * time.Minute)},
		Requests:  status.Requests{Paced: true, Used: 71, Allowed: 71, ResetsAt: at.Add(6 * time.Minute)},
		Audio:     spend.Window{UsedSeconds: 8 * 3600, AudioSeconds: 7 * 3600, LimitSeconds: 10 * 3600},
		Spend: status.Spend{UsedMicros: 75_500_000, BudgetMicros: 100_000_000, Kinds: []status.KindSpend{
			{Kind: spend.ModeAsync, Micros: 70_000_000}, {Kind: spend.ModeSync, Micros: 1_500_000}, {Kind: spend.KindSummary, Micros: 2_000_000}}},
		Telegram:  &status.TelegramState{Pending: 3, Failing: 1},
		Callbacks: &status.CallbackState{Pending: 4, Failing: 2, Failed: 1},
	}
	en := telegram.StatusBrief(s, "en")
	for _, w := range []string{
		"Jobs: 2 await upload, 0 to convert, 3 to submit, >1000 recognizing.",
		"24 h: 120 done, 2 failed, 1 dead.",
		"failed no_audio_stream ×2; dead storage_unavailable ×1",
		"Oldest: 01jold (converted, 12 min): waits for the request quota.",
		"Requests: 71 of 71, reset at 10:10 UTC.",
		"3 jobs wait for the quota, up to 12 min.",
		"Billed this month: 8 h of 10 h (80 %), 7 h of audio.",
		"Spend this month: 75.50 ₽ of 100.00 ₽ (75 %): async 70.00 ₽, sync 1.50 ₽, summary 2.00 ₽.",
		"Telegram: 3 pending, 1 failing.",
		"Callbacks: 4 pending, 2 failing, 1 failed.",
	} {
		require.Contains(t, en, w)
	}
	ru := telegram.StatusBrief(s, "ru")
	for _, w := range []string{
		"Задания: ждут загрузки 2, конвертации 0, отправки 3, распознаются >1000.",
		"За 24 ч: готово 120, ошибок 2, dead 1.",
		"Старейшее: 01jold (converted, 12 мин): ждёт квоты запросов.",
		"Запросы: 71 из 71, сброс в 10:10 UTC.",
		"3 задания ждут квоты до 12 мин.",
		"Оплачено за месяц: 8 ч из 10 ч (80 %), аудио 7 ч.",
		"Расходы за месяц: 75.50 ₽ из 100.00 ₽ (75 %): async 70.00 ₽",
		"Telegram: в очереди 3, с ошибками 1.",
	} {
		require.Contains(t, ru, w)
	}
	require.LessOrEqual(t, strings.Count(en, "\n"), 12, "a few lines")
	idle := telegram.StatusBrief(status.Status{At: at}, "en")
	require.Contains(t, idle, "Billed this month: 0 s, 0 s of audio.")
	require.Contains(t, idle, "Spend this month: 0.00 ₽, no budget.")
	require.NotContains(t, idle, "Oldest")
}
