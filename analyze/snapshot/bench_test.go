package snapshot

import (
	"os"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/gpuleak/gpuleak/parse"
	"github.com/gpuleak/gpuleak/parse/pytorch"
)

// BenchmarkAnalyzerReal times the analyses alone (Analyzer.Add of every
// batch, then Finalize) on a snapshot read once beforehand, batches in
// the order the Reader streamed them: what the analysis goroutine does,
// without the decoder's time and noise. GPULEAK_BENCH_SNAPSHOT names the
// snapshot (skipped when unset), such as the many-segments file of
// bench/HISTORY.md. finalize-ms/op is Finalize's wall time: the serial
// tail after the stream.
func BenchmarkAnalyzerReal(b *testing.B) {
	path := os.Getenv("GPULEAK_BENCH_SNAPSHOT")
	if path == "" {
		b.Skip("GPULEAK_BENCH_SNAPSHOT is not set")
	}
	in, err := parse.Open(path, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer in.Close()
	r := pytorch.NewReader(in.Reader(), path)
	defer r.Release()
	type batch struct {
		t   pytorch.Table
		rec arrow.RecordBatch
	}
	var batches []batch
	for r.Next() {
		rec := r.RecordBatch()
		rec.Retain()
		batches = append(batches, batch{r.Table(), rec})
	}
	if err := r.Err(); err != nil {
		b.Fatal(err)
	}
	defer func() {
		for _, x := range batches {
			x.rec.Release()
		}
	}()
	b.ReportAllocs()
	b.ResetTimer()
	var fin time.Duration
	for i := 0; i < b.N; i++ {
		a := NewAnalyzer(LeakOptions{})
		for _, x := range batches {
			if err := a.Add(x.t, x.rec); err != nil {
				b.Fatal(err)
			}
		}
		t0 := time.Now()
		a.Finalize()
		fin += time.Since(t0)
	}
	b.ReportMetric(float64(fin.Microseconds())/1000/float64(b.N), "finalize-ms/op")
}
