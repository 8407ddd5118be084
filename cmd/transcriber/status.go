package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"transcriber/internal/app"
	"transcriber/internal/clock"
	"transcriber/internal/spend"
	"transcriber/internal/status"
	"transcriber/internal/store"
)

func statusCmd(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	fs := flag.NewFlagSet("status", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print the status as JSON")
	if done, err := parseFlags(fs, args, stdout, usage, usageError); done {
		return err
	}
	if fs.NArg() > 0 {
		return usageError(fmt.Sprintf("status takes only --json (got %q too)", fs.Args()))
	}
	cfg, err := app.FromEnv(getenv)
	if err != nil {
		return err
	}
	var s status.Status
	if err := withStores(ctx, getenv, existingStore, func(stores store.Set) (err error) {
		r := app.StatusReader(cfg, stores)
		if r == nil {
			return errors.New("the job store cannot read the service's status")
		}
		s, err = r.Read(ctx, clock.System().Now())
		return err
	}); err != nil {
		return err
	}
	if *asJSON {
		return printJSON(stdout, s)
	}
	return printStatus(stdout, s)
}

func printStatus(w io.Writer, s status.Status) error {
	var b strings.Builder
	line := func(label, format string, a ...any) {
		if label != "" {
			label += ":"
		}
		fmt.Fprintf(&b, "%-16s %s\n", label, fmt.Sprintf(format, a...))
	}
	at := func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") }
	ago := func(t time.Time) string { return spend.Human(int64(s.At.Sub(t) / time.Second)) }

	fmt.Fprintf(&b, "transcriber status at %s\n\n", at(s.At))
	line("jobs now", "%s", countList(s.Live))
	line("ended in 24 h", "%s", countList(s.Ended))
	if o := s.Oldest; o != nil {
		line("oldest job", "%s (%s), made %s ago: %s", o.JobID, o.State, ago(o.CreatedAt), waitsFor(*o, at))
	} else {
		line("oldest job", "none: no job is live")
	}
	if len(s.Failures) == 0 {
		line("failures 24 h", "none")
	}
	label := "failures 24 h"
	for _, f := range s.Failures {
		line(label, "%d %s %s", f.Jobs, f.State, f.Code)
		label = ""
	}
	label = "latest dead"
	for _, d := range s.Dead {
		line(label, "%s %s, %s ago", d.JobID, d.Code, ago(d.At))
		label = ""
	}
	if q := s.QuotaWait; q.Jobs > 0 {
		line("quota wait", "%s for the recognizer's request window, for up to %s (the oldest: %s)",
			jobsWait(q.Jobs, q.More), ago(q.Since), q.OldestID)
	} else {
		line("quota wait", "none")
	}
	if r := s.Requests; r.Paced {
		line("requests", "%d of %d in the window since %s; it resets at %s", r.Used, r.Allowed,
			r.Start.UTC().Format("15:04"), at(r.ResetsAt))
	} else {
		line("requests", "not counted (SPEECHKIT_REQUESTS_PER_HOUR=0)")
	}
	if a := s.Audio; a.LimitSeconds > 0 {
		line("billed, month", "%s of %s (%d %%), %s of audio; the month ends %s", spend.Human(a.UsedSeconds), spend.Human(a.LimitSeconds),
			a.UsedSeconds*100/a.LimitSeconds, spend.Human(a.AudioSeconds), at(a.ResetsAt))
	} else {
		line("billed, month", "%s, %s of audio, no limit (LIMIT_AUDIO_PER_MONTH)", spend.Human(a.UsedSeconds), spend.Human(a.AudioSeconds))
	}
	if sp := s.Spend; sp.BudgetMicros > 0 {
		line("spend, month", "%s ₽ of %s ₽ (%d %%): %s", spend.Rubles(sp.UsedMicros), spend.Rubles(sp.BudgetMicros),
			sp.UsedMicros*100/sp.BudgetMicros, status.SpendKinds(sp))
	} else {
		line("spend, month", "%s ₽, no budget (LIMIT_BUDGET_PER_MONTH): %s", spend.Rubles(sp.UsedMicros), status.SpendKinds(sp))
	}
	if t := s.Telegram; t != nil {
		line("telegram", "%s pending, %d due, %d failing", more(t.Pending, t.More), t.Due, t.Failing)
	}
	if c := s.Callbacks; c != nil {
		line("callbacks", "%s pending, %d failing, %s failed in 24 h", more(c.Pending, c.More), c.Failing, more(c.Failed, c.FailedMore))
		for _, e := range c.Endpoints {
			last := e.LastError
			if e.LastStatus != 0 {
				last = fmt.Sprintf("HTTP %d", e.LastStatus)
			}
			line("", "%s: %d failed POSTs of %d callbacks, the last %s ago (%s)", e.Host, e.Failures,
				e.Callbacks, ago(e.LastAt), last)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func countList(cs []status.Count) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = fmt.Sprintf("%s %s", c.State, more(c.Jobs, c.More))
	}
	return strings.Join(parts, ", ")
}

// more is n, or "over n" when the count stopped at the cap.
func more(n int, over bool) string {
	if over {
		return fmt.Sprintf("over %d", n)
	}
	return fmt.Sprint(n)
}

func jobsWait(n int, over bool) string {
	if n == 1 && !over {
		return "1 job waits"
	}
	return more(n, over) + " jobs wait"
}

func waitsFor(w status.Waiting, at func(time.Time) string) string {
	switch w.For {
	case status.ForUpload:
		return "waits for its upload, until " + at(w.Until)
	case status.ForStep:
		return "a step is running it"
	case status.ForQuota:
		return "waits for the recognizer's request window, until " + at(w.Until)
	case status.ForSlot:
		return "a piece waits for a place among its job's recognitions in flight"
	case status.ForRetry:
		return fmt.Sprintf("attempt %d failed (%s); tried again at %s", w.Attempts, w.Code, at(w.Until))
	case status.ForRecognition:
		return "being recognized; checked again at " + at(w.Until)
	}
	return "due at " + at(w.Until) + ", waiting for the timer's sweep"
}
