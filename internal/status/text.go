package status

import (
	"fmt"
	"strings"
	"time"

	"transcriber/internal/job"
	"transcriber/internal/spend"
)

// The owner's words: the alerts and the short status the bot's /status
// answers, in English and Russian. lang "ru" is Russian; anything else is
// English. Codes and ids stay as the service writes them, so the owner
// can look them up (docs/api.md lists the codes).

func russian(lang string) bool { return lang == "ru" }

// Text is the alert's message.
func (a Alert) Text(lang string) string {
	ru := russian(lang)
	switch a.Kind {
	case AlertDead:
		if ru {
			t := fmt.Sprintf("Задание %s не выполнено после всех попыток (dead): %s.", a.JobID, a.Code)
			if a.More > 0 {
				t += fmt.Sprintf(" И ещё %d с прошлого оповещения.", a.More)
			}
			return t
		}
		t := fmt.Sprintf("Job %s ended dead: %s.", a.JobID, a.Code)
		if a.More > 0 {
			t += fmt.Sprintf(" %d more since the last alert.", a.More)
		}
		return t
	case AlertQuotaWait:
		if ru {
			return fmt.Sprintf("%s квоты запросов распознавания уже %s.", jobsWaitRU(a.Jobs, a.JobsMore), humanRU(int64(a.Waited/time.Second)))
		}
		return fmt.Sprintf("%s waited for the recognizer's request quota for %s.", jobsHaveEN(a.Jobs, a.JobsMore), spend.Human(int64(a.Waited/time.Second)))
	case AlertAudio80:
		if ru {
			return fmt.Sprintf("Аудио за месяц превысило 80 %% лимита: %s из %s.", humanRU(a.UsedSeconds), humanRU(a.LimitSeconds))
		}
		return fmt.Sprintf("This month's audio passed 80 %% of its limit: %s of %s.", spend.Human(a.UsedSeconds), spend.Human(a.LimitSeconds))
	case AlertAudio100:
		day := a.At.UTC().Format("2006-01-02")
		if ru {
			return fmt.Sprintf("Аудио за месяц достигло лимита: %s из %s. Новые записи не распознаются до %s UTC.",
				humanRU(a.UsedSeconds), humanRU(a.LimitSeconds), day)
		}
		return fmt.Sprintf("This month's audio reached its limit: %s of %s. New recordings are refused until %s UTC.",
			spend.Human(a.UsedSeconds), spend.Human(a.LimitSeconds), day)
	case AlertBudget80:
		if ru {
			return fmt.Sprintf("Расходы за месяц превысили 80 %% бюджета: %s ₽ из %s ₽.", spend.Rubles(a.UsedMicros), spend.Rubles(a.BudgetMicros))
		}
		return fmt.Sprintf("This month's spend passed 80 %% of its budget: %s ₽ of %s ₽.", spend.Rubles(a.UsedMicros), spend.Rubles(a.BudgetMicros))
	case AlertBudget100:
		day := a.At.UTC().Format("2006-01-02")
		if ru {
			return fmt.Sprintf("Расходы за месяц достигли бюджета: %s ₽ из %s ₽. Новые записи не распознаются до %s UTC или пока бюджет не увеличен (LIMIT_BUDGET_PER_MONTH).",
				spend.Rubles(a.UsedMicros), spend.Rubles(a.BudgetMicros), day)
		}
		return fmt.Sprintf("This month's spend reached its budget: %s ₽ of %s ₽. New recordings are refused until %s UTC or until the budget is raised (LIMIT_BUDGET_PER_MONTH).",
			spend.Rubles(a.UsedMicros), spend.Rubles(a.BudgetMicros), day)
	case AlertCallbacks:
		e := a.Endpoint
		last := e.LastError
		if e.LastStatus != 0 {
			last = fmt.Sprintf("HTTP %d", e.LastStatus)
		}
		if ru {
			t := fmt.Sprintf("Колбэки на %s не доходят: %d неудачных POST подряд, последний — %s.", e.Host, e.Failures, last)
			if a.Endpoints > 1 {
				t += fmt.Sprintf(" Других адресов с ошибками: %d.", a.Endpoints-1)
			}
			return t
		}
		t := fmt.Sprintf("Callbacks to %s are failing: %d POSTs failed in a row, the last with %s.", e.Host, e.Failures, last)
		if a.Endpoints > 1 {
			t += fmt.Sprintf(" %d more endpoints fail.", a.Endpoints-1)
		}
		return t
	}
	return string(a.Kind)
}

// Brief is the status in a few lines: what the bot's /status answers the
// owner.
func (s Status) Brief(lang string) string {
	ru := russian(lang)
	var b strings.Builder
	line := func(en, rus string, a ...any) {
		f := en
		if ru {
			f = rus
		}
		fmt.Fprintf(&b, f+"\n", a...)
	}
	n := func(c Count) string {
		if c.More {
			return fmt.Sprintf(">%d", c.Jobs)
		}
		return fmt.Sprint(c.Jobs)
	}
	live, ended := map[job.State]string{}, map[job.State]string{}
	for _, c := range s.Live {
		live[c.State] = n(c)
	}
	for _, c := range s.Ended {
		ended[c.State] = n(c)
	}
	line("Jobs: %s await upload, %s to convert, %s to submit, %s recognizing.",
		"Задания: ждут загрузки %s, конвертации %s, отправки %s, распознаются %s.",
		live[job.AwaitingUpload], live[job.Created], live[job.Converted], live[job.Transcribe])
	codes := make([]string, 0, len(s.Failures))
	for _, f := range s.Failures {
		codes = append(codes, fmt.Sprintf("%s %s ×%d", f.State, f.Code, f.Jobs))
	}
	line("24 h: %s done, %s failed, %s dead.", "За 24 ч: готово %s, ошибок %s, dead %s.",
		ended[job.Done], ended[job.Failed], ended[job.Dead])
	if len(codes) > 0 {
		b.WriteString(strings.Join(codes, "; ") + "\n")
	}
	if o := s.Oldest; o != nil {
		age := int64(s.At.Sub(o.CreatedAt) / time.Second)
		if ru {
			line("", "Старейшее: %s (%s, %s): %s.", o.JobID, o.State, humanRU(age), reasonRU[o.For])
		} else {
			line("Oldest: %s (%s, %s): %s.", "", o.JobID, o.State, spend.Human(age), reasonEN[o.For])
		}
	}
	r := s.Requests
	if r.Paced {
		line("Requests: %d of %d, reset at %s UTC.", "Запросы: %d из %d, сброс в %s UTC.", r.Used, r.Allowed, r.ResetsAt.UTC().Format("15:04"))
	}
	if q := s.QuotaWait; q.Jobs > 0 {
		w := int64(s.At.Sub(q.Since) / time.Second)
		if ru {
			line("", "%s квоты до %s.", jobsWaitRU(q.Jobs, q.More), humanRU(w))
		} else {
			line("%s for the quota, up to %s.", "", jobsWaitEN(q.Jobs, q.More), spend.Human(w))
		}
	}
	if f := s.InFlight; f.Max > 0 {
		line("In flight: %d of %d.", "В работе у распознавателя: %d из %d.", f.Counted, f.Max)
	} else {
		line("In flight: %d.", "В работе у распознавателя: %d.", f.Counted)
	}
	if a := s.Audio; a.LimitSeconds > 0 {
		if ru {
			line("", "Оплачено за месяц: %s из %s (%d %%), аудио %s.", humanRU(a.UsedSeconds), humanRU(a.LimitSeconds), a.UsedSeconds*100/a.LimitSeconds, humanRU(a.AudioSeconds))
		} else {
			line("Billed this month: %s of %s (%d %%), %s of audio.", "", spend.Human(a.UsedSeconds), spend.Human(a.LimitSeconds), a.UsedSeconds*100/a.LimitSeconds, spend.Human(a.AudioSeconds))
		}
	} else if ru {
		line("", "Оплачено за месяц: %s, аудио %s.", humanRU(a.UsedSeconds), humanRU(a.AudioSeconds))
	} else {
		line("Billed this month: %s, %s of audio.", "", spend.Human(a.UsedSeconds), spend.Human(a.AudioSeconds))
	}
	sp := s.Spend
	kinds := SpendKinds(sp)
	if kinds != "" {
		kinds = ": " + kinds
	}
	switch {
	case sp.BudgetMicros > 0 && ru:
		line("", "Расходы за месяц: %s ₽ из %s ₽ (%d %%)%s.", spend.Rubles(sp.UsedMicros), spend.Rubles(sp.BudgetMicros), sp.UsedMicros*100/sp.BudgetMicros, kinds)
	case sp.BudgetMicros > 0:
		line("Spend this month: %s ₽ of %s ₽ (%d %%)%s.", "", spend.Rubles(sp.UsedMicros), spend.Rubles(sp.BudgetMicros), sp.UsedMicros*100/sp.BudgetMicros, kinds)
	case ru:
		line("", "Расходы за месяц: %s ₽, без бюджета%s.", spend.Rubles(sp.UsedMicros), kinds)
	default:
		line("Spend this month: %s ₽, no budget%s.", "", spend.Rubles(sp.UsedMicros), kinds)
	}
	if t := s.Telegram; t != nil {
		line("Telegram: %d pending, %d failing.", "Telegram: в очереди %d, с ошибками %d.", t.Pending, t.Failing)
	}
	if c := s.Callbacks; c != nil {
		line("Callbacks: %d pending, %d failing, %d failed.", "Колбэки: в очереди %d, с ошибками %d, не доставлено %d.", c.Pending, c.Failing, c.Failed)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

var reasonEN = map[Reason]string{
	ForUpload:      "waits for its upload",
	ForStep:        "being worked on",
	ForQuota:       "waits for the request quota",
	ForSlot:        "waits for a place among the recognitions",
	ForRetry:       "failed, to be retried",
	ForRecognition: "being recognized",
	ForTurn:        "waits for its turn",
}

var reasonRU = map[Reason]string{
	ForUpload:      "ждёт загрузки",
	ForStep:        "в работе",
	ForQuota:       "ждёт квоты запросов",
	ForSlot:        "ждёт места среди распознаваний",
	ForRetry:       "ошибка, будет повтор",
	ForRecognition: "распознаётся",
	ForTurn:        "ждёт очереди",
}

// countEN is n, or "Over n" when the count stopped at a cap.
func countEN(n int, over bool) string {
	if over {
		return fmt.Sprintf("Over %d", n)
	}
	return fmt.Sprint(n)
}

func jobsWaitEN(n int, over bool) string {
	if n == 1 && !over {
		return "1 job waits"
	}
	return countEN(n, over) + " jobs wait"
}

func jobsHaveEN(n int, over bool) string {
	if n == 1 && !over {
		return "1 job has"
	}
	return countEN(n, over) + " jobs have"
}

// jobsWaitRU is "1 задание ждёт", "3 задания ждут", "5 заданий ждут",
// "Больше 1000 заданий ждут".
func jobsWaitRU(n int, over bool) string {
	if over {
		return fmt.Sprintf("Больше %d %s ждут", n, pluralRU(n, "задания", "заданий", "заданий"))
	}
	verb := pluralRU(n, "ждёт", "ждут", "ждут")
	return fmt.Sprintf("%d %s %s", n, pluralRU(n, "задание", "задания", "заданий"), verb)
}

// pluralRU picks the Russian form for n: one (1, 21, …), few (2–4, 22–24,
// …), many (the rest, 11–14 included).
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

// humanRU writes seconds as spend.Human does, in Russian: "2 ч 10 мин",
// "1 мин 01 с", "45 с".
func humanRU(seconds int64) string {
	return strings.NewReplacer(" h", " ч", " min", " мин", " s", " с").Replace(spend.Human(seconds))
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
