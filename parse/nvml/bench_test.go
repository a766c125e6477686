package nvml

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// benchRows is the size of the benchmark's --query-gpu log.
const benchRows = 1_000_000

// queryGPULog returns a 1,000,000-row --query-gpu CSV log in the layout
// of testdata/nvml/query_gpu.csv (11 fields, units, 8 GPUs interleaved,
// 250 ms apart), made once and kept under os.TempDir(); it is never
// committed.
func queryGPULog(b *testing.B) []byte {
	b.Helper()
	path := filepath.Join(os.TempDir(), fmt.Sprintf("gpuleak-bench-query-gpu-%d.csv", benchRows))
	if data, err := os.ReadFile(path); err == nil && bytes.Count(data, []byte("\n")) == benchRows+1 {
		return data
	}
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	fmt.Fprintln(w, "timestamp, index, uuid, name, pci.bus_id, memory.total [MiB], memory.used [MiB], memory.free [MiB], memory.reserved [MiB], utilization.gpu [%], utilization.memory [%]")
	t0 := time.Date(2026, 11, 30, 8, 6, 12, 696e6, time.UTC)
	for i := 0; i < benchRows; i++ {
		gpu := i % 8
		tick := time.Duration(i/8) * 250 * time.Millisecond
		used := (i/8)%4096 + gpu*1000
		fmt.Fprintf(w, "%s, %d, GPU-f7fe13ab-e2ff-251e-34e3-f58c08f1777%d, NVIDIA H200, 00000000:%02X:00.0, 143771 MiB, %d MiB, %d MiB, 616 MiB, %d %%, %d %%\n",
			t0.Add(tick).Format("2006/01/02 15:04:05.000"), gpu, gpu, 0x18+gpu, used, 143771-616-used, i%100, i%37)
	}
	w.Flush()
	data := buf.Bytes()
	_ = os.WriteFile(path, data, 0o644) // a cache: failing to write it only costs time
	return data
}

// BenchmarkQueryGPU reads a 1,000,000-row --query-gpu log; MB/s is the
// parser's throughput (aim: at least 100 MB/s).
func BenchmarkQueryGPU(b *testing.B) {
	data := queryGPULog(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rd := NewReader(bytes.NewReader(data), "bench.csv")
		var rows int64
		for rd.Next() {
			rows += rd.RecordBatch().NumRows()
		}
		if err := rd.Err(); err != nil || rows != benchRows {
			b.Fatalf("%d rows: %v", rows, err)
		}
		rd.Release()
	}
}
