package telegram

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"transcriber/internal/job"
	"transcriber/internal/spend"
	"transcriber/internal/status"
)

// The owner's alerts and /status; codes and ids stay as written, to look
// up in docs/api.md.

type StatusReader interface {
	Read(ctx context.Context, now time.Time) (status.Status, error)
}

// TellOwner sends the owner an alert once, keyed by its kind and window
// (the hour, or the month); a failed send is taken again by the next call
// deciding the same alert.
func (b *Bot) TellOwner(ctx context.Context, a status.Alert, window time.Time) error {
	if b.cfg.OwnerID == 0 {
		return nil
	}
	k := ref{b.cfg.OwnerID, -window.Unix(), "alert:" + string(a.Kind)}
	l := langOf(b.cfg.DefaultLanguage) // the owner set it
	return b.postOnce(ctx, k, "", func(ctx context.Context) (*models.Message, error) {
		return b.api.SendMessage(ctx, &bot.SendMessageParams{ChatID: b.cfg.OwnerID, Text: alertText(l, a)})
	})
}

func alertText(l lang, a status.Alert) string {
	switch a.Kind {
	case status.AlertDead:
		t := text{"Job %s ended dead: %s.", "Задание %s не выполнено после всех попыток (dead): %s."}.f(l, a.JobID, a.Code)
		if a.More > 0 {
			t += text{" %d more since the last alert.", " И ещё %d с прошлого оповещения."}.f(l, a.More)
		}
		return t
	case status.AlertQuotaWait:
		waited := humanSeconds(l, int64(a.Waited/time.Second))
		return text{"%s waited for the recognizer's request quota for %s.", "%s квоты запросов распознавания уже %s."}.f(l,
			jobsWait(l, a.Jobs, a.JobsMore, "has", "have"), waited)
	case status.AlertAudio80:
		return text{"This month's audio passed 80 %% of its limit: %s of %s.", "Аудио за месяц превысило 80 %% лимита: %s из %s."}.f(l,
			humanSeconds(l, a.UsedSeconds), humanSeconds(l, a.LimitSeconds))
	case status.AlertAudio100:
		return text{"This month's audio reached its limit: %s of %s. New recordings are refused until %s UTC.",
			"Аудио за месяц достигло лимита: %s из %s. Новые записи не распознаются до %s UTC."}.f(l,
			humanSeconds(l, a.UsedSeconds), humanSeconds(l, a.LimitSeconds), a.At.UTC().Format("2006-01-02"))
	case status.AlertBudget80:
		return text{"This month's spend passed 80 %% of its budget: %s ₽ of %s ₽.", "Расходы за месяц превысили 80 %% бюджета: %s ₽ из %s ₽."}.f(l,
			spend.Rubles(a.UsedMicros), spend.Rubles(a.BudgetMicros))
	case status.AlertBudget100:
		return text{"This month's spend reached its budget: %s ₽ of %s ₽. New recordings are refused until %s UTC or until the budget is raised (LIMIT_BUDGET_PER_MONTH).",
			"Расходы за месяц достигли бюджета: %s ₽ из %s ₽. Новые записи не распознаются до %s UTC или пока бюджет не увеличен (LIMIT_BUDGET_PER_MONTH)."}.f(l,
			spend.Rubles(a.UsedMicros), spend.Rubles(a.BudgetMicros), a.At.UTC().Format("2006-01-02"))
	case status.AlertCallbacks:
		e := a.Endpoint
		last := e.LastError
		if e.LastStatus != 0 {
			last = fmt.Sprintf("HTTP %d", e.LastStatus)
		}
		t := text{"Callbacks to %s are failing: %d POSTs failed in a row, the last with %s.",
			"Колбэки на %s не доходят: %d неудачных POST подряд, последний — %s."}.f(l, e.Host, e.Failures, last)
		if a.Endpoints > 1 {
			t += text{" %d more endpoints fail.", " Других адресов с ошибками: %d."}.f(l, a.Endpoints-1)
		}
		return t
	}
	return string(a.Kind)
}

func statusBrief(l lang, s status.Status) string {
	var b strings.Builder
	line := func(t text, a ...any) { b.WriteString(t.f(l, a...) + "\n") }
	n := map[job.State]string{} // live and ended states differ
	for _, c := range slices.Concat(s.Live, s.Ended) {
		n[c.State] = fmt.Sprint(c.Jobs)
		if c.More {
			n[c.State] = fmt.Sprintf(">%d", c.Jobs)
		}
	}
	line(text{"Jobs: %s await upload, %s to convert, %s to submit, %s recognizing.",
		"Задания: ждут загрузки %s, конвертации %s, отправки %s, распознаются %s."},
		n[job.AwaitingUpload], n[job.Created], n[job.Converted], n[job.Transcribe])
	line(text{"24 h: %s done, %s failed, %s dead.", "За 24 ч: готово %s, ошибок %s, dead %s."},
		n[job.Done], n[job.Failed], n[job.Dead])
	if len(s.Failures) > 0 {
		codes := make([]string, 0, len(s.Failures))
		for _, f := range s.Failures {
			codes = append(codes, fmt.Sprintf("%s %s ×%d", f.State, f.Code, f.Jobs))
		}
		b.WriteString(strings.Join(codes, "; ") + "\n")
	}
	if o := s.Oldest; o != nil {
		age := humanSeconds(l, int64(s.At.Sub(o.CreatedAt)/time.Second))
		line(text{"Oldest: %s (%s, %s): %s.", "Старейшее: %s (%s, %s): %s."}, o.JobID, o.State, age, reasonText[o.For].in(l))
	}
	if q := s.Requests; q.Paced {
		line(text{"Requests: %d of %d, reset at %s UTC.", "Запросы: %d из %d, сброс в %s UTC."}, q.Used, q.Allowed, q.ResetsAt.UTC().Format("15:04"))
	}
	if q := s.QuotaWait; q.Jobs > 0 {
		w := humanSeconds(l, int64(s.At.Sub(q.Since)/time.Second))
		line(text{"%s for the quota, up to %s.", "%s квоты до %s."}, jobsWait(l, q.Jobs, q.More, "waits", "wait"), w)
	}
	a := s.Audio
	used, audio := humanSeconds(l, a.UsedSeconds), humanSeconds(l, a.AudioSeconds)
	if a.LimitSeconds > 0 {
		line(text{"Billed this month: %s of %s (%d %%), %s of audio.", "Оплачено за месяц: %s из %s (%d %%), аудио %s."},
			used, humanSeconds(l, a.LimitSeconds), a.UsedSeconds*100/a.LimitSeconds, audio)
	} else {
		line(text{"Billed this month: %s, %s of audio.", "Оплачено за месяц: %s, аудио %s."}, used, audio)
	}
	sp := s.Spend
	kinds := status.SpendKinds(sp)
	if kinds != "" {
		kinds = ": " + kinds
	}
	if sp.BudgetMicros > 0 {
		line(text{"Spend this month: %s ₽ of %s ₽ (%d %%)%s.", "Расходы за месяц: %s ₽ из %s ₽ (%d %%)%s."},
			spend.Rubles(sp.UsedMicros), spend.Rubles(sp.BudgetMicros), sp.UsedMicros*100/sp.BudgetMicros, kinds)
	} else {
		line(text{"Spend this month: %s ₽, no budget%s.", "Расходы за месяц: %s ₽, без бюджета%s."}, spend.Rubles(sp.UsedMicros), kinds)
	}
	if t := s.Telegram; t != nil {
		line(text{"Telegram: %d pending, %d failing.", "Telegram: в очереди %d, с ошибками %d."}, t.Pending, t.Failing)
	}
	if c := s.Callbacks; c != nil {
		line(text{"Callbacks: %d pending, %d failing, %d failed.", "Колбэки: в очереди %d, с ошибками %d, не доставлено %d."}, c.Pending, c.Failing, c.Failed)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

var reasonText = map[status.Reason]text{
	status.ForUpload:      {"waits for its upload", "ждёт загрузки"},
	status.ForStep:        {"being worked on", "в работе"},
	status.ForQuota:       {"waits for the request quota", "ждёт квоты запросов"},
	status.ForSlot:        {"waits for a place among the recognitions", "ждёт места среди распознаваний"},
	status.ForRetry:       {"failed, to be retried", "ошибка, будет повтор"},
	status.ForRecognition: {"being recognized", "распознаётся"},
	status.ForTurn:        {"waits for its turn", "ждёт очереди"},
}

// jobsWait is "1 job waits", "Over 1000 jobs wait", "3 задания ждут";
// one and many are the English verbs.
func jobsWait(l lang, n int, over bool, one, many string) string {
	switch {
	case l == ru && over:
		return fmt.Sprintf("Больше %d %s ждут", n, pluralRU(n, "задания", "заданий", "заданий"))
	case l == ru:
		return fmt.Sprintf("%d %s %s", n, pluralRU(n, "задание", "задания", "заданий"), pluralRU(n, "ждёт", "ждут", "ждут"))
	case over:
		return fmt.Sprintf("Over %d jobs %s", n, many)
	case n == 1:
		return "1 job " + one
	}
	return fmt.Sprintf("%d jobs %s", n, many)
}

// pluralRU picks the form for n: one (1, 21), few (2–4, 22–24), many.
func pluralRU(n int, one, few, many string) string {
	n %= 100
	if n >= 11 && n <= 14 {
		return many
	}
	switch n % 10 {
	case 1:
		return one
	case 2, 3, 4:
		return few
	}
	return many
}
