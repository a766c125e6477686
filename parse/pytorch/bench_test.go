package pytorch

import (
	"bytes"
	"io"
	"os"
	"syscall"
	"testing"

	"github.com/gpuleak/gpuleak/parse"
)

// BenchmarkReaderBigReal streams ../shared/bench/big_real.pickle.gz (a
// GPT-2 training run PyTorch wrote: 949k trace entries, 83 MB unpacked),
// unpacked into memory first, through the Reader alone: the pickle VM and
// the conversion to Arrow, without gzip or analysis. MB/s is of the
// unpacked size. GPULEAK_BENCH_REAL overrides the path.
func BenchmarkReaderBigReal(b *testing.B) {
	path := os.Getenv("GPULEAK_BENCH_REAL")
	if path == "" {
		path = "../../../shared/bench/big_real.pickle.gz"
	}
	in, err := parse.Open(path, nil)
	if err != nil {
		b.Skipf("%v: the real benchmark snapshot is not here", err)
	}
	data, err := io.ReadAll(in.Reader())
	in.Close()
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuSeconds()
	for i := 0; i < b.N; i++ {
		r := NewReader(bytes.NewReader(data), "big_real", WithAllocator(parse.NewRecyclingAllocator(64<<20)))
		for r.Next() {
		}
		if err := r.Err(); err != nil {
			b.Fatal(err)
		}
		r.Release()
	}
	b.ReportMetric((cpuSeconds()-cpu0)/float64(b.N), "cpu-s/op")
}

// cpuSeconds is this process's user and system CPU time: on a shared
// machine it varies less than wall time.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime)
}
