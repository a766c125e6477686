package sanitizer

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/gpuleak/gpuleak/bench/benchgen"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gpuleak/gpuleak/parse"
)

// BenchmarkReadText reads the largest real log (18 KiB, 187 lines).
func BenchmarkReadText(b *testing.B) {
	data, _ := os.ReadFile("../../testdata/sanitizer/leak_cupy.txt")
	for i := 0; i < b.N; i++ {
		r := NewReader(bytes.NewReader(data), "b")
		for r.Next() {
		}
		r.Release()
	}
}

// ciLog generates about size bytes of a CI job's log that holds no
// compute-sanitizer output: timestamped build, test and training lines of
// the kinds CI systems print (punctuation, brackets, "=====" rulers,
// "ERROR"/"Leaked" words in prose), so that the prefix learner sees every
// near miss on every line.
func ciLog(size int) []byte {
	lines := []string{
		"2026-11-30T01:02:03.4567890Z ##[group]Run make test",
		"2026-11-30T01:02:03.4567890Z ============================= test session starts ==============================",
		"2026-11-30T01:02:03.4567890Z tests/test_model.py::test_forward[bf16-cuda:0] PASSED                   [ 42%%]",
		"2026-11-30T01:02:03.4567890Z [rank0]: Epoch 3 step %d | loss 0.4312 | lr 3.0e-04 | 812.5 samples/s",
		"2026-11-30T01:02:03.4567890Z   File \"/opt/venv/lib/python3.12/site-packages/torch/nn/modules/module.py\", line 1751, in _call_impl",
		"2026-11-30T01:02:03.4567890Z WARNING: Leaked semaphore objects to clean up at shutdown (%d)",
		"2026-11-30T01:02:03.4567890Z --- ERROR SUMMARY of the linter: 0 problems ---",
		"2026-11-30T01:02:03.4567890Z gcc -O2 -Wall -c -o build/obj/kernel_%d.o src/kernel.cu && echo ok",
	}
	var b bytes.Buffer
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, lines[i%len(lines)]+"\n", i)
	}
	return b.Bytes()
}

// BenchmarkScanUnrecognisedText reads a 16 MiB CI log that holds no
// compute-sanitizer output, as "gpuleak analyze" does with a long log no
// format claims by its first bytes; MB/s is of the log's size.
func BenchmarkScanUnrecognisedText(b *testing.B) {
	data := ciLog(16 << 20)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r := NewReader(bytes.NewReader(data), "ci.log")
		for r.Next() {
		}
		if err := r.Err(); !errors.Is(err, parse.ErrNotMine) {
			b.Fatalf("want not-mine, got %v", err)
		}
		r.Release()
	}
}

// leakLog is benchgen.SanitizerLeakLog of the real logs in
// ../../testdata/sanitizer and ../../../shared/fixtures/sanitizer: about
// size bytes, and its number of records.
func leakLog(tb testing.TB, size int) ([]byte, int) {
	tb.Helper()
	log, n := benchgen.SanitizerLeakLog([]string{"../../testdata/sanitizer", "../../../shared/fixtures/sanitizer"}, size)
	if n == 0 {
		tb.Skip("no compute-sanitizer logs to build the benchmark's log from")
	}
	return log, n
}

// BenchmarkReadLeakLog reads a 128 MiB (benchLogSize) leak log made by leakLog from real
// records (about 100k records): MB/s of the log, allocations, and the
// peak of the Go heap in MiB (peak-heap-MiB, sampled every millisecond).
func BenchmarkReadLeakLog(b *testing.B) {
	data, nrec := leakLog(b, benchLogSize())
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	peak := startPeakSampler()
	for i := 0; i < b.N; i++ {
		r := NewReader(bytes.NewReader(data), "bench.txt")
		var rows int64
		for r.Next() {
			if r.Table() == TableRecords {
				rows += r.RecordBatch().NumRows()
			}
		}
		if err := r.Err(); err != nil || rows != int64(nrec) {
			b.Fatalf("%d records of %d: %v", rows, nrec, err)
		}
		r.Release()
	}
	b.StopTimer()
	b.ReportMetric(float64(peak.stop())/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(nrec), "records")
}

// peakSampler records the peak of the Go heap's in-use bytes, sampled every
// millisecond.
type peakSampler struct {
	peak atomic.Uint64
	done chan struct{}
	wait chan struct{}
}

func startPeakSampler() *peakSampler {
	runtime.GC()
	s := &peakSampler{done: make(chan struct{}), wait: make(chan struct{})}
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	go func() {
		defer close(s.wait)
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(sample)
			if v := sample[0].Value.Uint64(); v > s.peak.Load() {
				s.peak.Store(v)
			}
			select {
			case <-s.done:
				return
			case <-t.C:
			}
		}
	}()
	return s
}

func (s *peakSampler) stop() uint64 {
	close(s.done)
	<-s.wait
	return s.peak.Load()
}

// benchLogSize is the size of the generated compute-sanitizer log: 128 MiB,
// or GPULEAK_BENCH_MIB MiB (smaller for counting instructions under
// cachegrind).
func benchLogSize() int {
	if n, err := strconv.Atoi(os.Getenv("GPULEAK_BENCH_MIB")); err == nil && n > 0 {
		return n << 20
	}
	return 128 << 20
}
