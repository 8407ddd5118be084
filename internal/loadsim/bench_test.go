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
// of 2,000 to 15,000 jobs a day of the same mix, uploaded evenly for
// three hours, one line per run: where each limit starts to bind. Every
// figure is simulated service time; the metrics repeat the burst's
// throughput (audio hours per hour) and p95 (minutes). It runs only with
// -load (make bench-load): it takes minutes, not seconds.
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
	for _, perDay := range []int{2000, 5000, 10000, 15000} {
		span := 3 * time.Hour
		recs := loadsim.Mixed(loadsim.DefaultMix, int(float64(perDay)*span.Hours()/24), span, 2)
		for _, m := range modes {
			r, err := loadsim.Run(loadsim.Config{Mode: m, Recordings: recs, Dir: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			labels = append(labels, fmt.Sprintf("%d/day", perDay))
			steady = append(steady, r)
		}
	}
	fmt.Println("\nSteady loads, uploaded evenly for three hours:")
	if err := loadsim.Lines(os.Stdout, labels, steady); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(burst[0].Throughput, "pieces-audio-h/h")
	b.ReportMetric(burst[0].P95.Minutes(), "pieces-p95-min")
	b.ReportMetric(burst[1].Throughput, "one-piece-audio-h/h")
	b.ReportMetric(burst[1].P95.Minutes(), "one-piece-p95-min")
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
