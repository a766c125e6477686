package capture

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/gpuleak/gpuleak/analyze"
	"github.com/gpuleak/gpuleak/parse"
	"github.com/gpuleak/gpuleak/parse/nvml"
)

const mib = 1 << 20

// leakTicks simulates what NVML shows while a process leaks 64 MiB every
// 0.5 s (128 MiB/s) on an H200: a GPU sample per tick at period µs, the
// process's memory over a 512 MiB CUDA context.
func leakTicks(n int, periodUs int64) [][]GPUSample {
	const total, reserved = 150754820096, 644939776
	t0 := int64(1796025972_000000)
	var ticks [][]GPUSample
	for i := range n {
		t := t0 + int64(i)*periodUs
		steps := (t - t0) / 500_000
		proc := int64(512*mib) + steps*64*mib
		g := GPUSample{TimeUs: t, Host: "node1", Index: 0, UUID: "GPU-f7fe13ab-e2ff-251e-34e3-f58c08f17771",
			Name: "NVIDIA H200", MemoryInfo: 2, TotalBytes: total, ReservedBytes: reserved,
			UsedBytes: proc + 4*mib, FreeBytes: total - reserved - proc - 4*mib,
			Processes: []Process{{PID: 4242, Name: "python3", UsedBytes: proc, HasUsed: true, Type: "compute"}}}
		ticks = append(ticks, []GPUSample{g})
	}
	return ticks
}

// The file a capture writes is an NVML log gpuleak reads: the pynvml
// layout, by content; one GPU row and one process row per tick; the
// reservation taken out of used (NVML v2); and the trend analysis finds
// the simulated leak's 128 MiB/s.
func TestWriterRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "samples.jsonl")
	w := NewWriter(path, Rotation{})
	ticks := leakTicks(41, 500_000) // 20 s at 0.5 s
	for _, tk := range ticks {
		if err := w.WriteTick(tk); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if f := nvml.Sniff(b); f != parse.FormatPynvmlJSONL {
		t.Fatalf("sniffed as %v, want %v", f, parse.FormatPynvmlJSONL)
	}
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	r := nvml.NewReader(bytes.NewReader(b), path, nvml.WithAllocator(mem))
	a := analyze.NewTrendAnalyzer(analyze.TrendOptions{})
	for r.Next() {
		if err := a.Add(path, r.RecordBatch()); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	m := r.Metadata()
	r.Release()
	if m.Rows != int64(2*len(ticks)) {
		t.Errorf("rows = %d, want %d (a GPU and a process row per tick)", m.Rows, 2*len(ticks))
	}
	a.Input(path, m.FirstUs, m.LastUs)
	res := a.Finalize()
	var proc, gpu *analyze.SeriesTrend
	for i := range res.Series {
		s := &res.Series[i]
		if s.HasPID {
			proc = s
		} else {
			gpu = s
		}
	}
	if proc == nil || gpu == nil {
		t.Fatalf("series %+v: want a GPU and a process", res.Series)
	}
	if proc.PID != 4242 || proc.Process != "python3" || proc.Class != analyze.Growing {
		t.Errorf("process series: pid %d %q %s, want 4242 python3 growing", proc.PID, proc.Process, proc.Class)
	}
	if got := proc.Slope / mib; math.Abs(got-128) > 128*0.1 {
		t.Errorf("process slope %.1f MiB/s, want 128 +- 10%%", got)
	}
	if gpu.Convention != string(nvml.ExcludesReserved) || gpu.FirstBytes != 516*mib {
		t.Errorf("GPU series: %s, first %d bytes; want excludes-reserved and 516 MiB (v2 used)", gpu.Convention, gpu.FirstBytes)
	}
}
