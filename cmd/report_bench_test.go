package cmd

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// benchMix is what each job of the benchmark's fleet holds: testdata's
// real artifacts, copied (a hard link would be a second name of one file,
// which the walk reads once).
var benchMix = []string{
	"pytorch/model_reload.pickle", "pytorch/oom_observer.pickle", "pytorch/oom_error.txt",
	"pytorch/memory_stats.json", "nvml/query_gpu.csv", "nvml/query_apps.csv", "nvml/dmon.txt",
	"sanitizer/leak_full.txt", "pytorch/fragmentation_oom_error.txt", "nvml/pmon.txt",
}

// benchFleet lays out n files as host-H/job-J/NAME (10 files a job, 100
// jobs a host), cycling through benchMix.
func benchFleet(b *testing.B, n int) string {
	b.Helper()
	root := b.TempDir()
	for i := range n {
		job, host := i/len(benchMix), i/(len(benchMix)*100)
		dir := filepath.Join(root, fmt.Sprintf("host-%d/job-%d", host, job))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		// Copies, not links: the walk reads a file with two names once.
		src := td + benchMix[i%len(benchMix)]
		data, err := os.ReadFile(src)
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(src)), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return root
}

// BenchmarkReport is gpuleak report over a fleet of 1,000, 3,000 and
// 10,000 files: files/s, and the peak of the Go heap in use (sampled every
// 5 ms), which should stay flat as the count grows.
//
//	go test ./cmd -run '^$' -bench BenchmarkReport -benchtime 1x
func BenchmarkReport(b *testing.B) {
	for _, n := range []int{1000, 3000, 10000} {
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			root := benchFleet(b, n)
			out := filepath.Join(b.TempDir(), "r.json")
			runtime.GC()
			var peak atomic.Uint64
			stop := make(chan struct{})
			var wg sync.WaitGroup
			wg.Go(func() {
				var ms runtime.MemStats
				t := time.NewTicker(5 * time.Millisecond)
				defer t.Stop()
				for {
					runtime.ReadMemStats(&ms)
					if ms.HeapInuse > peak.Load() {
						peak.Store(ms.HeapInuse)
					}
					select {
					case <-stop:
						return
					case <-t.C:
					}
				}
			})
			b.ResetTimer()
			cpu0 := cpuSeconds(syscall.RUSAGE_SELF)
			start := time.Now()
			for range b.N {
				ios := &IOStreams{Out: os.Stdout, ErrOut: os.Stderr}
				opts := &ReportOptions{IO: ios, Version: "bench", Roots: []string{root}, Output: out, TZ: "UTC", Tolerance: "10%", GroupBy: "{host}/{job}/..."}
				if err := runReport(opts); err != nil {
					b.Fatal(err)
				}
			}
			elapsed := time.Since(start)
			cpu := cpuSeconds(syscall.RUSAGE_SELF) - cpu0
			b.StopTimer()
			close(stop)
			wg.Wait()
			b.ReportMetric(float64(n*b.N)/elapsed.Seconds(), "files/s")
			b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MiB")
			b.ReportMetric(0, "ns/op")
			b.ReportMetric(elapsed.Seconds()/float64(b.N), "s/report")
			b.ReportMetric(cpu*1e3/float64(n*b.N), "cpu-ms/file")
		})
	}
}
