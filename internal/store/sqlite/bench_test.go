package sqlite_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/clock"
	"transcriber/internal/clock/clocktest"
	"transcriber/internal/job"
	"transcriber/internal/store/sqlite"
)

// benchJobs is how many due jobs each measurement drains.
const benchJobs = 2000

// BenchmarkClaims measures claims per second on the embedded store with 1
// and with 16 concurrent claimers, by id (the upload event) and by due
// selection (the poll sweep), and reports the 16-to-1 ratio of each:
// SQLite admits one writer at a time, so more claimers share one queue
// rather than add throughput. Run with `make bench`.
func BenchmarkClaims(b *testing.B) {
	for i := 0; i < b.N; i++ {
		for _, mode := range []string{"id", "due"} {
			one := measureClaims(b, mode, 1)
			many := measureClaims(b, mode, 16)
			b.ReportMetric(one, "claims/s-"+mode+"-1")
			b.ReportMetric(many, "claims/s-"+mode+"-16")
			b.ReportMetric(many/one, "ratio-"+mode+"-16/1")
		}
	}
}

func measureClaims(b *testing.B, mode string, claimers int) float64 {
	b.Helper()
	ctx := context.Background()
	clk := clocktest.NewFake(time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC))
	st := sqlite.NewJobStore(openDB(b, clk))
	ids := make(chan string, benchJobs)
	for i := 0; i < benchJobs; i++ {
		j, err := st.Create(ctx, job.Draft{Source: job.SourceAPI, OwnerID: "bench"}) // due at once
		require.NoError(b, err)
		ids <- j.ID
	}
	close(ids)

	var claimed atomic.Int64
	var wg sync.WaitGroup
	b.StartTimer()
	start := clock.System().Now()
	for c := 0; c < claimers; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if mode == "id" {
				for id := range ids {
					_, err := st.Claim(ctx, id, job.Ingest)
					require.NoError(b, err)
					claimed.Add(1)
				}
				return
			}
			for {
				got, err := st.ClaimDue(ctx, job.Ingest, 1)
				require.NoError(b, err)
				if len(got) == 0 {
					return
				}
				claimed.Add(1)
			}
		}()
	}
	wg.Wait()
	elapsed := clock.System().Now().Sub(start)
	b.StopTimer()
	require.Equal(b, int64(benchJobs), claimed.Load())
	return float64(benchJobs) / elapsed.Seconds()
}
