package s3_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/storage/s3"
)

// BenchmarkUploadMemory uploads 64 MiB from a generator and reports what the
// upload holds: peak-heap-MiB is the highest HeapInuse seen above the
// starting one, alloc-MiB/op is what one upload allocates in all (the part
// buffers: it does not grow with the size), and bound-MiB is the bound
// Config.Concurrency documents, (Concurrency+1) x PartSize. The server discards what it receives, so its memory does not
// count. It prints numbers; it asserts nothing about them.
//
//	go test -run '^$' -bench UploadMemory -benchtime 1x ./internal/storage/s3/
func BenchmarkUploadMemory(b *testing.B) {
	const size = 64 * mib
	for _, tc := range []struct {
		part int64
		conc int
	}{
		{s3.DefaultPartSize, s3.DefaultConcurrency},
		{s3.MinPartSize, 4},
	} {
		b.Run(fmt.Sprintf("part=%dMiB/concurrency=%d", tc.part/mib, tc.conc), func(b *testing.B) {
			srv := httptest.NewServer(discardS3())
			b.Cleanup(srv.Close)
			st, err := s3.Tuned(s3.Config{
				Endpoint: srv.URL, Bucket: "bench", AccessKeyID: "id", SecretAccessKey: "secret", PathStyle: true,
			}, tc.part, tc.conc, 0, nil)
			require.NoError(b, err)

			var peak, allocated uint64
			b.SetBytes(size)
			b.ResetTimer()
			for range b.N {
				p, a := measure(func() {
					n, err := st.Upload(context.Background(), "big", newGen(size), "")
					require.NoError(b, err)
					require.Equal(b, int64(size), n)
				})
				peak, allocated = max(peak, p), allocated+a
			}
			b.ReportMetric(float64(peak)/mib, "peak-heap-MiB")
			b.ReportMetric(float64(allocated)/float64(b.N)/mib, "alloc-MiB/op")
			b.ReportMetric((float64(tc.conc)+1)*float64(tc.part)/mib, "bound-MiB")
		})
	}
}

// measure runs fn and returns the peak HeapInuse above the start (sampled
// every millisecond) and the bytes allocated meanwhile.
func measure(fn func()) (peak, allocated uint64) {
	runtime.GC()
	var start runtime.MemStats
	runtime.ReadMemStats(&start)

	var top atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapInuse > top.Load() {
				top.Store(m.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	fn()
	close(stop)
	wg.Wait()

	var end runtime.MemStats
	runtime.ReadMemStats(&end)
	if t := top.Load(); t > start.HeapInuse {
		peak = t - start.HeapInuse
	}
	return peak, end.TotalAlloc - start.TotalAlloc
}

// discardS3 answers just enough of S3 for an upload, keeping nothing.
func discardS3() http.Handler {
	var ids atomic.Int64
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		q := r.URL.Query()
		switch {
		case r.Method == http.MethodPost && q.Has("uploads"):
			_, _ = fmt.Fprintf(w, `<InitiateMultipartUploadResult><Bucket>bench</Bucket><Key>big</Key>`+
				`<UploadId>u%d</UploadId></InitiateMultipartUploadResult>`, ids.Add(1))
		case r.Method == http.MethodPost && q.Has("uploadId"):
			_, _ = fmt.Fprint(w, `<CompleteMultipartUploadResult><ETag>"done"</ETag></CompleteMultipartUploadResult>`)
		case r.Method == http.MethodPut:
			w.Header().Set("ETag", `"part"`)
		case r.Method == http.MethodDelete:
			w.WriteHeader(http.StatusNoContent)
		default:
			w.WriteHeader(http.StatusNotImplemented)
		}
	})
}
