package sanitizer

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
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

// leakLog generates a compute-sanitizer --leak-check full log of about
// size bytes from the records of real logs: every "Leaked", "Invalid" and
// "Program hit" record of the compute-sanitizer logs in
// ../../testdata/sanitizer and ../../../shared/fixtures/sanitizer (those
// with the default prefix), repeated in turn, each leak at its own address
// (so that the run reads as one process) with its size varied, then the
// LEAK SUMMARY and ERROR SUMMARY that agree with the records. It returns
// the log and its number of records. Never committed.
func leakLog(tb testing.TB, size int) ([]byte, int) {
	tb.Helper()
	recs := realRecords(tb)
	var b bytes.Buffer
	b.WriteString("========= COMPUTE-SANITIZER\n")
	var n, leaks, leaked int64
	for i := 0; b.Len() < size; i++ {
		r := recs[i%len(recs)]
		if r.leak {
			sz := r.size + int64(i%7)*4096
			fmt.Fprintf(&b, "========= Leaked %s bytes at 0x%x%s\n", commas(sz), 0x7f0000000000+uint64(i)*0x200000, r.rest)
			leaks++
			leaked += sz
		} else {
			b.WriteString(r.first)
			b.WriteByte('\n')
		}
		b.WriteString(r.body)
		n++
	}
	fmt.Fprintf(&b, "========= LEAK SUMMARY: %s bytes leaked in %s allocations\n", commas(leaked), commas(leaks))
	fmt.Fprintf(&b, "========= ERROR SUMMARY: %s errors\n", commas(n))
	return b.Bytes(), int(n)
}

// realRecord is one record of a real log: its first line (for a leak, the
// size and the text after the address) and its other lines.
type realRecord struct {
	leak  bool
	first string
	size  int64
	rest  string
	body  string
}

func realRecords(tb testing.TB) []realRecord {
	tb.Helper()
	var files []string
	for _, dir := range []string{"../../testdata/sanitizer", "../../../shared/fixtures/sanitizer"} {
		m, _ := filepath.Glob(filepath.Join(dir, "*.txt"))
		files = append(files, m...)
	}
	leakRe := regexp.MustCompile(`^========= Leaked ([\d,]+) bytes at 0x[0-9a-f]+(.*)$`)
	var recs []realRecord
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil || !bytes.HasPrefix(data, []byte("========= COMPUTE-SANITIZER\n")) {
			continue
		}
		lines := strings.Split(string(data), "\n")
		for i := 0; i < len(lines); i++ {
			l := lines[i]
			if !strings.HasPrefix(l, "========= Leaked ") && !strings.HasPrefix(l, "========= Invalid ") && !strings.HasPrefix(l, "========= Program hit ") {
				continue
			}
			r := realRecord{first: l}
			if m := leakRe.FindStringSubmatch(l); m != nil {
				r.leak, r.rest = true, m[2]
				r.size, _ = strconv.ParseInt(strings.ReplaceAll(m[1], ",", ""), 10, 64)
			}
			var body strings.Builder
			for i++; i < len(lines) && strings.HasPrefix(lines[i], "=========  "); i++ {
				body.WriteString(lines[i] + "\n")
			}
			body.WriteString("========= \n")
			r.body = body.String()
			recs = append(recs, r)
		}
	}
	if len(recs) == 0 {
		tb.Skip("no compute-sanitizer logs to build the benchmark's log from")
	}
	return recs
}

func commas(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
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
