package loadsim

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"transcriber/internal/job"
	"transcriber/internal/spend"
)

// Report is what one run did.
type Report struct {
	Mode   Mode
	Jobs   int
	Done   int // ended done
	Failed int // ended failed or dead
	// FailedBy counts the failed jobs by their error code.
	FailedBy   map[string]int
	Unfinished int // still running at the horizon
	AudioHours float64
	// Makespan is from the first upload to the last job's end;
	// Throughput is AudioHours over it, in audio hours per hour.
	Makespan   time.Duration
	Throughput float64
	// P50 and P95 are the time from upload to the job's end, over the
	// jobs that ended.
	P50, P95 time.Duration
	Classes  []ClassReport

	// The request quota: recognitions submitted, the most in any hour,
	// submissions the pipeline's pacing held back, and when it first did
	// (from the start; -1 when it never did).
	Requests        int
	PeakRequestHour int
	QuotaHeld       int
	FirstQuotaHeld  time.Duration
	// The function calls' concurrency: calls that waited for a slot, the
	// longest wait, when the first waited (-1: none), and the most slots
	// taken at once.
	CallWaits     int
	MaxCallWait   time.Duration
	FirstCallWait time.Duration
	BusiestSlots  int
	// Status checks: all made, the most in any second, those refused for
	// passing SpeechKit's rate, and when the first was (-1: none).
	Checks            int
	PeakChecks        int
	ChecksRefused     int
	FirstCheckRefused time.Duration
	// PeakRecognizing is the most recognitions running at SpeechKit at
	// once.
	PeakRecognizing int
	// Synchronous recognition: the jobs it recognized, the requests sent,
	// the most in any second, the jobs it takes (fast, at most
	// SyncMaxDuration) that went the asynchronous way (no place within
	// the pipeline's wait, or refused) and the requests SpeechKit refused
	// over its 20 a second.
	SyncJobs       int
	SyncRequests   int
	PeakSyncSecond int
	SyncMissed     int
	SyncRefused    int
	// Function calls made, their time, the longest, and those that
	// failed, per function ("ingest", "poll").
	Calls       map[string]int
	CallHours   map[string]float64
	LongestCall map[string]time.Duration
	CallsFailed map[string]int
	// The store, as the cloud's YDB would count it: request units per job
	// (estimated from docs/database.md), moves of a job's jobs_due entry
	// per job, and the calls made.
	RUPerJob       float64
	DueMovesPerJob float64
	StoreCalls     map[string]int
	// What SpeechKit bills for the jobs done: seconds, and µ₽ at the
	// default prices (spend.DefaultPrices).
	BilledSeconds int64
	CostMicros    int64
}

// ClassReport is the part of a report about one class of recordings.
type ClassReport struct {
	Class      string
	Jobs       int
	AudioHours float64
	P50, P95   time.Duration
}

// SaturatedFirst names the limit the load met first, and when (from the
// start): the request quota, the calls' concurrency or the check rate;
// "none" when it met none.
func (r Report) SaturatedFirst() string {
	type hit struct {
		name string
		at   time.Duration
	}
	var hits []hit
	for _, h := range []hit{
		{"SpeechKit requests/hour (pacing held a submission)", r.FirstQuotaHeld},
		{"function concurrency (a call waited for a slot)", r.FirstCallWait},
		{"SpeechKit checks/second (a check was refused)", r.FirstCheckRefused},
	} {
		if h.at >= 0 {
			hits = append(hits, h)
		}
	}
	if len(hits) == 0 {
		return "none"
	}
	sort.SliceStable(hits, func(i, k int) bool { return hits[i].at < hits[k].at })
	return fmt.Sprintf("%s at +%s", hits[0].name, hits[0].at.Round(time.Second))
}

// report gathers the run's figures; s.mu is held.
func (s *sim) report() Report {
	start := s.cfg.Start
	since := func(t time.Time) time.Duration {
		if t.IsZero() {
			return -1
		}
		return t.Sub(start)
	}
	r := Report{Mode: s.cfg.Mode, Jobs: len(s.order), FailedBy: map[string]int{},
		Calls: map[string]int{}, CallHours: map[string]float64{}, LongestCall: map[string]time.Duration{}, CallsFailed: map[string]int{}}
	var all []time.Duration
	byClass := map[string][]time.Duration{}
	var order []string
	classes := map[string]*ClassReport{}
	first, last := time.Time{}, time.Time{}
	for _, t := range s.order {
		c := classes[t.rec.Class]
		if c == nil {
			c = &ClassReport{Class: t.rec.Class}
			classes[t.rec.Class] = c
			order = append(order, t.rec.Class)
		}
		c.Jobs++
		h := t.rec.Duration.Hours()
		c.AudioHours += h
		r.AudioHours += h
		if first.IsZero() || t.submitted.Before(first) {
			first = t.submitted
		}
		switch {
		case t.ended.IsZero():
			r.Unfinished++
			continue
		case t.state == job.Done:
			r.Done++
			r.BilledSeconds += t.cost.Seconds
			r.CostMicros += t.cost.Micros
			switch {
			case t.sync:
				r.SyncJobs++
			case !s.cfg.NoSync && t.rec.Duration <= s.cfg.SyncMaxDuration:
				r.SyncMissed++
			}
		default:
			r.Failed++
			r.FailedBy[string(t.state)+" "+t.code]++
		}
		if t.ended.After(last) {
			last = t.ended
		}
		took := t.ended.Sub(t.submitted)
		all = append(all, took)
		byClass[t.rec.Class] = append(byClass[t.rec.Class], took)
	}
	sort.Strings(order)
	sort.SliceStable(order, func(i, k int) bool { return classRank(order[i]) < classRank(order[k]) })
	r.P50, r.P95 = percentile(all, 50), percentile(all, 95)
	for _, name := range order {
		c := classes[name]
		c.P50, c.P95 = percentile(byClass[name], 50), percentile(byClass[name], 95)
		r.Classes = append(r.Classes, *c)
	}
	if !last.IsZero() {
		r.Makespan = last.Sub(first)
		if r.Makespan > 0 {
			r.Throughput = r.AudioHours / r.Makespan.Hours()
		}
	}

	subs := s.rec.Submissions()
	r.Requests = len(subs)
	r.PeakRequestHour = peakIn(subs, time.Hour)
	s.counters.mu.Lock()
	r.QuotaHeld, r.FirstQuotaHeld = s.counters.held, since(s.counters.firstHeld)
	counterRU := s.counters.ru
	s.counters.mu.Unlock()

	s.sched.mu.Lock()
	r.CallWaits, r.MaxCallWait, r.FirstCallWait = s.slots.waits, s.slots.maxWait, since(s.slots.firstWait)
	r.BusiestSlots = s.slots.busiest
	s.sched.mu.Unlock()

	s.rec.mu.Lock()
	r.Checks, r.PeakChecks, r.ChecksRefused = s.rec.checks, s.rec.peakChecks, s.rec.refused
	r.FirstCheckRefused = since(s.rec.firstRefused)
	r.PeakRecognizing = s.rec.peakRunning
	r.SyncRequests, r.PeakSyncSecond, r.SyncRefused = len(s.rec.syncs), s.rec.peakSyncs, s.rec.syncRefused
	s.rec.mu.Unlock()

	for fn, st := range s.calls {
		r.Calls[fn] = st.n
		r.CallHours[fn] = st.busy.Hours()
		r.LongestCall[fn] = st.longest
		if st.failed > 0 {
			r.CallsFailed[fn] = st.failed
		}
	}
	s.store.mu.Lock()
	r.StoreCalls = map[string]int{}
	for k, v := range s.store.calls {
		r.StoreCalls[k] = v
	}
	if r.Jobs > 0 {
		r.RUPerJob = (s.store.ru + counterRU) / float64(r.Jobs)
		r.DueMovesPerJob = float64(s.store.dueMoves) / float64(r.Jobs)
	}
	s.store.mu.Unlock()
	return r
}

// classRank orders the default mix's classes by length; others follow
// by name.
func classRank(name string) int {
	for i, c := range DefaultMix {
		if c.Name == name {
			return i
		}
	}
	return len(DefaultMix)
}

// percentile is the p-th percentile of ds by nearest rank; 0 for none.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, k int) bool { return s[i] < s[k] })
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	return s[max(rank, 1)-1]
}

// peakIn is the most of times (in order) that fall in any span of d.
func peakIn(times []time.Time, d time.Duration) int {
	peak, lo := 0, 0
	for hi := range times {
		for !times[lo].After(times[hi].Add(-d)) {
			lo++
		}
		peak = max(peak, hi-lo+1)
	}
	return peak
}

// Table writes the reports side by side, one column each.
func Table(w io.Writer, reports ...Report) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row := func(name string, cell func(Report) string) {
		cells := []string{name}
		for _, r := range reports {
			cells = append(cells, cell(r))
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	dur := func(d time.Duration) string {
		if d < 0 {
			return "-"
		}
		return fmtDuration(d)
	}
	row("mode", func(r Report) string { return r.Mode.String() })
	row("jobs (done/failed/unfinished)", func(r Report) string {
		return fmt.Sprintf("%d (%d/%d/%d)", r.Jobs, r.Done, r.Failed, r.Unfinished)
	})
	row("audio hours", func(r Report) string { return fmt.Sprintf("%.1f", r.AudioHours) })
	row("last transcript after", func(r Report) string { return dur(r.Makespan) })
	row("throughput (audio h per h)", func(r Report) string { return fmt.Sprintf("%.1f", r.Throughput) })
	row("time to transcript p50 / p95", func(r Report) string { return dur(r.P50) + " / " + dur(r.P95) })
	if len(reports) > 0 {
		for i, c := range reports[0].Classes {
			row(fmt.Sprintf("  %s: %d jobs, %.1f h", c.Class, c.Jobs, c.AudioHours), func(r Report) string {
				if i >= len(r.Classes) {
					return "-"
				}
				return dur(r.Classes[i].P50) + " / " + dur(r.Classes[i].P95)
			})
		}
	}
	row("recognition requests (most in an hour)", func(r Report) string {
		return fmt.Sprintf("%d (%d)", r.Requests, r.PeakRequestHour)
	})
	row("  held back by the quota (first at)", func(r Report) string {
		return fmt.Sprintf("%d (%s)", r.QuotaHeld, at(r.FirstQuotaHeld))
	})
	row("calls waiting for a slot (longest; first at)", func(r Report) string {
		return fmt.Sprintf("%d (%s; %s)", r.CallWaits, dur(r.MaxCallWait), at(r.FirstCallWait))
	})
	row("status checks (most in a second)", func(r Report) string {
		return fmt.Sprintf("%d (%d)", r.Checks, r.PeakChecks)
	})
	row("  refused over 5/s (first at)", func(r Report) string {
		return fmt.Sprintf("%d (%s)", r.ChecksRefused, at(r.FirstCheckRefused))
	})
	row("most recognitions running at once", func(r Report) string { return fmt.Sprint(r.PeakRecognizing) })
	row("synchronous: jobs / requests (most in a second)", func(r Report) string {
		return fmt.Sprintf("%d / %d (%d)", r.SyncJobs, r.SyncRequests, r.PeakSyncSecond)
	})
	row("  gone asynchronous; refused", func(r Report) string { return fmt.Sprintf("%d; %d", r.SyncMissed, r.SyncRefused) })
	row("calls: ingest / poll", func(r Report) string { return fmt.Sprintf("%d / %d", r.Calls["ingest"], r.Calls["poll"]) })
	row("  hours busy; longest; failed", func(r Report) string {
		return fmt.Sprintf("%.1f / %.1f; %s / %s; %d / %d", r.CallHours["ingest"], r.CallHours["poll"],
			fmtDuration(r.LongestCall["ingest"]), fmtDuration(r.LongestCall["poll"]), r.CallsFailed["ingest"], r.CallsFailed["poll"])
	})
	row("YDB RU per job (estimated)", func(r Report) string { return fmt.Sprintf("%.0f", r.RUPerJob) })
	row("jobs_due moves per job", func(r Report) string { return fmt.Sprintf("%.1f", r.DueMovesPerJob) })
	row("saturated first", func(r Report) string { return r.SaturatedFirst() })
	return tw.Flush()
}

func at(d time.Duration) string {
	if d < 0 {
		return "never"
	}
	return "+" + fmtDuration(d)
}

// fmtDuration says d in whole seconds, as 1h02m03s, 4m05s or 6s.
func fmtDuration(d time.Duration) string {
	d = d.Round(time.Second)
	h, m, s := int(d/time.Hour), int(d%time.Hour/time.Minute), int(d%time.Minute/time.Second)
	switch {
	case h > 0:
		return fmt.Sprintf("%dh%02dm%02ds", h, m, s)
	case m > 0:
		return fmt.Sprintf("%dm%02ds", m, s)
	}
	return fmt.Sprintf("%ds", s)
}

// Lines writes one line per report, for comparing runs of different
// loads; labels name the loads. "voice p95" is the first class's (the
// default mix's voice notes of up to 30 s, which synchronous recognition
// takes), "voice 2 p95" the second's (its longer voice notes), "longest"
// the last's; "sync" the share of jobs recognized synchronously and
// "req/job" the asynchronous requests a job.
func Lines(w io.Writer, labels []string, reports []Report) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "load\tmode\tjobs\taudio h\tp50\tp95\tvoice p95\tvoice 2 p95\tlongest p95\tsync\treq/job\theld\tchecks/s\trefused\tfailed\tslot waits\tbusiest\tlongest poll\tRU/job\tdue moves/job\t")
	for i, r := range reports {
		voice, voice2, longest := "-", "-", "-"
		if n := len(r.Classes); n > 0 {
			voice, longest = fmtDuration(r.Classes[0].P95), fmtDuration(r.Classes[n-1].P95)
			if n > 2 {
				voice2 = fmtDuration(r.Classes[1].P95)
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.0f\t%s\t%s\t%s\t%s\t%s\t%.0f%%\t%.2f\t%d\t%d\t%d\t%d\t%d (%s)\t%d\t%s\t%.0f\t%.1f\t\n",
			labels[i], r.Mode, r.Jobs, r.AudioHours, fmtDuration(r.P50), fmtDuration(r.P95), voice, voice2, longest,
			100*float64(r.SyncJobs)/float64(max(r.Jobs, 1)),
			float64(r.Requests)/float64(max(r.Jobs, 1)), r.QuotaHeld, r.PeakChecks, r.ChecksRefused, r.Failed,
			r.CallWaits, fmtDuration(r.MaxCallWait), r.BusiestSlots, fmtDuration(r.LongestCall["poll"]), r.RUPerJob, r.DueMovesPerJob)
	}
	return tw.Flush()
}

// Costs writes, for each report of a run over span, the month's
// recognition cost of its load at the default prices: the audio, what
// SpeechKit bills for it, and rubles, each scaled from span to 30 days.
func Costs(w io.Writer, labels []string, span time.Duration, reports []Report) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "load\tjobs/month\taudio h/month\tbilled h/month\tbilled/audio\t₽/month\t₽/audio h\t")
	month := 30 * 24 * time.Hour.Hours() / span.Hours()
	for i, r := range reports {
		billedH := float64(r.BilledSeconds) / 3600
		fmt.Fprintf(tw, "%s\t%.0f\t%.0f\t%.0f\t%.3f\t%s\t%.2f\t\n", labels[i], float64(r.Done)*month, r.AudioHours*month,
			billedH*month, billedH/max(r.AudioHours, 1e-9), spend.Rubles(int64(float64(r.CostMicros)*month)),
			float64(r.CostMicros)/1e6/max(r.AudioHours, 1e-9))
	}
	return tw.Flush()
}
