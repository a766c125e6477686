package cmd

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"github.com/gpuleak/gpuleak/bench/benchgen"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gpuleak/gpuleak/parse"
)

// BenchmarkAnalyzeSnapshot runs `gpuleak analyze --format json` on the
// scaler's snapshots (bench/scale_snapshot.py on
// testdata/pytorch/leak_train_loop.pickle; `make bench-data` writes the
// 100k and 1M ones, `make bench-data-10m` the 10M one) in process (parse,
// analyze and report), and, as the baseline of the same run, CPython's
// pickle.load of the same file in a child process (its interpreter
// start-up, about 20 ms, included). MB/s is of the file's size; cpu-s/op
// is user+system CPU time (of this process, or of the child); peak-MiB is
// the peak of the memory the Go runtime holds (in process) or the child's
// maximum resident set size (CPython). A size whose file is missing is
// skipped. GPULEAK_BENCH_SNAPSHOT names one more file to run as "file".
func BenchmarkAnalyzeSnapshot(b *testing.B) {
	sizes := []struct{ name, path string }{
		{"100k", "../.bench/snapshot_100k.pickle"},
		{"1M", "../.bench/snapshot_1m.pickle"},
		{"10M", "../.bench/snapshot_10m.pickle"},
	}
	if p := os.Getenv("GPULEAK_BENCH_SNAPSHOT"); p != "" {
		sizes = append(sizes, struct{ name, path string }{"file", p})
	}
	for _, sz := range sizes {
		b.Run(sz.name, func(b *testing.B) {
			st, err := os.Stat(sz.path)
			if err != nil {
				b.Skipf("%v: run `make bench-data` first", err)
			}
			benchAnalyzeSnapshot(b, sz.path, st.Size())
		})
	}
}

// BenchmarkAnalyzeBigReal is BenchmarkAnalyzeSnapshot on a snapshot
// PyTorch itself wrote: ../shared/bench/big_real.pickle.gz (a GPT-2
// training run, 949k trace entries, 83 MB unpacked, 6.4 MB gzipped; MB/s
// is of the unpacked size). GPULEAK_BENCH_REAL overrides the path (an
// unpacked file is read as it is).
func BenchmarkAnalyzeBigReal(b *testing.B) {
	path := os.Getenv("GPULEAK_BENCH_REAL")
	if path == "" {
		path = "../../shared/bench/big_real.pickle.gz"
	}
	in, err := parse.Open(path, nil)
	if err != nil {
		b.Skipf("%v: the real benchmark snapshot is not here", err)
	}
	defer in.Close()
	size, err := io.Copy(io.Discard, in.Reader())
	if err != nil {
		b.Fatal(err)
	}
	benchAnalyzeSnapshot(b, path, size)
}

// benchAnalyzeSnapshot runs gpuleak and pickle.load on path, whose
// unpacked size is size.
func benchAnalyzeSnapshot(b *testing.B, path string, size int64) {
	b.Run("gpuleak", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		peak := startHeapSampler()
		defer peak.stop()
		cpu0 := cpuSeconds(syscall.RUSAGE_SELF)
		for i := 0; i < b.N; i++ {
			ios := &IOStreams{In: bytes.NewReader(nil), Out: io.Discard, ErrOut: io.Discard}
			if code := Main([]string{"analyze", "--format", "json", path}, ios, "bench"); code != ExitOK {
				b.Fatalf("exit %d", code)
			}
		}
		b.ReportMetric((cpuSeconds(syscall.RUSAGE_SELF)-cpu0)/float64(b.N), "cpu-s/op")
		b.ReportMetric(float64(peak.stop())/(1<<20), "peak-MiB")
	})
	b.Run("python-pickle.load", func(b *testing.B) {
		py, err := exec.LookPath("python3")
		if err != nil {
			b.Skip("no python3")
		}
		b.SetBytes(size)
		var maxRSS int64
		var cpu float64
		for i := 0; i < b.N; i++ {
			cmd := exec.CommandContext(context.Background(), py, "-c", "import gzip, pickle, sys; f = open(sys.argv[1], 'rb'); gz = f.read(2) == b'\\x1f\\x8b'; f.seek(0); pickle.load(gzip.GzipFile(fileobj=f) if gz else f)", path)
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("%v: %s", err, out)
			}
			if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
				maxRSS = max(maxRSS, int64(ru.Maxrss)) // KiB on Linux (int32 on 32-bit)
				cpu += tvSeconds(ru.Utime) + tvSeconds(ru.Stime)
			}
		}
		b.ReportMetric(cpu/float64(b.N), "cpu-s/op")
		b.ReportMetric(float64(maxRSS)/1024, "peak-MiB")
	})
}

// cpuSeconds is the user and system CPU time of who (RUSAGE_SELF), in
// seconds: on a shared machine it varies less than wall time.
func cpuSeconds(who int) float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(who, &ru); err != nil {
		return 0
	}
	return tvSeconds(ru.Utime) + tvSeconds(ru.Stime)
}

func tvSeconds(tv syscall.Timeval) float64 { return float64(tv.Sec) + float64(tv.Usec)/1e6 }

// heapSampler records the peak of the Go heap (live and not yet swept
// objects) and of all memory the Go runtime maps, sampled every millisecond.
type heapSampler struct {
	peak atomic.Uint64
	done chan struct{}
	wait chan struct{}
}

func startHeapSampler() *heapSampler {
	runtime.GC()
	s := &heapSampler{done: make(chan struct{}), wait: make(chan struct{})}
	samples := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	go func() {
		defer close(s.wait)
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(samples)
			// Mapped memory less what was returned to the OS: near RSS.
			used := samples[0].Value.Uint64() - samples[1].Value.Uint64()
			if used > s.peak.Load() {
				s.peak.Store(used)
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

func (s *heapSampler) stop() uint64 {
	select {
	case <-s.done:
	default:
		close(s.done)
		<-s.wait
	}
	return s.peak.Load()
}

// BenchmarkAnalyzeCILog runs "gpuleak analyze" in process on a generated
// 64 MiB CI log that no format claims (no OOM message, no sanitizer
// report): the whole log is scanned for an OOM message, then read again
// as a possible compute-sanitizer log. MB/s is of the log's size.
func BenchmarkAnalyzeCILog(b *testing.B) {
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
	var log bytes.Buffer
	for i := 0; log.Len() < 64<<20; i++ {
		fmt.Fprintf(&log, lines[i%len(lines)]+"\n", i)
	}
	path := filepath.Join(b.TempDir(), "ci.log")
	if err := os.WriteFile(path, log.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(log.Len()))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var out, errOut bytes.Buffer
		ios := &IOStreams{In: bytes.NewReader(nil), Out: &out, ErrOut: &errOut}
		if code := Main([]string{"analyze", path}, ios, "bench"); code != ExitInput || !bytes.Contains(errOut.Bytes(), []byte("unrecognised input format")) {
			b.Fatalf("exit %d, stderr %q: want the log unrecognised", code, errOut.String())
		}
	}
}

// BenchmarkAnalyzeSanitizerLog runs "gpuleak analyze --format json" in
// process on a 128 MiB (benchLogSize) compute-sanitizer leak log made from real records
// (sanitizerLeakLog, about 100k records): MB/s of the log, allocations,
// CPU seconds and the peak memory the Go runtime holds.
func BenchmarkAnalyzeSanitizerLog(b *testing.B) {
	data, _ := sanitizerLeakLog(b, benchLogSize())
	// Kept under os.TempDir() (never committed), for measuring the binary
	// on it: /usr/bin/time gpuleak analyze FILE.
	path := filepath.Join(os.TempDir(), fmt.Sprintf("gpuleak-bench-sanitizer-%dMiB.txt", len(data)>>20))
	if err := os.WriteFile(path, data, 0o644); err != nil {
		b.Fatal(err)
	}
	size := int64(len(data))
	data = nil
	// Return the log's memory (and the generator's) to the OS: the peak
	// sampled is of mapped memory not released, which would count it.
	debug.FreeOSMemory()
	benchAnalyzeFile(b, path, size)
}

// BenchmarkAnalyzeTrainingLog runs "gpuleak analyze --format json" in
// process on a generated 32 MiB training log (GPULEAK_BENCH_MIB sets
// another size) that ends in PyTorch's out-of-memory traceback: the
// progress lines a run prints, in four kinds (a bare "step N loss ..."
// line, a tqdm bar redrawn with "\r" as a terminal capture keeps it, the
// Hugging Face Trainer's dict behind a logger's stamp, Megatron-LM's
// "| ... |" iteration line behind torchrun's rank mark), every line read
// for a message. MB/s is of the log's size.
func BenchmarkAnalyzeTrainingLog(b *testing.B) {
	size := 32 << 20
	if n, err := strconv.Atoi(os.Getenv("GPULEAK_BENCH_MIB")); err == nil && n > 0 {
		size = n << 20
	}
	path := filepath.Join(b.TempDir(), "train.log")
	if err := writeTrainingLog(path, size); err != nil {
		b.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	benchAnalyzeFile(b, path, st.Size())
}

// writeTrainingLog writes BenchmarkAnalyzeTrainingLog's log of about
// size bytes to path.
func writeTrainingLog(path string, size int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	n := 0
	for i := 0; n < size; i++ {
		var k int
		switch i % 20 {
		case 0, 1, 2, 3, 4, 5, 6, 7, 8, 9:
			k, _ = fmt.Fprintf(w, "step %d loss %.4f lr %.3e grad_norm %.3f\n", i, float64(i%3000)/1000, 1e-4*float64(i%97)/97, float64(i%500)/100)
		case 10, 11, 12, 13:
			k, _ = fmt.Fprintf(w, "Epoch 3: %3d%%|%-10s| %d/1000 [00:%02d<01:23, 7.21it/s, loss=0.%04d, v_num=3]\r", i%100, strings.Repeat("#", i%10), i%1000, i%60, i%9999)
		case 14, 15, 16:
			k, _ = fmt.Fprintf(w, "2024-05-01 10:%02d:%02d,123 - INFO - transformers.trainer - {'loss': %.4f, 'learning_rate': 4.9e-05, 'epoch': %.2f}\n", (i/60)%60, i%60, float64(i%1000)/1000, float64(i)/1000)
		default:
			k, _ = fmt.Fprintf(w, "[rank%d]: iteration %d | consumed samples: %d | elapsed time per iteration (ms): 412.%d | learning rate: 1.000E-04 | global batch size: 32 | lm loss: 2.%03dE+00 | loss scale: 65536.0 | grad norm: 0.%d |\n", i%8, i, i*32, i%10, i%1000, i%99)
		}
		n += k
	}
	fmt.Fprint(w, `Traceback (most recent call last):
  File "train.py", line 120, in <module>
    loss.backward()
  File "/usr/lib/python3/site-packages/torch/_tensor.py", line 522, in backward
    torch.autograd.backward(
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.21 GiB is free. Process 1234 has 77.93 GiB memory in use. Of the allocated memory 74.10 GiB is allocated by PyTorch, and 2.31 GiB is reserved by PyTorch but unallocated.
`)
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// benchAnalyzeFile runs "gpuleak analyze --format json path" b.N times;
// size is the bytes read.
func benchAnalyzeFile(b *testing.B, path string, size int64) {
	runtime.GC()
	b.SetBytes(size)
	b.ReportAllocs()
	b.ResetTimer()
	peak := startHeapSampler()
	cpu0 := cpuSeconds(syscall.RUSAGE_SELF)
	for i := 0; i < b.N; i++ {
		ios := &IOStreams{In: bytes.NewReader(nil), Out: io.Discard, ErrOut: io.Discard}
		if code := Main([]string{"analyze", "--format", "json", path}, ios, "bench"); code != ExitOK && code != ExitFindings {
			b.Fatalf("exit %d", code)
		}
	}
	b.ReportMetric((cpuSeconds(syscall.RUSAGE_SELF)-cpu0)/float64(b.N), "cpu-s/op")
	b.ReportMetric(float64(peak.stop())/(1<<20), "peak-MiB")
}

// sanitizerLeakLog is benchgen.SanitizerLeakLog of the real logs in
// ../testdata/sanitizer and ../../shared/fixtures/sanitizer: about size
// bytes, and its number of records.
func sanitizerLeakLog(tb testing.TB, size int) ([]byte, int) {
	tb.Helper()
	log, n := benchgen.SanitizerLeakLog([]string{"../testdata/sanitizer", "../../shared/fixtures/sanitizer"}, size)
	if n == 0 {
		tb.Skip("no compute-sanitizer logs to build the benchmark's log from")
	}
	return log, n
}

// BenchmarkAnalyzeQueryGPU runs "gpuleak analyze --format json" in process
// on a 1,000,000-row nvidia-smi --query-gpu CSV log (8 GPUs interleaved,
// 250 ms apart, the layout of ../shared/fixtures/nvml/query_gpu.csv; made
// once under os.TempDir(), never committed): MB/s of the log.
// GPULEAK_BENCH_ROWS sets another number of rows (4000000 for the
// memory-per-series check: 500,000 samples a GPU, past the 131,072
// points a series keeps).
func BenchmarkAnalyzeQueryGPU(b *testing.B) {
	rows := 1_000_000
	if n, err := strconv.Atoi(os.Getenv("GPULEAK_BENCH_ROWS")); err == nil && n > 0 {
		rows = n
	}
	path := filepath.Join(os.TempDir(), fmt.Sprintf("gpuleak-bench-cmd-query-gpu-%d.csv", rows))
	st, err := os.Stat(path)
	if err != nil {
		if err := writeQueryGPULog(path, rows); err != nil {
			b.Fatal(err)
		}
		if st, err = os.Stat(path); err != nil {
			b.Fatal(err)
		}
	}
	benchAnalyzeFile(b, path, st.Size())
}

// writeQueryGPULog writes BenchmarkAnalyzeQueryGPU's log of rows rows to
// path (streamed: the 4M-row log is 620 MB).
func writeQueryGPULog(path string, rows int) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	fmt.Fprintln(w, "timestamp, index, uuid, name, pci.bus_id, memory.total [MiB], memory.used [MiB], memory.free [MiB], memory.reserved [MiB], utilization.gpu [%], utilization.memory [%]")
	t0 := time.Date(2026, 11, 30, 8, 6, 12, 696e6, time.UTC)
	for i := 0; i < rows; i++ {
		gpu := i % 8
		tick := time.Duration(i/8) * 250 * time.Millisecond
		used := (i/8)%4096 + gpu*1000
		if gpu == 3 {
			used = 2000 + i/64 // one GPU grows all along: a trend to find
		}
		fmt.Fprintf(w, "%s, %d, GPU-f7fe13ab-e2ff-251e-34e3-f58c08f1777%d, NVIDIA H200, 00000000:%02X:00.0, 143771 MiB, %d MiB, %d MiB, 616 MiB, %d %%, %d %%\n",
			t0.Add(tick).Format("2006/01/02 15:04:05.000"), gpu, gpu, 0x18+gpu, used, 143771-616-used, i%100, i%37)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
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
