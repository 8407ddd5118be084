package loadsim_test

import (
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	"transcriber/internal/loadsim"
)

var load = flag.Bool("load", false, "run BenchmarkLoad, the load model (make bench-load, about two minutes)")

// BenchmarkLoad is the load model of docs/scale.md. First a burst: 1,000
// jobs of loadsim.DefaultMix uploaded within one minute, run with long
// recordings in pieces and in one piece, side by side. Then steady loads
// of 2,000 to 30,000 jobs a day of the same mix, uploaded evenly for
// three hours, one line per run, as shipped (pieces, synchronous
// recognition for voice notes of up to 30 s), and at 10,000 and 15,000
// also without the synchronous door: where each limit starts to bind.
// Last, 100,000 jobs a day for an hour on an installation whose quotas
// were raised as docs/scale.md asks (30 calls at once, 7,000 asynchronous
// requests an hour, 20 checks a second). Every figure is simulated
// service time; the metrics repeat the burst's throughput (audio hours
// per hour) and p95 (minutes), and the 100,000 run's p95 of voice notes
// of up to 30 s (seconds). It runs only with -load (make bench-load): it
// takes minutes, not seconds.
func BenchmarkLoad(b *testing.B) {
	if !*load {
		b.Skip("the load model runs with -load: make bench-load")
	}
	recs := loadsim.Mixed(loadsim.DefaultMix, 1000, time.Minute, 1)
	modes := []loadsim.Mode{loadsim.Pieces, loadsim.OnePiece}
	var burst []loadsim.Report
	for _, m := range modes {
		r, err := loadsim.Run(loadsim.Config{Mode: m, Recordings: recs, Dir: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
		burst = append(burst, r)
	}
	fmt.Println("1,000 jobs uploaded within a minute:")
	if err := loadsim.Table(os.Stdout, burst...); err != nil {
		b.Fatal(err)
	}

	var labels []string
	var steady []loadsim.Report
	steadyRun := func(label string, perDay int, span time.Duration, cfg loadsim.Config) loadsim.Report {
		cfg.Recordings = loadsim.Mixed(loadsim.DefaultMix, int(float64(perDay)*span.Hours()/24), span, 2)
		cfg.Mode, cfg.Dir = loadsim.Pieces, b.TempDir()
		r, err := loadsim.Run(cfg)
		if err != nil {
			b.Fatal(err)
		}
		labels = append(labels, label)
		steady = append(steady, r)
		return r
	}
	for _, perDay := range []int{2000, 5000, 10000, 15000, 20000, 30000} {
		steadyRun(fmt.Sprintf("%d/day", perDay), perDay, 3*time.Hour, loadsim.Config{})
		if perDay == 10000 || perDay == 15000 {
			steadyRun(fmt.Sprintf("%d/day, no sync", perDay), perDay, 3*time.Hour, loadsim.Config{NoSync: true})
		}
	}
	fmt.Println("\nSteady loads, uploaded evenly for three hours, in pieces:")
	if err := loadsim.Lines(os.Stdout, labels, steady); err != nil {
		b.Fatal(err)
	}

	// The month's recognition cost of the mix with the synchronous door
	// at SpeechKit's 30 s and at one unit's 15 s: a note of 16–30 s is
	// billed 30 s synchronously, its length asynchronously.
	labels, steady = nil, nil
	for _, sync := range []time.Duration{30 * time.Second, 15 * time.Second} {
		steadyRun(fmt.Sprintf("2000/day, sync ≤%s", sync), 2000, 3*time.Hour, loadsim.Config{SyncMaxDuration: sync})
	}
	steadyRun("2000/day, no sync", 2000, 3*time.Hour, loadsim.Config{NoSync: true})
	fmt.Println("\nThe month's recognition cost of the mix at 2,000 jobs a day, by SPEECHKIT_SYNC_MAX_DURATION (default prices):")
	if err := loadsim.Costs(os.Stdout, labels, 3*time.Hour, steady); err != nil {
		b.Fatal(err)
	}

	labels, steady = nil, nil
	raised := steadyRun("100000/day", 100000, time.Hour, loadsim.Config{CallSlots: 30, RequestsPerHour: 7000, ChecksPerSecond: 20})
	fmt.Println("\n100,000 jobs a day for an hour, with 30 calls at once, 7,000 requests an hour and 20 checks a second:")
	if err := loadsim.Lines(os.Stdout, labels, steady); err != nil {
		b.Fatal(err)
	}
	if err := loadsim.Table(os.Stdout, raised); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(burst[0].Throughput, "pieces-audio-h/h")
	b.ReportMetric(burst[0].P95.Minutes(), "pieces-p95-min")
	b.ReportMetric(burst[1].Throughput, "one-piece-audio-h/h")
	b.ReportMetric(burst[1].P95.Minutes(), "one-piece-p95-min")
	b.ReportMetric(raised.Classes[0].P95.Seconds(), "100k-voice-sync-p95-s")
	b.ReportMetric(5, "goal-voice-p95-s")
}

// BenchmarkLongWall is the time to transcript of a 1 h and a 6 h
// recording (M4A, converted at 95× real time) alone on an idle
// installation, cut in pieces against one piece per 3 h 50 min, in
// simulated minutes: one-piece-ratio is pieces over one piece, whose goal
// is at most 0.25 (goal-max-ratio).
func BenchmarkLongWall(b *testing.B) {
	for _, d := range []time.Duration{time.Hour, 6 * time.Hour} {
		b.Run(fmt.Sprintf("%.0fh", d.Hours()), func(b *testing.B) {
			var took [2]time.Duration
			for i, m := range []loadsim.Mode{loadsim.Pieces, loadsim.OnePiece} {
				r, err := loadsim.Run(loadsim.Config{Mode: m, Dir: b.TempDir(),
					Recordings: []loadsim.Recording{{Class: "long", Duration: d}}})
				if err != nil {
					b.Fatal(err)
				}
				if r.Done != 1 {
					b.Fatalf("%s: the recording did not end done: %+v", m, r.FailedBy)
				}
				took[i] = r.P50
			}
			b.ReportMetric(took[0].Minutes()/took[1].Minutes(), "one-piece-ratio")
			b.ReportMetric(0.25, "goal-max-ratio")
			b.ReportMetric(took[0].Minutes(), "pieces-min")
			b.ReportMetric(took[1].Minutes(), "one-piece-min")
		})
	}
}
